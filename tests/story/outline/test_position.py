"""Where the book stands against its outline: the chapter the next scene belongs to, its
current and next beat, the room left, overdue and missed beats, the end of the book."""

from __future__ import annotations

from novel_agent.story.outline.file import Act, Arc, Beat, Chapter, Outline
from novel_agent.story.outline.position import longest, position


def book() -> Outline:
    """Two acts: chapters 1 (3 scenes, beats 1.1 1.2), 2 (2 scenes, no beats), 3 (2 scenes,
    beat 3.1), 4 (1 scene, beats 4.1 4.2)."""
    chapters = [Chapter(1, "One", scenes=3, beats=(Beat("1.1", "a"), Beat("1.2", "b"))),
                Chapter(2, "Two", scenes=2),
                Chapter(3, "Three", scenes=2, beats=(Beat("3.1", "c"),)),
                Chapter(4, "Four", scenes=1, beats=(Beat("4.1", "d"), Beat("4.2", "e")))]
    return Outline(Arc("arc", "end"), (Act("I", chapters=tuple(chapters[:2])),
                                       Act("II", chapters=tuple(chapters[2:]))))


def test_a_new_book_starts_at_its_first_beat():
    at = position(book(), {}, {})
    assert (at.act.name, at.chapter.number, at.beat.id, at.next_beat.id) == ("I", 1, "1.1", "1.2")
    assert (at.written, at.room, at.overdue, at.missed, at.finished) == (0, 3, (), (), False)
    assert at.progress == 0.5 / 8


def test_the_chapter_keeps_its_scenes_while_its_beats_are_not_done():
    at = position(book(), {1: 2}, {"1.1": "done", "1.2": "partly"})
    assert (at.chapter.number, at.beat.id, at.next_beat.id, at.room) == (1, "1.2", "3.1", 1)
    assert at.overdue == ()
    over = position(book(), {1: 3}, {"1.1": "done"})
    assert (over.chapter.number, over.room, [b.id for b in over.overdue]) == (1, 0, ["1.2"])


def test_a_chapter_that_runs_past_its_stretch_is_left_with_its_beats_missed():
    assert longest(book().chapter(1)) == 4
    at = position(book(), {1: 4}, {"1.1": "done"})
    assert at.chapter.number == 2 and [b.id for b in at.missed] == ["1.2"]
    assert (at.beat, at.next_beat.id, at.room) == (None, "3.1", 2)    # chapter 2 has no beats


def test_a_chapter_whose_beats_are_done_ends_early_and_one_done_ahead_is_passed():
    at = position(book(), {1: 1}, {"1.1": "done", "1.2": "done"})
    assert at.chapter.number == 2                        # with room left in chapter 1
    ahead = position(book(), {1: 2, 2: 2}, {"1.1": "done", "1.2": "done", "3.1": "done"})
    assert (ahead.chapter.number, ahead.beat.id, ahead.act.name) == (4, "4.1", "II")
    assert ahead.progress == (3 + 2 + 2 + 0.5) / 8


def test_a_chapter_without_beats_takes_its_target_length():
    done = {"1.1": "done", "1.2": "done"}
    assert position(book(), {1: 2, 2: 1}, done).chapter.number == 2
    assert position(book(), {1: 2, 2: 2}, done).chapter.number == 3


def test_the_book_is_finished_when_its_last_beat_lands():
    every = {b.id: "done" for b in book().beats()}
    last = position(book(), {1: 2, 2: 2, 3: 1}, {**every, "4.2": "partly"})
    assert (last.chapter.number, last.beat.id, last.next_beat, last.finished) == (4, "4.2", None,
                                                                                  False)
    end = position(book(), {1: 2, 2: 2, 3: 1, 4: 1}, every)
    assert end.finished and end.chapter is None and end.progress == 1.0 and end.missed == ()
    # a book whose last chapter has run its length ends too, never loops: its beat missed
    cut = position(book(), {1: 2, 2: 2, 3: 1, 4: 1}, {**every, "4.2": "partly"})
    assert cut.finished and [b.id for b in cut.missed] == ["4.2"]


def test_beats_left_behind_are_missed_and_scenes_outside_the_outline_do_not_count():
    at = position(book(), {1: 3, 3: 1, 99: 5}, {"1.1": "done"})
    assert (at.chapter.number, [b.id for b in at.missed]) == (3, ["1.2"])


def test_the_scenes_say_what_each_chapter_holds_and_each_beats_best_status():
    from novel_agent.story.outline.position import tally
    from novel_agent.story.scenes import Scene
    scenes = [Scene(1, "a", chapter=1, beat="1.1", beat_status="partly"),
              Scene(2, "b", chapter=1, beat="1.1", beat_status="done"),
              Scene(3, "c", chapter=1, beat="1.1", beat_status="not"),
              Scene(4, "d", chapter=1, beat="1.2", beat_status="not"),
              Scene(5, "e"),                                # written before the outline
              Scene(6, "f", chapter=2)]
    written, status = tally(scenes)
    assert written == {1: 4, 2: 1}
    assert status == {"1.1": "done", "1.2": "not"}
    at = position(book(), written, status)
    assert (at.chapter.number, at.beat, at.written) == (2, None, 1)
    assert [b.id for b in at.missed] == ["1.2"]


def test_a_beat_is_passed_when_the_chapter_has_fewer_scenes_left_than_beats_to_land():
    """A 1.5B spent each chapter's three scenes on its first beat, and the book's last beat,
    its ending, would have had no scene: once a chapter holds a scene, a beat not done is
    passed (missed) when fewer scenes are left, up to the stretch, than beats to land."""
    two = Outline(Arc("arc", "end"), (Act("I", "", (
        Chapter(1, "One", scenes=2, beats=(Beat("1.1", "a"), Beat("1.2", "b"))),
        Chapter(2, "Two", scenes=2, beats=(Beat("2.1", "c"), Beat("2.2", "the end")))),),))
    assert position(two, {1: 1}, {"1.1": "partly"}).beat.id == "1.1"     # 2 left, 2 to land
    stuck = position(two, {1: 2}, {"1.1": "partly"})                     # 1 left, 2 to land
    assert (stuck.beat.id, [b.id for b in stuck.missed]) == ("1.2", ["1.1"])
    last = position(two, {1: 3, 2: 2}, {"1.2": "done", "2.1": "not"})
    assert (last.beat.id, last.next_beat, [b.id for b in last.missed]) == ("2.2", None,
                                                                           ["1.1", "2.1"])
    assert position(two, {1: 3, 2: 3}, {"1.2": "done", "2.2": "not"}).finished
