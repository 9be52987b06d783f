"""audit/clock.py and the rules that read it: a weekday against the story's calendar, a
season against the days, each with a planted case and its near misses."""

from __future__ import annotations

import pytest
import yaml

from novel_agent.audit.clock import (
    Later,
    advance,
    clock_file,
    clock_from,
    days_between,
    parse_clock,
    placed,
    season_of,
)
from novel_agent.audit.rules import SceneInput, check
from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.store import Memory, upsert_character


@pytest.mark.parametrize("text, later, weekday", [
    ("the next day, Thursday", Later(1, None), 3),
    ("the following morning", Later(1, None), None),
    ("that same night, 21:00", Later(0, None), None),
    ("ten minutes later", Later(0, 10), None),
    ("an hour later", Later(0, 60), None),
    ("half an hour later", Later(0, 30), None),
    ("moments later", Later(0, 1), None),
    ("two days later", Later(2, None), None),
    ("a week later", Later(7, None), None),
    ("Saturday", None, 5),
    ("Monday 14 October 1935, morning", None, 0),
])
def test_the_clock_reads_a_time_relative_to_the_scene_before_and_a_weekday(text, later, weekday):
    c = parse_clock(text)
    assert c is not None and (c.later, c.weekday) == (later, weekday)


def test_a_count_the_clock_cannot_read_is_no_time():
    assert parse_clock("hours later") is None and parse_clock("ninety minutes later") is None


def test_a_relative_time_is_counted_from_the_clock_the_scene_before_set():
    monday = advance(None, 0, "Monday 14 October 1935, morning", "", 1)[0]
    assert monday is not None and monday.weekday == 0 and monday.year == 1935
    next_day = placed(parse_clock("the next day"), monday, 1, 2)
    assert next_day is not None and (next_day.day, next_day.year) == (10 * 31 + 15, 1935)
    assert placed(parse_clock("the next day"), monday, 1, 3).day is None   # scene 2: no time
    later = placed(parse_clock("ten minutes later"), monday, 1, 2)
    assert later is not None and (later.day, later.minutes) == (monday.day, 9 * 60 + 10)
    late = placed(parse_clock("two hours later"), parse_clock("day 2, 23:30"), 1, 2)
    assert late is not None and (late.day, late.minutes) == (3, 90)        # past midnight
    thursday = placed(parse_clock("Thursday"), monday, 1, 5)               # the coming one
    assert thursday is not None and thursday.day == 10 * 31 + 17
    # a date with no year is in the year nearest the clock's
    new_year = placed(parse_clock("2 January"), parse_clock("30 December 1935"), 1, 2)
    assert new_year is not None and new_year.year == 1936


def test_days_between_two_dates_count_real_months():
    assert days_between(parse_clock("30 January"), parse_clock("2 February")) == 3
    assert days_between(parse_clock("21 October 1935"), parse_clock("20 June 1936")) == 243
    assert days_between(parse_clock("31 December"), parse_clock("1 January")) == 1
    assert days_between(parse_clock("day 2"), parse_clock("day 5")) == 3
    assert days_between(parse_clock("day 2"), parse_clock("14 October")) is None


def test_the_clock_counts_the_weekday_on_and_keeps_what_named_it():
    clock, scene = advance(None, 0, "Monday 14 October", "It was Monday 14 October.", 1)
    clock, scene = advance(clock, scene, "the next day", "The carts came.", 2)
    assert clock is not None and (clock.weekday, scene) == (1, 2)          # Tuesday, counted
    assert clock.named is not None and clock.named.scene == 1
    assert clock.named.quote == "It was Monday 14 October."
    # a weekday against the count is not recorded: the audit reports it
    wrong, _ = advance(clock, scene, "the next day, Thursday", "The next day, Thursday, ...", 3)
    assert wrong is not None and wrong.weekday == 2 and wrong.named == clock.named
    right, _ = advance(clock, scene, "Wednesday", "On Wednesday it rained.", 3)
    assert right is not None and right.weekday == 2 and right.named.scene == 3
    # what memory/clock.yaml holds comes back as it was
    assert clock_from(yaml.safe_load(clock_file(right, 3))) == right


def test_the_clock_keeps_the_season_the_prose_states():
    clock, scene = advance(None, 0, "day 3, 21:00", "Snow had fallen since noon.", 3)
    assert clock is not None and clock.season is not None
    assert (clock.season.value, clock.season.day, clock.season.scene) == ("winter", 3, 3)
    heat, _ = advance(clock, scene, "the next day", "The harvest heat lay on the valley.", 4)
    assert heat is not None and heat.season == clock.season            # against it: the finding
    months, _ = advance(clock, scene, "day 300", "In the summer they came back.", 4)
    assert months is not None and months.season.value == "summer"
    unsaid, _ = advance(clock, scene, "", "Lotte dreamed of the summer heat.", 4)
    assert unsaid == clock
    assert season_of("Snow had fallen. The summer heat was long gone.") is None   # two: neither


def scene_at(prose: str, said: str, clock, clock_scene: int, tick: int = 5) -> SceneInput:
    m = Memory()
    upsert_character(m, "Lotte Brandt", tick=1)
    return SceneInput(tick=tick, prose=prose, extraction=Extraction(summary=["x"], clock=said),
                      memory=m, clock=clock, clock_scene=clock_scene)


def monday_clock():
    return advance(None, 0, "Monday 14 October, morning", "It was Monday 14 October.", 4)[0]


def test_a_weekday_against_the_date_is_found_with_both_quotes():
    found = check(scene_at("The next day, Thursday, the carts came down.",
                           "the next day, Thursday", monday_clock(), 4))
    assert [f.kind for f in found] == ["weekday"]
    f = found[0]
    assert (f.subtype, f.severity, f.against_scene) == ("absolute time", "major", 4)
    assert f.quote == "The next day, Thursday, the carts came down."
    assert f.against == "It was Monday 14 October."
    assert f.message.startswith("Thursday is stated for a Tuesday: 1 day after")


@pytest.mark.parametrize("prose, said, clock_scene", [
    ("The next day, Tuesday, the carts came.", "the next day, Tuesday", 4),
    ("On Friday 18 October it snowed.", "Friday 18 October", 4),
    ("On Thursday the carts came.", "Thursday", 4),              # the coming Thursday
    ("The next day, Thursday, the carts came.", "the next day, Thursday", 3),   # no telling
    ("Lotte remembered Thursday. The carts came.", "the next day, Thursday", 4),   # a memory
    ("The carts came the next day.", "the next day, Thursday", 4),   # the extractor's reading
])
def test_a_weekday_the_calendar_bears_out_or_cannot_judge_is_no_finding(prose, said, clock_scene):
    assert check(scene_at(prose, said, monday_clock(), clock_scene)) == []


def test_a_season_against_the_days_is_found_with_both_quotes():
    snow = advance(None, 0, "day 3, 21:00", "Snow had fallen on the terraces since noon.", 4)[0]
    found = check(scene_at("The next day the harvest heat lay over the valley.",
                           "the next day", snow, 4))
    assert [f.kind for f in found] == ["season"]
    f = found[0]
    assert (f.subtype, f.against_scene, f.message) == ("duration", 4,
                                                       "summer 1 day after the winter of scene 4")
    assert (f.quote, f.against) == ("The next day the harvest heat lay over the valley.",
                                    "Snow had fallen on the terraces since noon.")


@pytest.mark.parametrize("prose, said, clock_scene", [
    ("Spring came early that year, and the vines woke.", "day 5", 4),   # the next season
    ("In the summer the vines flowered.", "day 200", 4),                # months later
    ("In the summer the vines flowered.", "", 4),                       # no day told
    ("The harvest heat lay over the valley.", "the next day", 3),       # from an untimed scene
    ("Lotte dreamed of the summer heat.", "the next day", 4),           # a dream
    ("She wore a summer dress to the snow.", "the next day", 4),        # no season stated
])
def test_a_season_the_days_allow_or_cannot_judge_is_no_finding(prose, said, clock_scene):
    snow = advance(None, 0, "day 3, 21:00", "Snow had fallen on the terraces since noon.", 4)[0]
    assert check(scene_at(prose, said, snow, clock_scene)) == []


def test_in_two_places_at_a_time_stated_as_that_same_night():
    m = Memory()
    upsert_character(m, "Samuel Pike", tick=1)
    m.find_character("Samuel Pike").update(place="the Press House", place_in=4)
    friday = parse_clock("Friday 18 October, 21:00")
    s = SceneInput(tick=5, prose="Samuel Pike stood at the Station.", memory=m,
                   extraction=Extraction(summary=["x"], clock="that same night, 21:00",
                                         present=["Samuel Pike"],
                                         where=[{"name": "Samuel Pike", "place": "the Station"}]),
                   clock=friday, clock_scene=4)
    assert [f.kind for f in check(s)] == ["two_places"]
