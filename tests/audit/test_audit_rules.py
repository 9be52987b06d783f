"""The audit's rule checks: each kind with a planted case and a near-miss control."""

from __future__ import annotations

import pytest

from novel_agent.audit.clock import parse_clock
from novel_agent.audit.findings import CATEGORIES, RULES, SUBTYPES, Finding, book_ced, ced, mean_ced
from novel_agent.audit.knowledge import apply_knowledge, knows
from novel_agent.audit.rules import Rules, SceneInput, check
from novel_agent.story.decisions import Extraction, extraction_from_json
from novel_agent.story.memory.store import Memory, add_fact, open_loop, upsert_character, upsert_location
from novel_agent.text.nomenclature import near_name

CAST = ("Mara Quill", "Tobin Keel", "Ilse Varga")


def memory() -> Memory:
    m = Memory()
    for name in CAST:
        upsert_character(m, name, tick=1)
    for place in ("the north quay", "the bell tower"):
        upsert_location(m, place, tick=1)
    return m


def scene(m: Memory, prose: str, tick: int = 5, *, location: str = "the north quay",
          pov: str = "Mara Quill", recent: list | None = None, **fields) -> SceneInput:
    extraction = Extraction(summary=["x"], **fields)
    return SceneInput(tick=tick, prose=prose, extraction=extraction, memory=m, title=f"Scene {tick}",
                      pov=pov, location=location, recent=recent or [])


def record(m: Memory, tick: int, location: str = "the north quay", pov: str = "Mara Quill",
           **fields) -> None:
    apply_knowledge(m, Extraction(summary=["x"], **fields), tick=tick, location=location, pov=pov)


def kinds(findings: list[Finding]) -> list[str]:
    return [f.kind for f in findings]


def test_every_rule_kind_has_a_constory_subtype():
    assert len(SUBTYPES) == 19 and len(CATEGORIES) == 5
    assert set(RULES.values()) <= set(SUBTYPES)


def test_a_dead_character_who_speaks_is_found_with_both_quotes():
    m = memory()
    record(m, 3, status=[{"name": "Tobin Keel", "status": "dead", "how": "drowned at the weir"}])
    found = check(scene(m, "The fog lifted. Tobin laughed and poured the tea.",
                        present=["Mara Quill", "Tobin Keel"]))
    assert kinds(found) == ["dead_or_absent"]
    f = found[0]
    assert (f.subtype, f.severity, f.against_scene) == ("causal logic", "critical", 3)
    assert f.quote == "Tobin laughed and poured the tea."
    assert f.against == "Tobin Keel is dead: drowned at the weir"
    assert m.find_character("Tobin Keel")["status_in"] == 3     # in his file, for a hand edit


def test_a_dead_character_in_a_dream_or_named_only_in_memory_is_no_finding():
    m = memory()
    record(m, 3, status=[{"name": "Tobin Keel", "status": "dead", "how": "drowned"}])
    assert check(scene(m, "Mara dreamed of Tobin, who laughed in the dream.",
                       present=["Mara Quill"], recalled=["Tobin Keel"])) == []
    # listed as present by a sloppy extractor, but every sentence naming him is a memory
    assert check(scene(m, "Mara remembered how Tobin used to laugh.",
                       present=["Mara Quill", "Tobin Keel"])) == []


def test_an_absent_character_who_comes_back_in_the_scene_is_no_finding():
    m = memory()
    record(m, 3, status=[{"name": "Ilse Varga", "status": "absent", "how": "sailed away"}])
    planted = check(scene(m, "Ilse poured the tea.", present=["Ilse Varga"]))
    assert kinds(planted) == ["dead_or_absent"] and planted[0].severity == "major"
    back = scene(m, "Ilse came back from the mainland.", present=["Ilse Varga"],
                 status=[{"name": "Ilse Varga", "status": "alive", "how": "came back"}])
    assert check(back) == []


def test_a_hand_edit_of_the_status_field_fixes_the_knowledge():
    m = memory()
    record(m, 3, status=[{"name": "Tobin Keel", "status": "dead", "how": "drowned"}])
    del m.find_character("Tobin Keel")["status"]         # the author: he lived
    assert check(scene(m, "Tobin laughed.", present=["Tobin Keel"])) == []


def test_in_two_places_at_the_same_moment_and_within_one_scene():
    m = memory()
    record(m, 4, location="the bell tower", present=["Tobin Keel"])
    same = scene(m, "Tobin stood at the quay as the clock struck.", present=["Tobin Keel"],
                 clock="day 2, 14:00")
    same.clock, same.clock_scene = parse_clock("day 2, 14:00"), 4
    assert kinds(check(same)) == ["two_places"]
    later = scene(m, "Tobin stood at the quay.", present=["Tobin Keel"], clock="day 2, 18:00")
    later.clock, later.clock_scene = parse_clock("day 2, 14:00"), 4
    assert check(later) == []          # time passed: he could have walked
    inside = scene(m, "Tobin waited at the quay, and Tobin was at the tower all along.",
                   present=["Tobin Keel"], travel=[],
                   where=[{"name": "Tobin Keel", "place": "the bell tower"}])
    assert kinds(check(inside)) == ["two_places"]
    walks = scene(m, "Tobin left the quay and walked to the tower.", present=["Tobin Keel"],
                  travel=["Tobin Keel"], where=[{"name": "Tobin Keel", "place": "the bell tower"}])
    assert check(walks) == []


def test_moved_straight_after_the_last_scene_with_no_travel():
    m = memory()
    record(m, 4, location="the bell tower", present=["Tobin Keel"])
    moved = check(scene(m, "Ten minutes later Tobin sat at the quay and read.",
                        present=["Tobin Keel"], clock="ten minutes later"))
    assert kinds(moved) == ["no_travel"] and moved[0].subtype == "geography"
    assert moved[0].message == ("Tobin Keel is at the north quay 10 minutes after the bell "
                                "tower, with no travel")
    assert check(scene(m, "Tobin rode out to the quay.", present=["Tobin Keel"],
                       travel=["Tobin Keel"], clock="ten minutes later")) == []
    assert check(scene(m, "Tobin sat at the quay.", 7, present=["Tobin Keel"],
                       clock="ten minutes later")) == []       # scenes later


def test_a_move_is_judged_only_when_the_clock_says_how_long_it_took():
    m = memory()
    record(m, 4, location="the bell tower", present=["Tobin Keel"])
    # overnight with no clock, the next day, two hours on: all time enough to walk there
    for clock in ("", "the next morning", "two hours later"):
        assert check(scene(m, "Tobin sat at the quay and read.", present=["Tobin Keel"],
                           clock=clock)) == [], clock
    # both scenes timed by the clock: half an hour apart is too little, four hours is not
    for clock, found in (("day 2, 14:30", ["no_travel"]), ("day 2, 18:00", [])):
        s = scene(m, "Tobin sat at the quay and read.", present=["Tobin Keel"], clock=clock)
        s.clock, s.clock_scene = parse_clock("day 2, 14:00"), 4
        assert kinds(check(s)) == found, clock
    # timed from a clock an earlier scene set (scene 4 stated no time): no telling
    s = scene(m, "Tobin sat at the quay and read.", present=["Tobin Keel"], clock="day 2, 14:30")
    s.clock, s.clock_scene = parse_clock("day 2, 14:00"), 3
    assert check(s) == []


def test_an_object_used_after_it_was_given_away():
    m = memory()
    record(m, 3, items=[{"name": "Mara Quill", "item": "brass key", "event": "gives",
                         "to": "Tobin Keel"}])
    assert m.find_character("Tobin Keel")["holds"] == ["brass key"]
    found = check(scene(m, "Mara took out the brass key and turned it.",
                        items=[{"name": "Mara Quill", "item": "the brass key", "event": "uses"}]))
    assert kinds(found) == ["lost_item"] and found[0].against_scene == 3
    assert "gave it to Tobin Keel" in found[0].against
    assert check(scene(m, "Tobin took out the brass key.",
                       items=[{"name": "Tobin Keel", "item": "brass key", "event": "uses"}])) == []
    assert check(scene(m, "Mara took the key back and used it.",
                       items=[{"name": "Mara Quill", "item": "brass key", "event": "gains"},
                              {"name": "Mara Quill", "item": "brass key", "event": "uses"}])) == []


def test_a_variant_of_a_known_name_but_not_a_new_name_on_purpose():
    m = memory()
    known = set(m.characters)
    upsert_character(m, "Tobin Keell", tick=5)          # the scene brought the misspelling in
    s = scene(m, "Tobin Keell nodded.", present=["Tobin Keell"])
    s.known_people = known
    found = check(s)
    assert kinds(found) == ["nomenclature"] and found[0].against == "Tobin Keel"
    upsert_character(m, "Tobin Keene", tick=5)          # a cousin the planner created
    s = scene(m, "Tobin Keene nodded.", present=["Tobin Keene"])
    s.known_people = known | {"tobin_keene"}
    assert check(s) == []
    assert check(scene(m, "Tobin nodded.", present=["Tobin"])) == []     # a first name
    assert near_name("the bel tower", ["the bell tower"]) == "the bell tower"
    assert near_name("Ilse Vargas-Moreno", ["Ilse Varga"]) == ""


def test_the_pov_uses_a_fact_never_witnessed_unless_told():
    m = memory()
    add_fact(m, "Tobin hid the ledger under the altar", tick=3)
    record(m, 3, pov="Tobin Keel", present=["Ilse Varga"])
    fact = m.facts[0]
    assert fact["witnesses"] == ["Tobin Keel", "Ilse Varga"]
    assert not knows(m, "Mara Quill", fact) and knows(m, "Ilse", fact)
    uses = [{"name": "Mara Quill", "fact": "the ledger is under the altar"}]
    found = check(scene(m, "Mara knew the ledger lay under the altar.", knows=uses))
    assert kinds(found) == ["pov_knowledge"] and found[0].subtype == "knowledge"
    assert found[0].quote == "Mara knew the ledger lay under the altar."
    told = [{"to": "Mara Quill", "fact": "Tobin hid the ledger under the altar"}]
    assert check(scene(m, "\"Under the altar,\" Ilse told her.", knows=uses, told=told)) == []
    record(m, 6, told=told)                                # told: now she knows
    assert "Mara Quill" in m.facts[0]["witnesses"]
    assert check(scene(m, "Mara knew.", 7, knows=uses)) == []


def test_the_clock_running_backwards():
    m = memory()
    s = scene(m, "It was nine in the morning of day 4 when Mara woke.", clock="day 4, 09:00")
    s.clock, s.clock_scene = parse_clock("day 5, 20:00"), 4
    found = check(s)
    assert kinds(found) == ["clock"] and found[0].subtype == "absolute time"
    assert "day 4" in found[0].quote
    s = scene(m, "The clock said 4pm on day 5.", clock="4pm on day 6")
    s.clock = parse_clock("day 5, 20:00")
    assert check(s) == []
    assert parse_clock("the evening of the third day") == parse_clock("day 3, 19:00").__class__(
        3, 19 * 60, "the evening of the third day")
    assert parse_clock("dawn") is not None and parse_clock("the next morning").day is None
    assert parse_clock("a grey sea") is None


def test_a_loop_overdue_is_said_once_the_tick_it_passes():
    m = memory()
    open_loop(m, "who forged the warrant", tick=2)
    rules = Rules(loop_overdue=10)
    at = lambda tick: check(SceneInput(tick=tick, prose="The tide turned.",  # noqa: E731
                                       extraction=Extraction(summary=["x"]), memory=m,
                                       rules=rules))
    assert kinds(at(13)) == ["loop_overdue"] and at(13)[0].against == "who forged the warrant"
    assert at(12) == [] and at(14) == []
    m.loops[0]["scenes"].append(8)                        # mentioned: the count starts again
    assert at(13) == [] and kinds(at(19)) == ["loop_overdue"]


def test_the_overdue_loops_are_those_every_loop_looked_at_would_give():
    """loop_overdue reads in full only the loops whose last touch could be the one that
    makes them overdue now: what it finds is what reading every loop finds."""
    import random

    from novel_agent.audit.rules import loop_overdue
    rng = random.Random(3)

    def every(s: SceneInput) -> list[str]:      # loop_overdue before, reading all
        out = []
        for loop in s.memory.open_loops():
            touched = [t for t in loop.get("scenes") or [] if isinstance(t, int)
                       and t < s.tick]
            opened = loop.get("opened_in")
            last = max([*touched, *([opened] if isinstance(opened, int) else [])], default=0)
            if last and s.tick - last == s.rules.loop_overdue + 1 and \
                    s.tick not in (loop.get("scenes") or []):
                out.append(str(loop.get("id")))
        return out

    said = 0
    for _ in range(200):
        m = Memory(loops=[{"id": f"l{n}", "description": f"loop {n}",
                           "status": rng.choice(["open", "open", "resolved"]),
                           "opened_in": rng.choice([rng.randint(0, 30), None]),
                           "scenes": rng.sample(range(0, 31), rng.randint(0, 4))}
                          for n in range(20)])
        s = SceneInput(tick=rng.randint(5, 30), prose="The tide turned.",
                       extraction=Extraction(summary=["x"]), memory=m,
                       rules=Rules(loop_overdue=rng.randint(1, 12)))
        found = [f.message.split("]")[0].split("[")[1] for f in loop_overdue(s)]
        assert found == every(s)
        said += len(found)
    assert said > 50


def test_the_known_names_are_listed_only_when_a_name_is_not_one_of_them(monkeypatch):
    from novel_agent.audit import rules
    m = memory()
    monkeypatch.setattr(rules, "known_book", lambda s: 1 / 0)
    assert check(scene(m, "Mara Quill waited.", present=["Mara Quill"])) == []


PARAGRAPH = ("The harbour lay under a lid of fog and the boats knocked at their moorings while "
             "the keeper counted the bells and wrote each one down in the green ledger by the stove.")


def test_a_passage_repeated_from_a_recent_scene_and_a_title_or_opening():
    m = memory()
    recent = [(3, "The Fog", f"Mara woke.\n\n{PARAGRAPH}"), (4, "The Bell", "Tobin slept.")]
    tweaked = PARAGRAPH.replace("green", "red")
    found = check(scene(m, f"Something else entirely.\n\n{tweaked}", recent=recent))
    assert kinds(found) == ["repetition"] and found[0].against_scene == 3
    own = ("The keeper counted the bells. Then he set out for the north quay with a lantern "
           "and a coil of rope, and did not look back at the house where his sister slept.")
    assert check(scene(m, own, recent=recent)) == []       # shares a phrase, not a passage
    titled = scene(m, "Quite new words here.", recent=recent)
    titled.title = "The Bell"
    assert kinds(check(titled)) == ["repeated_title"]
    titled.title = "The Bells"
    assert check(titled) == []


def test_extraction_keeps_the_knowledge_fields_and_drops_malformed_ones():
    data = {"summary": ["Mara walks to the quay at dawn."], "present": ["Mara Quill"],
            "status": [{"name": "Tobin", "status": "dead", "how": "drowned"},
                       {"name": "Ilse", "status": "sleepy"}, "garbage"],
            "items": [{"name": "Mara", "item": "key", "event": "uses"},
                      {"name": "Mara", "item": "key", "event": "eats"}],
            "told": "not a list", "clock": "day 3, 06:00"}
    x = extraction_from_json(data)
    assert x.status == [{"name": "Tobin", "status": "dead", "how": "drowned"}]
    assert x.items == [{"name": "Mara", "item": "key", "event": "uses"}]
    assert x.told == [] and x.clock == "day 3, 06:00"
    assert x.to_dict()["present"] == ["Mara Quill"] and "knows" not in x.to_dict()


def test_ced_is_subtypes_with_a_quoted_error_per_ten_thousand_words():
    def f(subtype, quote="q"):
        return Finding("llm", subtype, "minor", 1, quote, "a")
    found = [f("nomenclature"), f("nomenclature"), f("geography"), f("tone", quote="")]
    assert book_ced(found, 20_000) == pytest.approx(1.0)    # 2 subtypes / 2
    assert ced(0, 0) == 0.0
    assert mean_ced([(found, 20_000), ([], 5_000)]) == pytest.approx(0.5)


# -- what the rules missed (issue 37) --------------------------------------------------
def test_a_name_memory_holds_that_is_no_person_gets_no_finding():
    m = memory()
    upsert_character(m, "Tuesday", tick=2)         # made by an import before names were checked
    record(m, 3, status=[{"name": "Tuesday", "status": "dead", "how": "gone"}])
    record(m, 4, location="the bell tower", present=["Tuesday"])
    s = scene(m, "On Tuesday the tide came in. Tuesday was gone.", present=["Tuesday"])
    assert check(s) == []
    record(m, 3, status=[{"name": "Tobin Keel", "status": "dead", "how": "drowned"}])
    assert kinds(check(scene(m, "Tobin laughed.", present=["Tobin Keel"]))) == ["dead_or_absent"]


def test_a_scene_without_a_location_is_placed_by_where():
    m = memory()
    record(m, 4, location="", present=["Tobin Keel"],
           where=[{"name": "Tobin Keel", "place": "the bell tower"}])
    assert m.find_character("Tobin Keel")["place"] == "the bell tower"
    moved = scene(m, "A minute later Tobin sat at the quay and read.", location="",
                  present=["Tobin Keel"], clock="a minute later",
                  where=[{"name": "Tobin Keel", "place": "the north quay"}])
    found = check(moved)
    assert kinds(found) == ["no_travel"]
    assert found[0].message == ("Tobin Keel is at the north quay 1 minute after the bell "
                                "tower, with no travel")
    walked = scene(m, "Tobin walked to the quay.", location="", present=["Tobin Keel"],
                   travel=["Tobin Keel"], where=[{"name": "Tobin Keel", "place": "the north quay"}])
    assert check(walked) == []


def test_two_where_entries_of_one_name_are_two_places():
    m = memory()
    both = [{"name": "Tobin Keel", "place": "the bell tower"},
            {"name": "Tobin", "place": "the salt cellar"}]
    found = check(scene(m, "Tobin rang the bell. Tobin swept the salt cellar.", location="",
                        present=["Tobin Keel"], where=both))
    assert kinds(found) == ["two_places"]
    assert found[0].message == ("Tobin Keel is at the bell tower and at the salt cellar in the "
                                "same scene")
    assert found[0].quote == "Tobin swept the salt cellar."
    located = check(scene(m, "Tobin rang the bell at the quay.", present=["Tobin Keel"],
                          where=[{"name": "Tobin Keel", "place": "the north quay"}, *both]))
    assert kinds(located) == ["two_places"] and "the bell tower" in located[0].message


@pytest.mark.parametrize("text, day, year", [
    ("Monday 14 October", 10 * 31 + 14, None), ("14 October", 10 * 31 + 14, None),
    ("October 14th", 10 * 31 + 14, None), ("Sunday, 13 October 1962", 10 * 31 + 13, 1962),
    ("the 2nd of March, 1911, at 6pm", 3 * 31 + 2, 1911), ("2031-04-07 06:30", 4 * 31 + 7, 2031),
])
def test_the_clock_reads_dates(text, day, year):
    c = parse_clock(text)
    assert (c.day, c.year, c.calendar) == (day, year, True)


def test_a_later_scene_dated_before_an_earlier_one_is_a_finding():
    m = memory()
    s = scene(m, "The fog came in. On Sunday 13 October, Mara woke early.",
              clock="Sunday 13 October")
    s.clock, s.clock_scene = parse_clock("Monday 14 October"), 4
    found = check(s)
    assert kinds(found) == ["clock"] and found[0].against_scene == 4
    assert found[0].quote == "On Sunday 13 October, Mara woke early."
    s.clock = parse_clock("Saturday 12 October")
    assert check(s) == []
    s.clock = parse_clock("14 October 1961")        # a year before: later, though in October
    s.extraction = Extraction(summary=["x"], clock="Sunday 13 October 1962")
    assert check(s) == []
    new_year = scene(m, "On 1 January the bells rang.", clock="1 January")
    new_year.clock = parse_clock("31 December")       # no year stated: the next year's
    assert check(new_year) == []
    s.clock = parse_clock("day 5")                    # a count of days is no date
    assert check(s) == []


def test_the_clocks_quote_is_the_scenes_own_sentence():
    m = memory()
    s = scene(m, "It was the third day. Mara woke at nine.", clock="day 3, 09:00")
    s.clock, s.clock_scene = parse_clock("day 4, 20:00"), 4
    (found,) = check(s)
    assert found.quote == "It was the third day."
    unsaid = scene(m, "Mara woke early and went down to the quay.", clock="day 3, 09:00")
    unsaid.clock = parse_clock("day 4, 20:00")
    assert check(unsaid) == []        # the extractor's reading; no sentence of the scene says it


def test_appearance_stated_otherwise_than_before():
    m = memory()
    x = extraction_from_json({"summary": ["Mara looks out to sea."], "appearance": [
        {"name": "Mara Quill", "feature": "Eye colour", "value": "blue"},
        {"name": "Mara Quill", "feature": "shoe size", "value": "nine"}]})
    assert x.appearance == [{"name": "Mara Quill", "feature": "eye colour", "value": "blue"}]
    assert x.to_dict()["appearance"] == x.appearance
    changes = apply_knowledge(m, x, tick=3, location="the north quay")
    assert changes == ["Mara Quill's eye colour: blue"]
    brown = [{"name": "Mara", "feature": "eye colour", "value": "brown"}]
    found = check(scene(m, "The fog lifted. Mara blinked, her brown eyes wet.", appearance=brown))
    assert kinds(found) == ["appearance"] and found[0].subtype == "appearance"
    assert (found[0].quote, found[0].against, found[0].against_scene) == (
        "Mara blinked, her brown eyes wet.", "Mara Quill's eye colour: blue", 3)
    grey_blue = [{"name": "Mara", "feature": "eye colour", "value": "grey-blue"}]
    assert check(scene(m, "Her grey-blue eyes.", appearance=grey_blue)) == []
    record(m, 5, appearance=brown)                  # the first statement stands
    assert m.find_character("Mara Quill")["appearance"] == {
        "eye colour": {"value": "blue", "in": 3}}
    assert check(scene(m, "Tobin was tall.", 6, appearance=[
        {"name": "Tobin Keel", "feature": "height", "value": "short"}])) == []   # first said


def test_a_lost_items_quote_is_the_sentence_that_uses_it():
    m = memory()
    record(m, 3, items=[{"name": "Mara Quill", "item": "brass key", "event": "gives",
                         "to": "Tobin Keel"}])
    prose = ("The brass bell rang over the quay as Mara climbed the steps. Mara had given "
             "the key to Tobin in the spring. Now she turned the brass key in the lock.")
    found = check(scene(m, prose, items=[{"name": "Mara Quill", "item": "the brass key",
                                          "event": "uses"}]))
    assert kinds(found) == ["lost_item"]
    assert found[0].quote == "Now she turned the brass key in the lock."
