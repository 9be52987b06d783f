"""What the planner and the extractor answer of the outline, in a book with one: the beat a
plan names (checked against the beats offered), the beat's status and the scene's tension
(garbage corrected or dropped, said in one line each, never an error), and schemas that
ask for them only when there is an outline."""

from __future__ import annotations

import pytest

from novel_agent.story.decisions import (
    EXTRACT_SCHEMA,
    LEAN_EXTRACT_SCHEMA,
    Plan,
    extract_schema,
    extraction_from_json,
    plan_from_json,
    plan_from_record,
    plan_schema,
)
from novel_agent.tick.stages.plan import settle_beat

ANSWER = {"intention": "Mara reads the map.", "pov": "Mara", "location": "the tower",
          "characters": [], "tool_calls": []}


def test_a_book_without_an_outline_is_asked_what_it_always_was():
    assert "beat" not in plan_schema(3)["properties"]
    assert extract_schema(True) is EXTRACT_SCHEMA and extract_schema(False) is LEAN_EXTRACT_SCHEMA
    plan = plan_from_json({**ANSWER, "beat": "2.1"}, max_tools=3)     # not asked: not kept
    assert plan.beat == "" and "beat" not in plan.to_dict()
    made = extraction_from_json({"summary": ["Mara reads the map."], "tension": 14,
                                 "beat_status": "done"})
    assert (made.tension, made.beat_status, made.corrected) == (None, "", [])
    assert "tension" not in made.to_dict()


def test_the_schemas_ask_for_the_beat_the_status_and_the_tension():
    schema = plan_schema(3, beats=("2.1", "2.2"))
    assert schema["properties"]["beat"] == {"type": "string", "enum": ["2.1", "2.2"]}
    assert "beat" in schema["required"] and "beat" not in plan_schema(3)["required"]
    asked = extract_schema(True, beat=True, tension=True)
    assert asked["properties"]["beat_status"]["enum"] == ["done", "partly", "not"]
    assert asked["properties"]["tension"] == {"type": "integer", "minimum": 0, "maximum": 10}
    assert {"beat_status", "tension", "tension_reason"} <= set(asked["required"])
    assert "beat_status" not in extract_schema(False, tension=True)["properties"]
    assert "beat_status" not in EXTRACT_SCHEMA["properties"]        # the constant untouched


def test_a_plan_keeps_its_beat_in_its_record():
    plan = plan_from_json({**ANSWER, "beat": "2.1"}, max_tools=3, beat=True)
    assert plan.beat == "2.1" and plan.to_dict()["beat"] == "2.1"
    assert plan_from_record(plan.to_dict()).beat == "2.1"


@pytest.mark.parametrize("named, beat, warned", [
    ("2.1", "2.1", ""),
    ("2.2", "2.2", ""),                       # the next beat: taken
    ("3.1", "2.1", "the plan named beat '3.1', not the current beat 2.1 or the next, 2.2: "
                   "it advances 2.1"),
    ("", "2.1", "the plan named no beat, not the current beat 2.1 or the next, 2.2: it "
                "advances 2.1"),
])
def test_a_plan_naming_a_beat_not_offered_is_corrected_to_the_current_one(named, beat, warned):
    plan, warning = settle_beat(Plan("x", "Mara", "the tower", beat=named), ("2.1", "2.2"))
    assert (plan.beat, warning) == (beat, warned)


def test_without_a_beat_to_offer_a_plan_names_none():
    assert settle_beat(Plan("x", "Mara", "here", beat="1.1"), ())[0].beat == ""
    assert settle_beat(Plan("x", "Mara", "here"), ()) == (Plan("x", "Mara", "here"), "")


@pytest.mark.parametrize("answer, status, tension, corrected", [
    ({"beat_status": "done", "tension": 7}, "done", 7, []),
    ({"beat_status": "Partly.", "tension": "6/10"}, "partly", 6, []),
    ({"beat_status": "maybe", "tension": 14}, "", 10, [
        "the extractor's beat status 'maybe' is not done, partly, not: dropped",
        "the extractor's tension 14 is not from 0 to 10: taken as 10"]),
    ({"beat_status": ["done"], "tension": -3}, "", 0, [
        "the extractor's beat status '[\"done\"]' is not done, partly, not: dropped",
        "the extractor's tension -3 is not from 0 to 10: taken as 0"]),
    ({"tension": "very high"}, "", None, [
        "the extractor's tension 'very high' is not a number from 0 to 10: dropped"]),
    ({"tension": True}, "", None, [
        "the extractor's tension 'True' is not a number from 0 to 10: dropped"]),
    ({"tension": 6.6}, "", 7, []),
    ({}, "", None, []),
])
def test_the_extractors_garbage_is_corrected_or_dropped_never_an_error(answer, status, tension,
                                                                        corrected):
    made = extraction_from_json({"summary": ["Mara reads the map."], **answer,
                                 "tension_reason": "The map names her."},
                                beat=True, tension=True)
    assert (made.beat_status, made.tension, made.corrected) == (status, tension, corrected)
    assert made.tension_reason == ("The map names her." if tension is not None else "")


def test_a_status_not_asked_for_is_not_kept():
    made = extraction_from_json({"summary": ["Mara reads it."], "beat_status": "done",
                                 "tension": 4}, tension=True)
    assert (made.beat_status, made.tension) == ("", 4)
    assert made.to_dict()["tension"] == 4 and "beat_status" not in made.to_dict()
