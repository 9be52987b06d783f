"""The outline's answers: a schema per level asking for exactly the parts wanted, every
problem of an answer named, tensions read leniently, strings a length limit cut made whole."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from novel_agent.errors import ModelResponseError
from novel_agent.models.offline_outline import outline_answer
from novel_agent.story.outline.answers import (
    arc_from_json,
    items_from_json,
    schema,
    tension,
    whole,
)


def test_each_level_asks_for_exactly_its_count_and_a_beat_s_tension_may_be_left_out():
    beats = schema("beats", 3)["properties"]["beats"]
    assert (beats["minItems"], beats["maxItems"]) == (3, 3)
    assert beats["items"]["required"] == ["what"]
    assert schema("chapters", 2)["properties"]["chapters"]["items"]["required"] == \
        ["title", "purpose"]
    assert schema("arc")["required"] == ["summary", "ending"]
    assert all(s.get("maxLength") for s in schema("arc")["properties"].values())


def test_every_problem_of_an_answer_is_named_once_in_one_line():
    with pytest.raises(ModelResponseError) as caught:
        items_from_json("chapters", {"chapters": [{"title": "One"}, "two"]}, 3)
    said = str(caught.value)
    assert said.startswith("outline: the chapters answer is unusable: 3 chapters were asked "
                           "for, 2 given; chapters 1: 'purpose' must be text; chapters 2 must "
                           "be an object")
    with pytest.raises(ModelResponseError, match="needs a list 'beats'"):
        items_from_json("beats", {"beats": "none"}, 1)
    with pytest.raises(ModelResponseError, match="'ending' must be text"):
        arc_from_json({"summary": "A story.", "ending": 4})


def test_more_parts_than_asked_are_cut_and_tensions_are_read_leniently():
    answer = {"beats": [{"what": " Mara  finds the map. ", "tension": "7"},
                        {"what": "She reads it.", "tension": 12.4},
                        {"what": "She hides it.", "tension": "high"},
                        {"what": "One too many."}]}
    assert items_from_json("beats", answer, 3) == [
        {"what": "Mara finds the map.", "tension": 7}, {"what": "She reads it.", "tension": 10},
        {"what": "She hides it.", "tension": None}]
    assert [tension(v) for v in (True, -2, 3.5, "4.0", None)] == [None, 0, 4, 4, None]


def test_a_string_cut_at_its_limit_is_made_whole():
    ending = ("The keeper reaches the island where the map is hidden. It leads him to a cave and "
              "a chest. With the chest he returns to the lighthouse and resolves the premise, "
              "ensuring that the lamp and the sea and the drowned man are at last at peace with"
              " one another and with him, who kept the light for forty years without a single"
              " night of")[:300]
    assert len(ending) == 300
    assert whole("ending", ending) == ("The keeper reaches the island where the map is hidden. "
                                       "It leads him to a cave and a chest.")
    title = "Act I: The lighthouse keeper receives a distress call from a man"[:60]
    assert whole("title", title) == "Act I: The lighthouse keeper receives"
    assert whole("title", "The  Drowned Man") == "The Drowned Man"      # not cut: kept
    assert whole("what", "She runs") == "She runs"


def test_one_cut_sentence_keeps_its_whole_clauses_and_each_level_its_own_limit():
    purpose = ("Edda must confront the stranger who claims the map, revealing the truth about "
               "her husband's death and his love for her, leading to a thrilling confrontation "
               "and a revelation of the island's古老")
    assert whole("purpose", purpose.ljust(200, "x")[:200], "chapters") == (
        "Edda must confront the stranger who claims the map, revealing the truth about her "
        "husband's death and his love for her.")
    act = ("Edda searches the island and finds the map hidden in a cave. She learns the stranger "
           "was her own daughter, lost at sea years ago. Edda sets out to find her daughter and "
           "resolves the premise by going back to Skerry Light and finding her safe and sound "
           "at the foot of the lamp, where the map said the room would be, and")[:300]
    assert len(act) == 300 and whole("summary", act, "acts") == (
        "Edda searches the island and finds the map hidden in a cave. She learns the stranger "
        "was her own daughter, lost at sea years ago.")
    assert whole("summary", act, "arc") == act          # 300 is under the arc's limit: whole


def test_a_part_that_repeats_one_already_made_is_a_problem_when_asked():
    made = [{"title": "Confrontation", "purpose": "Edda confronts the stranger, revealing the "
                                                  "truth about her husband's death."}]
    answer = {"chapters": [{"title": "The Cave", "purpose": "Edda finds the cave."},
                           {"title": "confrontation ", "purpose": "She sails home."},
                           {"title": "Home", "purpose": "Edda confronts the stranger, revealing "
                                                        "the truth about her husband's death."}]}
    with pytest.raises(ModelResponseError) as caught:
        items_from_json("chapters", answer, 3, taken=made)
    assert str(caught.value) == (
        "outline: the chapters answer is unusable: chapters 2: its title repeats an earlier "
        "one ('confrontation'): write a new one, different from the rest; chapters 3: its "
        "purpose repeats an earlier one ('Edda confronts the stranger, revealing the truth "
        "a'): write a new one, different from the rest")
    assert len(items_from_json("chapters", answer, 3)) == 3          # not asked: it stands
    twice = {"beats": [{"what": "Edda finds the map in the cave."},
                       {"what": "Edda finds the map in the cave at last."}]}
    with pytest.raises(ModelResponseError, match="beats 2: its what repeats"):
        items_from_json("beats", twice, 2, taken=[])


def test_the_offline_revision_at_each_checkpoint_writes_the_rest_anew():
    # told no thread (a server reads none from the prompt), a revision at chapter 4 must
    # still differ from the one at chapter 3 for chapters 4 to 6, or it is "the rest as it was"
    story = SimpleNamespace(name="keeper", protagonist="Mara Quill", premise="A keeper finds a map.")
    def revision(numbers):
        return outline_answer(0, story, {"level": "revise", "rewrite": True, "numbers": numbers,
                                         "beats": [2] * len(numbers), "total": 6})["chapters"]
    third, fourth = revision([3, 4, 5, 6]), revision([4, 5, 6])
    assert all(a != b for a, b in zip(third[1:], fourth))
    titles = [c["title"] for c in fourth] + [c["title"] for c in third[:1]]
    assert len(set(titles)) == len(titles)


def test_a_tension_written_into_a_beats_text_is_taken_off_it_and_read():
    # the 1.5B's revision copied the prompt's "… (tension 4)" into a beat's text
    beats = items_from_json("beats", {"beats": [
        {"what": "Edda embarks on a journey to find the map. (tension 4)"},
        {"what": "She reads the map aloud (tension: 6).", "tension": 8}]}, 2)
    assert beats == [{"what": "Edda embarks on a journey to find the map.", "tension": 4},
                     {"what": "She reads the map aloud", "tension": 8}]
