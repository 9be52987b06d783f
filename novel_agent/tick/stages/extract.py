"""Stage 3, extract: read the new prose back into summary bullets and memory changes."""

from __future__ import annotations

from novel_agent.models.ask import Room, StageCall, ask_json
from novel_agent.models.base import ChatModel
from novel_agent.story.decisions import EXTRACT_SCHEMA, Extraction, extraction_from_json
from novel_agent.story.memory import (
    Memory,
    add_fact,
    add_relationship,
    find_person,
    loop_marks,
    open_loop,
    resolve_loop,
    touches,
    upsert_character,
)
from novel_agent.text.cleanup import sentences
from novel_agent.text.names import clean_bullets


def run(model: ChatModel, messages: list[dict[str, str]], *, max_tokens: int,
        room: Room | None = None) -> tuple[Extraction, StageCall]:
    """Extract what the scene established, from the extractor's prompt (`room`: see
    ask_json)."""
    return ask_json(model, "extractor", messages, max_tokens, EXTRACT_SCHEMA,
                    extraction_from_json, room)


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


def apply(memory: Memory, extraction: Extraction, *, tick: int, facts: bool = True,
          entities: bool = True) -> list[str]:
    """Apply an extraction to memory (in place); returns what changed, one line each."""
    changes = []
    if facts:
        for fact in extraction.facts:
            if add_fact(memory, fact, tick=tick):
                changes.append(f"fact: {fact}")
    if not entities:
        return changes
    for item in extraction.characters:      # known characters only, as the tools find them
        if find_person(memory, item["name"]) is not None:
            who, _ = upsert_character(memory, item["name"], tick=tick,
                                      state=item.get("state", ""))
            changes.append(f"{who['name']}: {item.get('state', '')}")
    for text in extraction.loops_opened:
        loop, created = open_loop(memory, text, tick=tick)
        if created:
            changes.append(f"loop opened: {loop['id']}")
    for ref in extraction.loops_resolved:
        loop = resolve_loop(memory, ref, tick=tick)
        if loop is not None:
            changes.append(f"loop resolved: {loop['id']}")
    for rel in extraction.relationships:
        a, b = find_person(memory, rel["a"]), find_person(memory, rel["b"])
        if a is not None and b is not None and a is not b:
            add_relationship(memory, a["name"], b["name"], rel["kind"], tick=tick)
            changes.append(f"relationship: {a['name']} & {b['name']}")
    summary = " ".join(extraction.summary)
    marks = loop_marks(memory.open_loops())
    for loop in memory.open_loops():      # touched: the summary says what tells it apart
        if tick not in loop.setdefault("scenes", []) and touches(summary, marks[str(loop.get("id"))]):
            loop["scenes"].append(tick)
    return changes
