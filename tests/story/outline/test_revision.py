"""The revision's answer (story/outline/revision.py): its schema asks for exactly the
chapters to rewrite; a bad answer is a ModelResponseError naming each problem; the
revised outline keeps every kept or locked beat, the chapters' numbers and their
lengths, and fills only the slots the revision writes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from novel_agent.errors import ModelResponseError
from novel_agent.story.outline.drift import Drift
from novel_agent.story.outline.revision import (
    account,
    copied_beats,
    revised,
    revision_from_json,
    schema,
)
from novel_agent.story.scenes import Scene
from novel_agent.tick.stages.outline import regen_slots
from tests.support.projects import short_outline

OUTLINE = short_outline(chapters=4, beats=2, scenes=2)


def locked_outline():
    """OUTLINE with beat 3.2 and chapter 4 locked."""
    three, four = OUTLINE.chapter(3), OUTLINE.chapter(4)
    three = replace(three, beats=(three.beats[0], replace(three.beats[1], locked=True)))
    return replace(OUTLINE, acts=tuple(replace(a, chapters=tuple(
        {3: three, 4: replace(four, locked=True)}.get(c.number, c) for c in a.chapters))
        for a in OUTLINE.acts))


def answer(*chapters: tuple[str, list[str]]) -> dict:
    return {"chapters": [{"title": title, "purpose": f"{title} turns the story.",
                          "beats": [{"what": w, "tension": 6} for w in beats]}
                         for title, beats in chapters]}


def test_the_schema_asks_for_exactly_the_chapters_to_rewrite():
    slots = regen_slots(locked_outline(), 2, 2, keep={"2.1"})
    assert sorted(slots) == [2, 3]                       # 4 is locked
    asked = schema(slots)["properties"]["chapters"]
    assert (asked["minItems"], asked["maxItems"]) == (2, 2)
    assert asked["items"]["properties"]["beats"]["maxItems"] == 1    # one beat each to write


def test_a_revision_keeps_what_is_kept_and_locked_and_the_book_s_length():
    outline = locked_outline()
    slots = regen_slots(outline, 2, 2, keep={"2.1"})
    new = revised(outline, slots, revision_from_json(
        answer(("The Turn", ["Mara burns the map."]), ("The Fall", ["The tower falls."])), slots))
    two, three = new.chapter(2), new.chapter(3)
    assert (two.title, [(b.id, b.what) for b in two.beats]) == (
        "The Turn", [("2.1", "Beat 1 of chapter 2 happens."), ("2.2", "Mara burns the map.")])
    assert [(b.id, b.what, b.locked) for b in three.beats] == [
        ("3.1", "The tower falls.", False), ("3.2", "Beat 2 of chapter 3 happens.", True)]
    assert new.chapter(1) == outline.chapter(1) and new.chapter(4) == outline.chapter(4)
    assert [c.number for c in new.chapters()] == [1, 2, 3, 4]
    assert [c.scenes for c in new.chapters()] == [c.scenes for c in outline.chapters()]
    assert new.arc == outline.arc and [a.name for a in new.acts] == [a.name for a in outline.acts]


def test_a_slot_the_answer_leaves_out_keeps_its_beat_and_extra_beats_are_cut():
    slots = regen_slots(OUTLINE, 4, 2)
    new = revised(OUTLINE, slots, revision_from_json(answer(("The End", ["It ends."])), slots))
    assert [b.what for b in new.chapter(4).beats] == ["It ends.", "Beat 2 of chapter 4 happens."]
    cut = revision_from_json(answer(("The End", ["One.", "Two.", "Three."])), slots)
    assert [b["what"] for b in cut[0]["beats"]] == ["One.", "Two."]


@pytest.mark.parametrize("data, problem", [
    ({"chapter": []}, "the revision needs a list 'chapters'"),
    (answer(("Only One", ["A beat."])), "2 chapters were asked for, 1 given"),
    ({"chapters": [{"title": "", "purpose": "It turns.", "beats": [{"what": "x y"}]},
                   {"title": "B", "purpose": "It ends.", "beats": []}]},
     "chapter 3: 'title' must be text; chapter 4: 'beats' must list what happens"),
])
def test_an_unusable_answer_names_every_problem(data, problem):
    with pytest.raises(ModelResponseError) as caught:
        revision_from_json(data, regen_slots(OUTLINE, 3, 2))
    assert problem in str(caught.value) and str(caught.value).startswith("outline: ")


def test_the_prompt_s_account_tells_what_happened():
    scenes = [Scene(tick=5, body="", title="The Bell", chapter=2, summary=["Mara rings it."])]
    drift = Drift(3, (2,), landed=OUTLINE.chapter(2).beats[:1],
                  missed=OUTLINE.chapter(2).beats[1:], threads=("who hid the ledger",))
    text = account(drift, scenes)
    assert text.splitlines()[:2] == ["Chapter 2 closed; the book goes on to chapter 3. What "
                                     "the scenes did:", "- scene 5, \"The Bell\": Mara rings it."]
    assert "Beats that landed:\n- 2.1 Beat 1 of chapter 2 happens." in text
    assert "Beats missed:\n- 2.2 Beat 2 of chapter 2 happens." in text
    assert text.endswith("New threads no beat covers:\n- who hid the ledger")


def test_a_revised_beat_that_copies_a_scene_s_summary_line_is_refused_the_old_beat_kept():
    """The 1.5B's revision after scene 3 made beats 2.1 and 2.2 copies of scene 2's summary
    lines: such a beat is refused and the beat the outline had stays; a new beat that only
    shares a name with a summary line is taken (fails on main: the copies were taken)."""
    summaries = ["Ines finds the crack in the cave wall behind the furnace.",
                 "The crystal ball glows when Ines touches it."]
    slots = regen_slots(OUTLINE, 2, 2)
    data = answer(("The Cave", ["Ines finds the crack in the cave wall.",
                                "the crystal ball glows when Ines touches it"]),
                  ("The Mayor", ["Ines takes the apple to the mayor.", "The mayor lies."]),
                  ("The End", ["It ends.", "Ines frees them."]))
    answers = revision_from_json(data, slots)
    new = revised(OUTLINE, slots, answers, summaries)
    assert [b.what for b in new.chapter(2).beats] == ["Beat 1 of chapter 2 happens.",
                                                      "Beat 2 of chapter 2 happens."]
    assert new.chapter(2).title == "The Cave"
    assert [b.what for b in new.chapter(3).beats] == ["Ines takes the apple to the mayor.",
                                                      "The mayor lies."]
    assert copied_beats(answers, summaries) == ["Ines finds the crack in the cave wall.",
                                                "the crystal ball glows when Ines touches it"]
    assert revised(OUTLINE, slots, answers).chapter(2).beats[0].what == \
        "Ines finds the crack in the cave wall."                  # no summaries: taken


def test_a_revised_chapter_title_that_is_the_protagonist_s_description_is_made_of_its_beat():
    """The 1.5B's revision titled a chapter with the heroine's description: a title that is
    the story's protagonist line, describes someone, or is longer than a title, is made of
    the chapter's first beat (fails on main: the description was the title)."""
    slots = regen_slots(OUTLINE, 3, 2)
    data = answer(("Ines Karr, apprentice glassblower", ["Ines climbs to the kiln, at dawn."]),
                  ("Ines Karr, a nineteen-year-old apprentice", ["The mayor lies."]))
    said = revision_from_json(data, slots, "Ines Karr, apprentice glassblower of Murn")
    assert [c["title"] for c in said] == ["Ines climbs to the kiln", "The mayor lies"]
    assert revision_from_json(answer(("The Kiln", ["A."]), ("The Mayor", ["B."])), slots,
                              "Ines Karr, apprentice")[0]["title"] == "The Kiln"
