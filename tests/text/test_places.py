"""A place's name out of a model's answer: the prompt's words around it taken off, a
phrase of a prompt refused (issue 51, item 4: "last at … in scene 6 in scene 7 in scene
8" grew one scene each tick, and the writer wrote "moving towards Inside the mountain
glassworks")."""

from __future__ import annotations

import pytest

from novel_agent.audit.knowledge import apply_knowledge
from novel_agent.context.presence import known_as, where_text
from novel_agent.story.decisions import Extraction, Plan
from novel_agent.story.memory.store import Memory, upsert_character
from novel_agent.text.places import not_a_place, place_name
from novel_agent.tick.stages.plan import settle_location


@pytest.mark.parametrize(("answer", "place"), [
    ("the mountain glassworks in scene 6 in scene 7 in scene 8", "the mountain glassworks"),
    ("Inside the mountain glassworks", "the mountain glassworks"),
    ("last at the harbour in scene 14", "the harbour"),
    ("Ines Karr (last at the kiln in scene 4; holds a glass apple)", "the kiln"),
    ("the kiln (scene 3)", "the kiln"),
    ("the orchard, last seen in scenes 3-4", "the orchard"),
    ("At the Harbour.", "the Harbour"),
    ("outside the gate", "outside the gate"),          # where from it: part of the place
    ("The Inn (Old)", "The Inn (Old)"),
    ("Skerry Light", "Skerry Light"),
    ("the lamplighters' guild", "the lamplighters' guild"),
])
def test_a_place_is_its_name_without_the_prompts_words(answer, place):
    assert place_name(answer) == place


def test_a_phrase_of_a_prompt_is_not_a_place():
    assert not_a_place("the mountain glassworks") == ""
    assert not_a_place(place_name("in scene 6")) == "empty"
    assert not_a_place("the same room as in the last scene")
    assert not_a_place("where the story began")
    assert not_a_place(place_name("the same room as in scene 5"))
    assert not_a_place("the long road that she walked every morning down to the sea wall")


def memory() -> Memory:
    m = Memory()
    upsert_character(m, "Ines Karr", tick=1)
    upsert_character(m, "Oren Vale", tick=1)
    return m


def test_memory_records_the_place_a_copied_line_names_and_not_a_phrase():
    # on main the place was stored as given: "the kiln in scene 6 in scene 7"
    m = memory()
    where = [{"name": "Oren Vale", "place": "the kiln in scene 6 in scene 7"}]
    apply_knowledge(m, Extraction(summary=["x"], present=["Ines Karr"], where=where), tick=8,
                    location="Inside the mountain glassworks in scene 7", pov="Ines Karr")
    ines, oren = m.characters["ines_karr"], m.characters["oren_vale"]
    assert (ines["place"], ines["place_in"]) == ("the mountain glassworks", 8)
    assert oren["place"] == "the kiln"
    apply_knowledge(m, Extraction(summary=["x"], where=[
        {"name": "Oren Vale", "place": "the place the story left him"}]), tick=9, location="")
    assert (oren["place"], oren["place_in"]) == ("the kiln", 8)        # kept, not the phrase


def test_a_standing_line_says_the_scene_once_whatever_the_file_holds():
    # on main: "last at the kiln in scene 6 in scene 7 in scene 8"
    who = {"id": "ines_karr", "name": "Ines Karr", "place": "the kiln in scene 6 in scene 7",
           "place_in": 8}
    assert where_text(who) == "last at the kiln in scene 8"
    assert known_as(who) == "Ines Karr (last at the kiln)"


def test_a_plans_location_is_a_place_and_a_phrase_stays_where_the_last_scene_was():
    plan = Plan(intention="She goes.", pov="Ines Karr", title="T",
                location="Inside the mountain glassworks in scene 6 in scene 7")
    assert settle_location(plan, "the kiln") == (
        Plan(intention="She goes.", pov="Ines Karr", title="T",
             location="the mountain glassworks"), "")
    moved, warning = settle_location(Plan(intention="x", pov="Ines Karr",
                                          location="the same room as in scene 5"), "the kiln")
    assert moved.location == "the kiln" and "not a place: the scene stays at the kiln" in warning
    alone, warning = settle_location(Plan(intention="x", pov="Ines Karr",
                                          location="the same room as in scene 5"), "")
    assert alone == Plan(intention="x", pov="Ines Karr", location="the same room as in scene 5")
    assert warning == ""                  # the first scene: nowhere else to be
