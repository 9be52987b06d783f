"""What a scene's extraction does to memory: the one code a tick and a replay share.

`apply_extraction` records what the extractor read from a scene (facts, characters,
loops, relationships, voice cards) in memory, as far as the scene's prose bears it
out; `new_name` says whether a name the extractor gives is a new person's, written in
the prose as a name. Pure functions of memory and text (tick/stages/extract.py asks
the extractor; tick/scene_memory.py and the replay of revision/rederive.py apply it).
"""

from __future__ import annotations

import re

from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.store import (
    Memory,
    add_fact,
    add_relationship,
    find_person,
    open_loop,
    resolve_loop,
    touched_loops,
    upsert_character,
)
from novel_agent.story.memory.voices import take_proposal
from novel_agent.text.names import (
    fact_problem,
    loop_problem,
    name_problem,
    named_in,
    person_problem,
    written_name,
)


def apply_extraction(memory: Memory, extraction: Extraction, *, tick: int, facts: bool = True,
          entities: bool = True, prose: str = "") -> list[str]:
    """Apply an extraction to memory (in place); returns what changed, one line each.

    Only what memory can use is recorded: a fact or a loop copied word for word from the
    scene (`prose`) or cut off at its length limit is not, nor a loop that is not asked
    as a question; characters are updated when known (by name or alias, or by a full
    name one letter off theirs that the scene does not write beside theirs: store.variant_of,
    kept as an alias), created when the scene writes a new one's name as a name
    (`new_name`); a voice card proposed for
    a known character the scene names is taken where they have none, or a thin one of
    the extractor's (never the author's)."""
    changes = []
    if facts:
        for fact in extraction.facts:
            if fact_problem(fact, prose) is None and add_fact(memory, fact, tick=tick):
                changes.append(f"fact: {fact}")
    if not entities:
        return changes
    for item in extraction.characters:      # known ones, or a name the scene writes as one
        name = item["name"] if find_person(memory, item["name"], prose) is not None else \
            new_name(item["name"], prose)
        if name:
            who, created = upsert_character(memory, name, tick=tick,
                                            state=item.get("state", ""), beside=prose)
            changes.append(f"{'new character ' if created else ''}{who['name']}: "
                           f"{item.get('state', '')}")
    for text in extraction.loops_opened:
        text = re.sub(r"\s*\?(?:\s*\?)+\s*$", "?", text.strip())     # "…visit? ?"
        if loop_problem(text, prose) is not None:
            continue
        loop, created = open_loop(memory, text, tick=tick)
        if created:
            changes.append(f"loop opened: {loop['id']}")
    for ref in extraction.loops_resolved:
        resolved = resolve_loop(memory, ref, tick=tick)
        if resolved is not None:
            changes.append(f"loop resolved: {resolved['id']}")
    for rel in extraction.relationships:
        a, b = find_person(memory, rel["a"], prose), find_person(memory, rel["b"], prose)
        if a is not None and b is not None and a is not b:
            add_relationship(memory, a["name"], b["name"], rel["kind"], tick=tick)
            changes.append(f"relationship: {a['name']} & {b['name']}")
    for voice in extraction.voices:       # never over the author's card (story/memory/voices.py)
        speaker = find_person(memory, voice["name"], prose)
        if speaker is not None and named_in(prose, voice["name"]):
            added = take_proposal(speaker, voice)
            changes += [f"voice card of {speaker['name']}: {', '.join(added)}"] if added else []
    for loop in memory.open_loops():      # (a loop's file always says its scenes)
        loop.setdefault("scenes", [])
    for loop in touched_loops(memory, " ".join(extraction.summary)):   # touched: the summary
        if tick not in loop["scenes"]:                                 # says what tells it
            loop["scenes"].append(tick)                                # apart
    return changes


def new_name(name: str, prose: str) -> str | None:
    """`name` as the scene writes it, when it is a new person's name: a name (not a
    sentence or a marker), a person's (not "strangers", "She" or "Thursday"), and written
    in the prose as a name (`names.written_name`: not only where a sentence starts, not
    only as part of a longer name such as "Keel Street"); else None."""
    name = " ".join(name.split())
    if not prose or not name or name_problem(name) or person_problem(name):
        return None
    return written_name(name, prose)
