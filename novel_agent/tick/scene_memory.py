"""What a scene does to memory, step by step: the one code a tick and a replay share.

A tick changes memory in three steps, each here: the planner's tools and the cast made
sure of (`plan_step`), the extraction applied with the prose it was read from
(`extraction_step`), and what the continuity audit records (`knowledge_step`: status,
places, objects, witnesses, the clock). The tick runs them with its answers; a replay
(revision/rederive.py) runs them again with what the plan record kept, so memory
re-derived from the records is the memory the ticks wrote. Pure functions of memory.
"""

from __future__ import annotations

from collections.abc import Callable

from novel_agent.audit.clock import Clock, advance
from novel_agent.audit.knowledge import apply_knowledge
from novel_agent.config.settings import GenerationConfig
from novel_agent.story.decisions import Extraction, Plan
from novel_agent.story.memory.extraction import apply_extraction
from novel_agent.story.memory.store import Memory, cast_text, find_person
from novel_agent.story.project.folder import Story
from novel_agent.text.names import name_problem, person_problem
from novel_agent.tick.stages.tools import ensure_cast, plan_names, run_tools


def name_check(story: Story) -> Callable[[str], str | None]:
    """Why a name is not one for this book (its title, its premise's words: names.py)."""
    return lambda name: name_problem(name, title=story.title or story.name,
                                     premise=story.premise)


def person_check(memory: Memory, check: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """Why a name is not a person's (None for a character memory knows): `check`, then
    what ensure_cast asks of a newcomer (names.person_problem: "In the past" is a common
    noun, not a name), so a POV the tools would reject gives way before they run."""
    return lambda name: None if find_person(memory, name) is not None else \
        check(name) or person_problem(name)


def plan_step(memory: Memory, plan: Plan, tick: int, limit: int,
              check: Callable[[str], str | None]) -> list[str]:
    """The planner's tool calls (at most `limit`), then its POV, cast and place made sure
    of, in `memory` (in place); the tools' lines. A name one letter off a known
    character's full name is that character (store.variant_of), unless the plan names
    both spellings."""
    beside = cast_text(plan_names(plan, limit))
    return (run_tools(memory, plan.tool_calls, tick, limit, check, plan.pov, beside)
            + ensure_cast(memory, plan, tick, check, beside))


def extraction_step(memory: Memory, extraction: Extraction, *, tick: int, prose: str,
                    generation: GenerationConfig) -> list[str]:
    """The extraction applied (in place) as the switches of `generation` allow, checked
    against the prose it was read from; what changed, one line each."""
    return apply_extraction(memory, extraction, tick=tick, prose=prose,
                         facts=generation.enable_fact_extraction,
                         entities=generation.enable_entity_updates)


def knowledge_step(memory: Memory, extraction: Extraction, plan: Plan, tick: int,
                   clock: tuple[Clock | None, int], prose: str
                   ) -> tuple[list[str], tuple[Clock, int] | None]:
    """What the scene (`prose`) establishes for the continuity audit (in place), with
    `clock` the story's clock before it and the scene that set it: the changes, and the
    clock after it with the scene that set its time (None when the scene changed nothing
    of it: audit/clock.advance)."""
    changes = apply_knowledge(memory, extraction, tick=tick, location=plan.location,
                              pov=plan.pov if find_person(memory, plan.pov) else "")
    moved, scene = advance(*clock, extraction.clock, prose, tick)
    return changes, (moved, scene) if moved is not None and (moved, scene) != clock else None
