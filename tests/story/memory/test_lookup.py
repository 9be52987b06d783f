"""Finding by name through an index (story/memory/lookup.py) answers what a scan of all
memory answers, as memory grows and learns names within a tick."""

from __future__ import annotations

import random

import pytest

from novel_agent.story.memory.store import (
    Memory,
    find_person,
    open_loop,
    resolve_loop,
    same_person,
    slug,
    upsert_character,
    upsert_location,
)
from novel_agent.text.names import normalize_name


def scan_find(entities: dict, name: str) -> dict | None:
    """story/memory/store.py's _find before the index: every entity looked at."""
    if not name or not name.strip():
        return None
    if slug(name) in entities:
        return entities[slug(name)]
    wanted = normalize_name(name)
    for e in entities.values():
        names = {normalize_name(str(n)) for n in [e.get("name", ""), *(e.get("aliases") or [])]
                 if str(n).strip()}
        if (normalize_name(str(e.get("name", ""))) == wanted and str(e.get("name", "")).strip()) \
                or (e.get("aliases") and wanted in names):
            return e
    return None


def scan_same(memory: Memory, name: str) -> dict | None:
    words = normalize_name(name).split()
    found = [c for c in memory.characters.values()
             if (t := normalize_name(str(c.get("name", ""))).split()) and t[0] == words[0]
             and (len(words) == 1 or len(t) == 1)] if words else []
    return found[0] if len(found) == 1 else None


def scan_loop(loops: list, ref: str, open_only: bool) -> dict | None:
    chosen = [l for l in loops if not open_only or l.get("status", "open") == "open"]
    for l in chosen:
        if l.get("id") in (ref, slug(ref)):
            return l
    return next((l for l in chosen
                 if str(l.get("description", "")).strip().lower() == ref.strip().lower()), None)


def test_lookups_answer_what_a_scan_answers_while_memory_grows_and_learns_names():
    rng = random.Random(5)
    first = ["Mara", "Tobin", "Ada", "Ilse", "Kell", "The"]
    last = ["Quill", "Keel", "Vane", "Morrow", ""]
    memory = Memory()
    for step in range(600):
        name = f"{rng.choice(first)} {rng.choice(last)}".strip()
        if rng.random() < 0.5:
            upsert_character(memory, name, tick=step)
        elif rng.random() < 0.5:
            upsert_location(memory, f"the {name} yard", tick=step)
        elif rng.random() < 0.6:
            open_loop(memory, f"who hid {name}'s ledger?", tick=step)
        else:
            resolve_loop(memory, f"who hid {name}'s ledger?", tick=step)
        probe = f"{rng.choice(first)} {rng.choice(last)}".strip()
        for asked in (probe, probe.split()[0], probe.upper() + ".", f"the {probe} yard", ""):
            assert memory.find_character(asked) is scan_find(memory.characters, asked)
            assert memory.find_location(asked) is scan_find(memory.locations, asked)
            if asked:
                assert same_person(memory, asked) is scan_same(memory, asked)
                assert find_person(memory, asked) is (scan_find(memory.characters, asked)
                                                      or scan_same(memory, asked))
            ref = f"who hid {asked}'s ledger?"
            assert memory.find_loop(ref) is (scan_loop(memory.loops, ref, True)
                                             or scan_loop(memory.loops, ref, False))
    assert len(memory.characters) > 10 and any(c.get("aliases")
                                               for c in memory.characters.values())
    assert any(l["status"] == "resolved" for l in memory.loops)


def test_an_index_is_made_again_for_a_dict_that_changed_behind_it():
    memory = Memory()
    upsert_character(memory, "Mara Quill", tick=1)
    assert memory.find_character("mara quill.") is memory.characters["mara_quill"]
    del memory.characters["mara_quill"]                      # removed, another added:
    memory.characters["ada"] = {"id": "ada", "name": "Mara Quill"}   # the same size
    assert memory.find_character("Mara Quill") is memory.characters["ada"]
    memory.loops.append({"id": "x", "description": "Why?", "status": "open"})
    assert memory.find_loop("why?") is memory.loops[0]
    memory.loops[0] = {"id": "y", "description": "Why?", "status": "open"}
    assert memory.find_loop("why?") is memory.loops[0]


def test_the_loops_a_text_touches_are_those_a_scan_of_every_open_loop_finds():
    """touched_loops looks only at the loops saying a word of the text that marks one (few
    open loops say it): the same loops, in the same order, as touches() over loop_marks
    of every open loop."""
    from novel_agent.story.memory.store import loop_marks, touched_loops, touches
    rng = random.Random(9)
    words = ["rajunjun", "halurra", "korralor", "token", "ledger", "quill", "means", "bell",
             "harbour", "cipher", "lantern"]
    memory = Memory()
    for step in range(300):
        said = " ".join(rng.sample(words, rng.randint(2, 5)))
        if rng.random() < 0.7:
            open_loop(memory, f"what the {said} is", tick=step)
        elif memory.loops:
            resolve_loop(memory, rng.choice(memory.loops)["description"], tick=step)
        text = " ".join(rng.sample(words, rng.randint(1, 4))).title()
        marks = loop_marks(memory.open_loops())
        expected = [l for l in memory.open_loops() if touches(text, marks[str(l.get("id"))])]
        assert touched_loops(memory, text) == expected


def test_a_fact_told_again_in_any_case_is_not_added_as_a_scan_would_say():
    """add_fact looks a text up in the facts' index (story/memory/lookup.py): what a scan of
    every fact says, as the list grows, is replaced, shrinks or holds a text that is not
    one."""
    from novel_agent.story.memory.store import add_fact
    rng = random.Random(4)
    memory = Memory()
    words = ["The bell", "the BELL", "A lamp", "a lamp ", "The tide", "Rain"]
    for step in range(300):
        text = f"{rng.choice(words)} rang {rng.randint(1, 30)} times."
        expected = not any(f.get("text", "").lower() == text.strip().lower()
                           for f in memory.facts)
        assert add_fact(memory, text, tick=step) is expected
        if step == 100:
            memory.facts[-1] = {"text": "Told by hand.", "scene": 3}     # replaced in place
            assert add_fact(memory, "told BY hand.", tick=step) is False
        if step == 200:
            del memory.facts[:50]                                      # shrunk
    assert add_fact(memory, memory.facts[0]["text"].upper(), tick=301) is False
    memory.facts.append({"text": None, "scene": 4})                    # a text that is not one
    with pytest.raises(AttributeError):
        add_fact(memory, "Something new.", tick=302)
