"""Where a book with an outline stands, from its scenes alone: the next scene's target
tension (its beat's, else the curve's), the last scenes' realized tension, the beats it
may advance, the end, and each past scene's target as its planner was shown it."""

from __future__ import annotations

import pytest

from novel_agent.errors import BookFinishedError
from novel_agent.story.outline.curves import target_tension
from novel_agent.story.outline.file import Act, Arc, Beat, Chapter, Outline
from novel_agent.story.outline.standing import book_standing, refuse_finished, tension_course
from novel_agent.story.scenes import Scene


def outline() -> Outline:
    return Outline(Arc("a", "e"), (Act("I", chapters=(
        Chapter(1, "One", scenes=2, beats=(Beat("1.1", "a", 7), Beat("1.2", "b"))),
        Chapter(2, "Two", scenes=2))),))


def scene(tick, chapter, beat="", status="", tension=None) -> Scene:
    return Scene(tick, "Rain fell.", words=2, chapter=chapter, beat=beat, beat_status=status,
                 tension=tension)


def test_the_target_is_the_current_beats_tension_else_the_curves():
    at = book_standing(outline(), [], "rising")
    assert (at.target, at.choices()) == (7, ("1.1", "1.2"))          # its own
    at = book_standing(outline(), [scene(1, 1, "1.1", "done", 6)], "rising")
    assert at.target == round(target_tension("rising", 0.75)) == at.position.beat.tension
    done = [scene(1, 1, "1.1", "done", 6), scene(2, 1, "1.2", "done", 8)]
    at = book_standing(outline(), done, "rising")                     # chapter 2: no beats
    assert at.position.beat is None and at.choices() == ()
    assert at.target == round(target_tension("rising", at.position.progress))
    assert (at.realized, at.scenes, at.words) == (((1, 6), (2, 8)), 2, 4)


def test_the_planner_sees_the_last_five_realized_tensions():
    scenes = [scene(t, 1, "1.1", "partly", t % 10) for t in range(1, 9)]
    assert book_standing(outline(), scenes, "rising").realized == tuple(
        (t, t % 10) for t in range(4, 9))


def test_a_finished_book_refuses_a_tick_with_its_counts():
    scenes = [scene(1, 1, "1.1", "done"), scene(2, 1, "1.2", "done"), scene(3, 2), scene(4, 2)]
    at = book_standing(outline(), scenes, "three_act")
    assert at.finished and at.finished_line() == "the book is finished: 2 chapters, 4 scenes, 8 words"
    with pytest.raises(BookFinishedError) as stop:
        refuse_finished(at)
    assert stop.value.exit_code == 6 and stop.value.line == at.finished_line()
    refuse_finished(book_standing(outline(), scenes[:3], "three_act"))     # not yet
    refuse_finished(None)                                                  # no outline


def test_each_scenes_target_is_the_one_its_planner_was_shown():
    scenes = [Scene(1, "x"), scene(2, 1, "1.1", "partly", 3), scene(3, 1, "1.1", "done", 7),
              scene(4, 1, "1.2", "done", 5)]
    course = tension_course(outline(), scenes, "rising")
    assert course == {2: (7, 3), 3: (7, 7), 4: (book_standing(outline(), scenes[:3],
                                                              "rising").target, 5)}
