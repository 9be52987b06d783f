"""What the planner is told of the outline ("Where the book stands": the act, the chapter,
the current and next beat, the room left, the beats overdue, the target tension against
the realized), pinned and within its share; what the extractor is told (the planned beat)."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config
from novel_agent.context.book_brief import OUTLINE_SHARE, beat_section, standing_forms, standing_section
from novel_agent.context.briefing import propose_briefing
from novel_agent.context.builders import planner_briefing
from novel_agent.context.engine import fit
from novel_agent.context.prompts import render_stage
from novel_agent.story.outline.file import Act, Arc, Beat, Chapter, Outline
from novel_agent.story.outline.standing import book_standing
from novel_agent.story.scenes import Scene
from novel_agent.text.tokens import TokenCounter
from tests.support import story_factory as sf

COUNTER = TokenCounter("gpt-4o")
CONFIG = load_config()


def outline() -> Outline:
    one = Chapter(1, "The Last Stranger", "Mara meets the map.", 2,
                  (Beat("1.1", "Mara finds the drowned man's map.", 3),
                   Beat("1.2", "Corin tells Mara what the map may mean.", 4)))
    two = Chapter(2, "The Cold Ledger", "A secret turns the story.", 2,
                  (Beat("2.1", "The ledger names the drowned man."),))
    return Outline(Arc("arc", "end"), (Act("The Discovery", "Mara is drawn in.", (one,)),
                                       Act("The Cost", "What it costs.", (two,))))


def scene(tick: int, chapter: int, beat: str, status: str, tension: int) -> Scene:
    return Scene(tick, "Rain.", words=100, chapter=chapter, beat=beat, beat_status=status,
                 tension=tension)


def test_the_planner_is_told_the_act_chapter_beats_room_and_tension():
    at = book_standing(outline(), [scene(1, 1, "1.1", "done", 4)], "three_act")
    assert standing_forms(at)[0] == (
        'Act 1 of 2, "The Discovery": Mara is drawn in.\n'
        'Chapter 1 of 2, "The Last Stranger": Mara meets the map.\n'
        "This scene is the chapter's scene 2 of 2: room for 1 scene, this one included.\n"
        "Current beat 1.2 (tension 4): Corin tells Mara what the map may mean.\n"
        "Next beat 2.1 (tension 9): The ledger names the drowned man.\n"   # (the curve's)
        "Tension: this scene's target is 4 of 10; the last scenes were 4 (scene 1): on target.\n"
        'A loop you open may name where it pays off as its open_loop target: a chapter ("7") '
        'or a beat ("7.2") ahead.')
    assert at.choices() == ("1.2", "2.1")


def test_a_beat_not_done_with_the_chapters_room_used_up_is_flagged_overdue():
    at = book_standing(outline(), [scene(1, 1, "1.1", "done", 2), scene(2, 1, "1.2", "partly", 2)],
                       "three_act")
    text = standing_forms(at)[0]
    assert "The chapter's room is used up (2 scenes written of its 2): land what is left of " \
           "it now." in text
    assert "OVERDUE, not done with the chapter's room used up: 1.2 (tension 4): Corin tells " \
           "Mara what the map may mean." in text
    assert "the last scenes were 2 (scene 1), 2 (scene 2): under it: raise the stakes." in text
    assert "OVERDUE: 1.2" in standing_forms(at)[-1]


def test_the_section_is_pinned_and_takes_the_richest_form_its_share_holds():
    at = book_standing(outline(), [], "three_act")
    rich, lean, bare = standing_forms(at)
    assert bare == ('Act 1 of 2; chapter 1 of 2, "The Last Stranger", room 2; beat 1.1 '
                    "(tension 3): Mara finds the drowned man's map.; target tension 3.")
    for form in (rich, lean, bare):
        budget = int(COUNTER.count(form) / OUTLINE_SHARE) + 1
        section = standing_section(at, COUNTER.count, budget)
        assert section.text == form and section.pinned and section.items == ("1.1", "1.2")
    assert standing_section(at, COUNTER.count, 10).text == bare     # the barest, never none


@pytest.mark.parametrize("budget", [1200, 2500, 30000])
def test_a_planner_prompt_keeps_where_the_book_stands_within_its_budget(budget):
    memory = sf.big_memory(1000, 1000, 1000, 200, seed=2)
    scenes = sf.SyntheticScenes(60, lambda t: 400, 2)
    recent = [scenes(t) for t in range(58, 61)]
    briefing = planner_briefing(sf.story(), memory, recent, tick=61,
                                shares=CONFIG.context.planner_shares,
                                overall_summary=sf.prose(300, 4))
    at = book_standing(outline(), [scene(1, 1, "1.1", "done", 3)], "three_act")
    section = standing_section(at, COUNTER.count, budget)
    fitted = fit(propose_briefing(briefing.with_section(section).with_values(beats=["1.2"]),
                                  COUNTER, budget),
                 render_stage, COUNTER, budget, CONFIG.context.compaction_thresholds)
    assert fitted.tokens <= budget and COUNTER.count(section.text) <= OUTLINE_SHARE * budget
    prompt = fitted.messages[-1]["content"]
    assert f"## Where the book stands\n{section.text}\n" in prompt
    assert prompt.index("## Where the book stands") > prompt.index("## Open plot loops")
    assert '- "beat": the id of the outline\'s beat this scene advances: "1.2"' in \
        fitted.messages[0]["content"]


def test_the_extractor_is_told_the_planned_beat():
    section = beat_section(Beat("2.1", "The ledger names the drowned man.", 8))
    assert section.pinned and section.text == ("Beat 2.1 of the outline, which this scene was "
                                               "meant to advance: The ledger names the drowned "
                                               "man.")


def test_a_beat_begun_is_to_be_finished_and_the_last_chapter_says_the_book_ends_in_it():
    begun = book_standing(outline(), [scene(1, 1, "1.1", "partly", 3)], "three_act")
    assert "Current beat 1.1 (tension 3): Mara finds the drowned man's map. (begun in an " \
           "earlier scene, not finished: finish it in this one)" in standing_forms(begun)[0]
    assert "last chapter" not in standing_forms(begun)[0]
    last = book_standing(outline(), [scene(1, 1, "1.1", "done", 3), scene(2, 1, "1.2", "done", 4)],
                         "three_act")
    assert "This is the book's last chapter: its last beat ends the book, as the arc ends: " \
        "end" in standing_forms(last)[0].splitlines()
    assert last.ending("2.1") == "end" and last.ending("1.2") == ""
