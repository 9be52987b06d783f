"""Drift at a checkpoint (story/outline/drift.py): a checkpoint is the scene that closes a chapter
(every Nth), never the book's end; drift is measured from the scenes and the loops alone:
beats missed, beats done before an earlier one, new threads no beat of the rest names."""

from __future__ import annotations

from novel_agent.story.outline.drift import THREADS, Drift, checkpoint, measure
from novel_agent.story.scenes import Scene
from tests.support.projects import short_outline

OUTLINE = short_outline(chapters=4, beats=2, scenes=2)     # beats "k.1", "k.2"; 2 scenes each


def scene(tick: int, chapter: int, beat: str = "", status: str = "not") -> Scene:
    return Scene(tick=tick, body="", title=f"Scene {tick}", chapter=chapter, beat=beat,
                 beat_status=status if beat else "")


def loop(text: str, opened: int, status: str = "open") -> dict:
    return {"id": text[:8], "description": text, "status": status, "opened_in": opened}


ON_COURSE = [scene(1, 1, "1.1", "done"), scene(2, 1, "1.2", "done")]


def test_a_checkpoint_is_the_scene_that_closes_a_chapter():
    assert checkpoint(OUTLINE, ON_COURSE[:1]) is None            # chapter 1 goes on
    assert checkpoint(OUTLINE, ON_COURSE) == 2                   # its beats done: on to 2
    stretched = [scene(t, 1, "1.1", "partly") for t in (1, 2, 3)]
    assert checkpoint(OUTLINE, stretched[:2]) is None            # room left in its stretch
    assert checkpoint(OUTLINE, stretched) == 2                   # 1.5 x 2 scenes: it closes
    assert checkpoint(OUTLINE, []) is None
    assert checkpoint(OUTLINE, [Scene(tick=1, body="", title="No outline")]) is None


def test_the_book_s_end_is_no_checkpoint_and_every_counts_chapters_closed():
    book = [scene(t, (t + 1) // 2, f"{(t + 1) // 2}.{2 - t % 2}", "done") for t in range(1, 9)]
    assert checkpoint(OUTLINE, book) is None                     # the last beat: finished
    assert [checkpoint(OUTLINE, book[:t], every=2) for t in (2, 4, 6)] == [None, 3, None]
    assert [checkpoint(OUTLINE, book[:t], every=1) for t in (2, 4, 6)] == [2, 3, 4]


def test_a_book_on_course_has_not_drifted():
    drift = measure(OUTLINE, ON_COURSE, [], 2)
    assert drift == Drift(2, (1,), landed=OUTLINE.chapter(1).beats)
    assert not drift.drifted and drift.line() == "on course"


def test_beats_left_undone_are_missed_and_done_early_out_of_order():
    scenes = [scene(1, 1, "1.2", "done"), scene(2, 1, "1.2", "done"), scene(3, 1, "1.1", "not")]
    drift = measure(OUTLINE, scenes, [], 2)
    assert [b.id for b in drift.missed] == ["1.1"]
    assert [b.id for b in drift.out_of_order] == ["1.2"]           # done before 1.1
    assert [b.id for b in drift.landed] == ["1.2"]
    assert drift.drifted and drift.line() == "1 beat missed, 1 out of order"


def test_only_the_chapters_since_the_last_checkpoint_count():
    scenes = [scene(1, 1, "1.1", "not"), scene(2, 1, "1.1", "not"), scene(3, 1, "1.1", "not"),
              scene(4, 2, "2.1", "done"), scene(5, 2, "2.2", "done")]
    assert checkpoint(OUTLINE, scenes) == 3
    drift = measure(OUTLINE, scenes, [loop("who rang the bell at the harbour", 2)], 3)
    assert drift.closed == (2,) and not drift.missed and not drift.threads    # chapter 1's: old
    assert not drift.drifted
    two = measure(OUTLINE, scenes, [], 3, every=2)
    assert two.closed == (1, 2) and [b.id for b in two.missed] == ["1.1", "1.2"]


def test_new_open_threads_no_beat_names_are_drift_from_THREADS_on():
    scenes = ON_COURSE
    named = loop("why Beat Chapter happens", 1)           # the beats' words: "Beat 1 of chapter 3 happens"
    loops = [loop(f"who hid the {thing} from the keeper", 2) for thing in ("ledger", "locket")]
    loops += [named, loop("what the drowned sailor owed", 2, status="resolved"),
              loop("where the old lamp went", 0)]
    drift = measure(OUTLINE, scenes, loops, 2)
    assert drift.threads == ("who hid the ledger from the keeper",
                             "who hid the locket from the keeper")
    assert len(drift.threads) < THREADS and not drift.drifted
    more = measure(OUTLINE, scenes, [*loops, loop("whose boat burned at the quay", 1)], 2)
    assert len(more.threads) == THREADS and more.drifted
    assert more.line() == "3 new threads"


def test_a_progressing_or_deferred_thread_is_still_open():
    loops = [loop(f"who hid the {thing} from the keeper", 2, status=status)
             for thing, status in (("ledger", "progressing"), ("locket", "deferred"),
                                   ("lantern", "open"))]
    drift = measure(OUTLINE, ON_COURSE, loops, 2)
    assert len(drift.threads) == THREADS and drift.drifted
