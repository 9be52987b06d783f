"""The naming guard over a plan and an extraction, without a tick."""

from __future__ import annotations

import pytest

from novel_agent.story.decisions import Extraction, Plan, ToolCall
from novel_agent.story.memory.store import Memory, upsert_character, upsert_location
from novel_agent.story.name_pool import NamePool
from novel_agent.tick.stages.newcomers import fresh_names, newcomers, unconfusable

POOL = NamePool(("Edda", "Tomas", "Brann"), ("Lorn", "Ashby"), ("Skerry Light", "Gull Reach"))


def memory(*people: str) -> Memory:
    m = Memory()
    for name in people or ("Mara Quill", "Tobin Keel"):
        upsert_character(m, name, tick=1)
    upsert_location(m, "the bell tower", tick=1)
    return m


def plan(**fields) -> Plan:
    base = {"intention": "Mara Quill waits.", "pov": "Mara Quill", "location": "the bell tower",
            "characters": ["Mara Quill"]}
    return Plan(**{**base, **fields})


def no_pool() -> NamePool:
    raise AssertionError("the pool was asked for with no name to replace")


def test_a_newcomer_who_repeats_a_first_name_keeps_the_surname_everywhere():
    p = plan(intention="Mara Fenn brings Mara Quill the key; Mara Fenn leaves.",
             title="Mara Fenn's Key", characters=["Mara Quill", "Mara Fenn"],
             tool_calls=[ToolCall("create_character", "Mara Fenn", "", "Mara Fenn, a pilot"),
                         ToolCall("add_relationship", "mara fenn", "Mara Quill", "cousins")])
    new, lines = fresh_names(p, memory(), lambda: POOL, check=lambda n: None)
    assert new.characters == ["Mara Quill", "Edda Fenn"] and new.title == "Edda Fenn's Key"
    assert new.intention == "Edda Fenn brings Mara Quill the key; Edda Fenn leaves."
    assert [(c.name, c.target, c.detail) for c in new.tool_calls] == [
        ("Edda Fenn", "", "Edda Fenn, a pilot"), ("Edda Fenn", "Mara Quill", "cousins")]
    assert lines == ["the planner's new character 'Mara Fenn' repeats the first name of "
                     "'Mara Quill': named 'Edda Fenn' instead (from names.yaml)"]


def test_a_short_form_of_a_renamed_newcomer_is_renamed_with_it():
    p = plan(intention="Marra Vane rows out; Marra sings.", characters=["Mara Quill", "Marra"],
             tool_calls=[ToolCall("create_character", "Marra Vane", "", "a rower")])
    new, _ = fresh_names(p, memory(), lambda: POOL, check=lambda n: None)
    assert new.characters == ["Mara Quill", "Edda"] and new.intention == \
        "Edda Vane rows out; Edda sings." and new.tool_calls[0].name == "Edda Vane"


def test_a_place_a_letter_off_a_known_place_and_two_newcomers_alike():
    p = plan(location="the bel tower", intention="Jonah Hale and Jonas Hale climb The Bel Tower.",
             characters=["Mara Quill", "Jonah Hale", "Jonas Hale"])
    new, lines = fresh_names(p, memory(), lambda: POOL, check=lambda n: None)
    assert new.location == "Skerry Light"
    assert new.intention == "Jonah Hale and Edda Lorn climb Skerry Light."   # Hale: a surname
    assert len(lines) == 2                                                   # in use


def test_a_first_name_alone_that_memory_cannot_tell_whose_is_renamed():
    m = memory("Mara Quill", "Mara Fenn")
    p = plan(intention="Mara Quill meets Mara at the bell tower.",
             characters=["Mara Quill", "Mara"])
    new, lines = fresh_names(p, m, lambda: POOL, check=lambda n: None)
    assert new.characters == ["Mara Quill", "Edda"] and "repeats the first name" in lines[0]
    assert new.intention == "Mara Quill meets Edda at the bell tower."


@pytest.mark.parametrize("fields", [
    {"characters": ["Mara Quill", "Tobin"]},                    # Tobin Keel by his first name
    {"characters": ["Mara Quill", "Ilse Varga"]},               # a newcomer no one is like
    {"characters": ["Mara Quill", "strangers"]},                # no name: the tools reject it
    {"location": "the north quay"},
])
def test_the_pool_is_not_asked_for_when_no_name_must_go(fields):
    p = plan(**fields)
    assert fresh_names(p, memory(), no_pool, check=lambda n: None) == (p, [])


def test_newcomers_are_full_names_first_and_only_what_memory_does_not_know():
    p = plan(pov="Mara", characters=["Mara", "Wren", "Wren Ashby"], location="Gull Reach",
             tool_calls=[ToolCall("create_location", "the bell tower")])
    assert newcomers(p, memory(), lambda n: None) == [("Wren Ashby", "people"),
                                                      ("Gull Reach", "places"),
                                                      ("Wren", "people")]


def test_the_extractor_makes_no_character_of_a_variant_or_a_repeated_first_name():
    x = Extraction(summary=["s"], characters=[{"name": "Tobin Keell", "state": "wet"},
                                              {"name": "Mara Fenn", "state": "late"},
                                              {"name": "Jonah Hale", "state": "here"},
                                              {"name": "Jonas Hale", "state": "here"},
                                              {"name": "Mara Quill", "state": "tired"}])
    kept, lines = unconfusable(x, memory(), lambda name: name)
    assert [c["name"] for c in kept.characters] == ["Jonah Hale", "Mara Quill"]
    assert lines[0] == ("the scene's new character 'Tobin Keell' is a variant of 'Tobin Keel': "
                        "not made a character of memory") and len(lines) == 3


def test_the_book_of_memory_names_is_made_again_whenever_memory_names_otherwise():
    from novel_agent.tick.stages.newcomers import memory_book

    m = memory()
    book = memory_book(m)
    assert memory_book(m) is book and memory_book(m.copy()) is book   # asked again: kept
    m.characters[next(iter(m.characters))]["aliases"] = ["Marra"]
    assert memory_book(m) is not book and memory_book(m).holds("Marra")
    m.characters[next(iter(m.characters))]["name"] = "Mara Quell"     # renamed in place
    assert memory_book(m).holds("Mara Quell") and not memory_book(m).holds("Mara Quill")
    upsert_location(m, "the salt steps", tick=2)
    assert memory_book(m).holds("The Salt Steps", "places")
