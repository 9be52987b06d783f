"""Memory as a function of the scenes and their recorded extractions.

Every plan record (`plans/plan_NNN.yaml`) holds what its tick did to memory:
the planner's tool calls (run as they were, then the cast made sure of) and the
extractor's answer (`extraction`; none, or `extraction_fallback`, when it added
nothing); an imported piece instead introduces who its extraction names. So
memory after tick k is `replay` of records 1..k over the memory before tick 1,
and revising scene N re-derives the memory of every later tick from the memory
before N. Edits of memory by hand are not in any record: a re-derivation starts
from an entry of the history that holds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from novel_agent.audit.knowledge import apply_knowledge
from novel_agent.books.importer import create_cast
from novel_agent.config.settings import Config
from novel_agent.errors import FileFormatError
from novel_agent.files import read_yaml
from novel_agent.story.decisions import Extraction, Plan, ToolCall
from novel_agent.story.memory import Memory, find_person
from novel_agent.story.project import Project, Story
from novel_agent.story.scenes import load_scene
from novel_agent.text.names import name_problem
from novel_agent.tick.stages import extract
from novel_agent.tick.stages.tools import ensure_cast, run_tools


def plan_of(record: Mapping[str, Any]) -> Plan:
    """The Plan a record holds."""
    calls = [ToolCall(**{k: str(c.get(k) or "") for k in ("tool", "name", "target", "detail")})
             for c in record.get("tool_calls") or [] if isinstance(c, dict)]
    return Plan(intention=str(record.get("intention") or ""), pov=str(record.get("pov") or ""),
                location=str(record.get("location") or ""), title=str(record.get("title") or ""),
                characters=[str(c) for c in record.get("characters") or []], tool_calls=calls)


def extraction_of(record: Mapping[str, Any]) -> Extraction | None:
    """The extraction a record applied to memory, or None when it applied none."""
    data = record.get("extraction")
    if not isinstance(data, dict) or record.get("extraction_fallback"):
        return None
    return Extraction(summary=list(data.get("summary") or []), facts=list(data.get("facts") or []),
                      characters=list(data.get("characters") or []),
                      loops_opened=list(data.get("loops_opened") or []),
                      loops_resolved=list(data.get("loops_resolved") or []),
                      relationships=list(data.get("relationships") or []))


def read_record(project: Project, tick: int) -> dict[str, Any]:
    """Tick `tick`'s plan record (a FileFormatError naming the file when it is no record)."""
    path = project.plan_path(tick)
    record = read_yaml(path, None)
    if not isinstance(record, dict):
        raise FileFormatError("not a plan record (a mapping with the tick's plan and "
                              "extraction)", file=str(path))
    return record


def _check(story: Story):
    return lambda name: name_problem(name, title=story.title or story.name,
                                     premise=story.premise)


def before_extraction(memory: Memory, record: Mapping[str, Any], *, story: Story) -> None:
    """What tick `record` did to memory before its extractor was asked: the planner's
    tools, then the cast made sure of (an imported piece: nothing)."""
    if record.get("imported"):
        return
    plan, tick = plan_of(record), int(record["tick"])
    run_tools(memory, plan.tool_calls, tick, len(plan.tool_calls), _check(story))
    ensure_cast(memory, plan, tick, _check(story))


def apply_extraction(memory: Memory, record: Mapping[str, Any], extraction: Extraction | None,
                     *, story: Story, config: Config, body: str = "") -> list[str]:
    """What the extraction did (an imported piece first introduces who it names);
    what changed, one line each."""
    tick, gen, changes = int(record["tick"]), config.generation, []
    if extraction is None:
        return changes
    if record.get("imported") and gen.enable_entity_updates:
        changes += create_cast(memory, extraction, body, tick, _check(story))
    changes += extract.apply(memory, extraction, tick=tick, facts=gen.enable_fact_extraction,
                             entities=gen.enable_entity_updates)
    if gen.enable_entity_updates:        # what the tick's audit step recorded (audit/knowledge.py)
        plan = plan_of(record)
        changes += apply_knowledge(memory, extraction, tick=tick, location=plan.location,
                                   pov=plan.pov if find_person(memory, plan.pov) else "")
    return changes


def replay(memory: Memory, record: Mapping[str, Any], *, story: Story, config: Config,
           body: str = "") -> list[str]:
    """Apply one tick's record to `memory` (in place) as its tick did; what changed."""
    before_extraction(memory, record, story=story)
    return apply_extraction(memory, record, extraction_of(record), story=story, config=config,
                            body=body)


def replay_range(project: Project, memory: Memory, first: int, last: int,
                 config: Config) -> Memory:
    """`memory` (the memory before tick `first`) with ticks first..last replayed."""
    story = project.story()
    memory = memory.copy()
    for tick in range(first, last + 1):
        record = read_record(project, tick)
        body = load_scene(project.scene_path(tick)).body if record.get("imported") else ""
        replay(memory, record, story=story, config=config, body=body)
    return memory


