"""Stage 3, extract: read the new prose back into summary bullets and memory changes.

`STAGE` is the tick's extractor (tick/registry.py): its prompt built from the draft's
plan (as told: "unknown" where it names no POV or place) and prose, with what the
outline and the voice cards ask; the answer asked for (one the model could not make
usable, twice, gives a summary of the scene's own sentences: `from_prose`); then
guarded (no confusable newcomers, no loop opened in the final act) and applied to
memory (story/memory/extraction.py). The audit's revision applies its draft's answer the same way."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from novel_agent.errors import ModelResponseError
from novel_agent.models.ask import Room, StageCall, ask_json
from novel_agent.models.base import ChatModel
from novel_agent.story.decisions import Extraction, Plan, extract_schema, extraction_from_json
from novel_agent.story.memory.store import find_person, variant_lines
from novel_agent.story.memory.voices import wanting
from novel_agent.text.cleanup import sentences
from novel_agent.text.names import clean_bullets
from novel_agent.tick import book_names, payoff_step
from novel_agent.tick.draft import TickContext, TickDraft
from novel_agent.tick.registry import Stage
from novel_agent.tick.scene_memory import extraction_step
from novel_agent.tick.stage_prompts import Built, build_extractor


def run(model: ChatModel, messages: list[dict[str, str]], *, max_tokens: int,
        room: Room | None = None, knowledge: bool = True, beat: bool = False,
        tension: bool = False, opens: bool = True, voices: int = 0) -> tuple[Extraction, StageCall]:
    """Extract what the scene established, from the extractor's prompt (`room`: see
    ask_json); `knowledge=False` holds the answer to the keys without the continuity
    audit's (LEAN_EXTRACT_SCHEMA), as its prompt asks. In a book with an outline it is
    asked whether the planned beat happened (`beat`) and the scene's tension (`tension`);
    in its final act (`opens` off) its schema opens no loop; `voices`: the voice cards
    of that many people who speak and have none, as its prompt names them."""
    schema = extract_schema(knowledge, beat=beat, tension=tension, opens=opens, voices=voices)
    return ask_json(model, "extractor", messages, max_tokens, schema,
                    lambda data: extraction_from_json(data, beat=beat, tension=tension), room)


def from_prose(prose: str, *, max_words: int = 40) -> Extraction:
    """The stand-in when the extractor's answer cannot be used: the scene's first two
    sentences and its last as the summary (each at most `max_words` words), and no
    memory changes."""
    found = sentences(prose)
    picked = list(dict.fromkeys(found[:2] + found[-1:]))
    bullets = clean_bullets([_clip(text, max_words) for text in picked])
    return Extraction(summary=bullets or [_clip(" ".join(prose.split()), max_words)])


def _clip(text: str, max_words: int) -> str:
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]) + " …"


# -- the stage ---------------------------------------------------------------------

UNKNOWN = "unknown"   # what the extractor is told when the plan names no POV or place
VOICES_ASKED = (2, 1)    # voice cards an extractor is asked at most (a served, a local model)


def as_told(plan: Plan) -> Plan:
    """The plan as the extractor is told it: "unknown" where it names no POV or place."""
    return replace(plan, pov=plan.pov or UNKNOWN, location=plan.location or UNKNOWN)


def asked_of(ctx: TickContext, d: TickDraft, prose: str) -> dict[str, Any]:
    """What the extractor is asked beyond memory's changes: of the outline (a book with
    one), whether the beat the plan named happened and the scene's tension; and the voice
    cards of the scene's people who speak in `prose` and have none (story/memory/voices.py)."""
    at, plan = d.standing, d.planned
    people = [c for c in (find_person(d.memory, n) for n in dict.fromkeys(
        [plan.pov, *plan.characters]) if n) if c is not None]
    voices = wanting(people, prose, VOICES_ASKED[ctx.session.lean_for("extractor")]) \
        if ctx.config.generation.enable_entity_updates else []
    return {"beat": at.beat(plan.beat) if at else None, "tension": at is not None,
            "voices": voices}


def prompt_for(ctx: TickContext, d: TickDraft, prose: str) -> Built:
    """The extractor's prompt for `prose` as the draft's scene."""
    return build_extractor(ctx.session, story=d.story, memory=d.memory, plan=as_told(d.planned),
                           prose=prose, tick=d.tick, **asked_of(ctx, d, prose))


def build(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The draft with the extractor's prompt built."""
    return d.with_built(prompt_for(ctx, d, d.prose))


def answer(ctx: TickContext, d: TickDraft, built: Built, prose: str) -> tuple[Extraction, StageCall]:
    """The extractor's answer to `built` (the prompt of `prose`), as the draft asks it."""
    asked = asked_of(ctx, d, prose)
    budget = ctx.budget("extractor")
    return run(ctx.model(replace(d, prose=prose)), built.messages, max_tokens=budget.max_output,
               room=ctx.room("extractor", budget), knowledge=ctx.session.knowledge,
               beat=asked["beat"] is not None, tension=asked["tension"],
               opens=not payoff_step.closing(d.standing), voices=len(asked["voices"]))


def named_by(extraction: Extraction) -> list[str]:
    """The people an extraction names: its characters, then both of each relationship."""
    return [str(c.get("name", "")) for c in extraction.characters] + \
        [str(r.get(side, "")) for r in extraction.relationships for side in ("a", "b")]


@dataclass(frozen=True)
class Extracted:
    """The extractor's answer, or the stand-in made from the prose (`fallback`: why)."""

    extraction: Extraction
    fallback: str = ""


def ask(ctx: TickContext, d: TickDraft) -> tuple[Extracted, StageCall]:
    """The extractor's answer for the draft's prompt; one the model could not make
    usable, twice, is the scene's own sentences (the scene still lands)."""
    try:
        extraction, call = answer(ctx, d, d.built["extractor"], d.prose)
    except ModelResponseError as exc:
        if not isinstance(exc.call, StageCall):
            raise
        return Extracted(from_prose(d.prose), fallback=str(exc)), exc.call
    return Extracted(extraction), call


def apply(ctx: TickContext, d: TickDraft, got: Extracted, call: StageCall) -> TickDraft:
    """The draft with the answer guarded and applied to memory (see the module's
    docstring); where the audit may revise the scene, the draft before it is kept, its
    memory a copy (`undo`)."""
    if got.fallback:
        return replace(d, extraction=got.extraction, fallback=got.fallback).told(
            f"the extractor's answer could not be used ({got.fallback}); the scene's own "
            "sentences stand as its summary; nothing of the scene is added to memory")
    undo = replace(d, memory=d.memory.copy()) \
        if ctx.config.audit.mode == "revise" and d.audit is None else d.undo
    d = d.told(*got.extraction.corrected)
    extraction, lines = book_names.guard_extraction(d, got.extraction, d.prose)
    d = d.warned(*lines)
    extraction, said = payoff_step.closed_extraction(extraction, d.standing)
    d = replace(d.told(said), extraction=extraction)
    if ctx.config.generation.enable_entity_updates:      # a name one letter off: said once
        d = d.told(*variant_lines(d.memory, named_by(extraction), d.prose))
    if d.given is not None and d.given.introduce is not None:
        introduced, plan = d.given.introduce(d)
        d = replace(d, plan=plan, changes=d.changes + tuple(introduced))
    changes = extraction_step(d.memory, extraction, tick=d.tick, prose=d.prose,
                              generation=ctx.config.generation)
    return replace(d, changes=d.changes + tuple(changes), undo=undo)


STAGE: Stage[Extracted] = Stage("extractor", build=build, ask=ask, apply=apply)
