"""The relevance helpers' shortcuts give what the long way gives (context/relevance.py)."""

from __future__ import annotations

import re

from novel_agent.context.relevance import (
    Focus,
    character_items,
    character_names,
    loop_items,
    loop_words,
)
from novel_agent.story.memory.store import Memory


def sample_memory() -> Memory:
    people = {f"p{n}": {"id": f"p{n}", "name": f"Person Number{n}", "description": "a clerk",
                        "first_seen": n, "last_seen": n + 3, "aliases": [f"Num{n}"] * (n % 2),
                        "pinned": n == 4}
              for n in range(1, 9)}
    loops = [{"id": f"who_hid_the_ledger_{n}", "description": f"who hid the Halurra ledger {n}",
              "status": "open", "opened_in": n * 20, "scenes": [n * 20]} for n in range(1, 6)]
    return Memory(characters=people, loops=loops)


def test_character_names_are_the_names_character_items_would_give():
    memory = sample_memory()
    for focus in (Focus.of(40, ["Person Number3", "Num5"]), Focus.of(7)):
        assert [(i.key, i.forms, i.score, i.rank) for i in character_names(memory, focus)] == [
            (i.key, (i.forms[-1],), i.score, i.rank) for i in character_items(memory, focus)]


def test_loop_words_are_the_words_of_the_loop_as_shown_overdue_mark_included():
    memory = sample_memory()
    items = loop_items(memory, Focus.of(101))
    assert any("OVERDUE" in i.forms[0] for i in items) and not all(
        "OVERDUE" in i.forms[0] for i in items)
    for item, loop in zip(items, memory.open_loops()):
        assert loop_words(loop, 101, 30) == set(re.findall(r"[a-z]{5,}", item.forms[0].lower()))


def test_no_form_of_a_loop_counts_fewer_tokens_than_its_id_in_brackets():
    """What the extractor's loops pool skips a loop by (Entry.least) is a true floor."""
    from novel_agent.context.relevance import loop_entries
    from novel_agent.text.tokens import TokenCounter
    loops = [{"id": f"{w}_{n}_the_x{n}", "description": f"{w} hid the ledger ({n})? «Ünï»",
              "status": "open", "opened_in": n, "scenes": [n]}
             for n, w in enumerate(["who", "why", "what", "9", "]", "quill", "a"] * 5)]
    for model in ("gpt-4", "gpt-4o"):
        count = TokenCounter(model).count
        for entry in loop_entries(Memory(loops=loops), Focus.of(300)):
            assert all(count(form) >= count(entry.least) for form in entry.make().forms)


def test_a_loop_names_someone_in_focus_when_its_words_hold_the_name_anywhere():
    from novel_agent.context.relevance import loop_entries
    loops = [{"id": f"l{n}", "description": text, "status": "open", "opened_in": 1,
              "scenes": [1]}
             for n, text in enumerate(["Who did Mara Quill (the keeper) see?",
                                       "Why is A.B. Vane silent?", "what the bell means",
                                       "Did Maraquillon lie?"])]
    focus = Focus.of(10, ["Mara Quill", "A.B. Vane", "", "(keeper"])
    why = [e.make().why for e in loop_entries(Memory(loops=loops), focus)]
    assert why == ["names a character in focus", "names a character in focus", "recent",
                   "recent"]
    assert [e.make().why for e in loop_entries(Memory(loops=loops), Focus.of(10))] == [
        "recent"] * 4


def test_in_view_is_focus_has_of_the_name_or_an_alias():
    from novel_agent.context.relevance import in_view
    people = [{"id": "mara", "name": "Mara Quill"}, {"id": "tobin", "aliases": ["Keel."]},
              {"id": "ada", "name": "", "aliases": [None, "The Vane"]}, {"id": "x", "name": None}]
    for focus in (Focus.of(5, ["mara quill", "keel", "vane"]), Focus.of(5), Focus.of(5, ["x"])):
        assert [in_view(focus, c) for c in people] == [
            focus.has(c.get("name", c.get("id"))) or any(focus.has(a) for a in
                                                         c.get("aliases") or [])
            for c in people]
    assert [in_view(Focus.of(5, ["mara quill", "keel", "vane"]), c) for c in people] == [
        True, True, True, False]
