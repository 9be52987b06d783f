"""Payoffs (story/outline/payoffs.py): each loop of a book with an outline gets a planned payoff and
a status, the loops due are the ones the book has reached, none opens in the final act,
and the end waits a bounded number of scenes for the loops still open."""

from __future__ import annotations

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory, open_loop, resolve_loop
from novel_agent.story.outline.file import Act, Arc, Beat, Chapter, Outline
from novel_agent.story.outline.payoffs import (
    apply_settled,
    default_payoff,
    due,
    final_act,
    named_payoffs,
    settle,
    settled_lines,
)
from novel_agent.story.outline.position import position
from novel_agent.story.outline.standing import FINALE_SCENES, book_standing, scene_shape
from novel_agent.story.scenes import Scene


def outline(chapters: int = 8) -> Outline:
    """Two acts: chapters 1..chapters-2, then the last two; two beats and a scene each."""
    made = [Chapter(n, f"C{n}", scenes=1, beats=(Beat(f"{n}.1", "a"), Beat(f"{n}.2", "b")))
            for n in range(1, chapters + 1)]
    return Outline(Arc("a", "e"), (Act("I", chapters=tuple(made[:-2])),
                                   Act("II", chapters=tuple(made[-2:]))))


def at(book: Outline, chapter: int, done: int = 0):
    """Where the book stands with the beats before chapter `chapter` done, and `done` of its."""
    status = {b.id: "done" for c in book.chapters() for b in c.beats
              if c.number < chapter or (c.number == chapter and int(b.id.split(".")[1]) <= done)}
    written = {c.number: 1 for c in book.chapters() if c.number < chapter}
    return position(book, written, status)


def loop(key: str, payoff=None, status="open", opened=1, **more) -> dict:
    return {"id": key, "description": f"who took the {key}", "status": status,
            "opened_in": opened, "scenes": [opened], **({"payoff": payoff} if payoff else {}),
            **more}


def test_a_loop_pays_off_a_quarter_of_the_book_on_and_in_the_final_act_in_the_last_chapter():
    book = outline(8)
    assert default_payoff(book, at(book, 1)) == "3"           # 2 on (8 / 4)
    assert default_payoff(book, at(book, 5)) == "7"
    assert default_payoff(book, at(book, 6)) == "8"           # never past the last chapter
    assert default_payoff(book, at(book, 7)) == "8"           # the final act: the last chapter
    assert not final_act(book, at(book, 6)) and final_act(book, at(book, 7))
    one_act = Outline(Arc("a", "e"), (Act("I", chapters=book.chapters()[:3]),))
    assert not final_act(one_act, at(one_act, 2)) and final_act(one_act, at(one_act, 3))


def test_a_loop_is_due_from_its_chapter_or_beat_on_most_urgent_first():
    book = outline(8)
    loops = [loop("map", "4", opened=3), loop("ring", "3.2", opened=2), loop("key", "3"),
             loop("coat", "5"), loop("bell", "3", status="resolved"),
             loop("oar", "2", keep_open=True), loop("hat")]
    assert [l["id"] for l in due(loops, book, at(book, 3))] == ["key"]   # 3.2 not yet
    assert [l["id"] for l in due(loops, book, at(book, 3, done=1))] == ["key", "ring"]
    assert [l["id"] for l in due(loops, book, at(book, 4))] == ["key", "ring", "map"]
    finished = position(book, {c.number: 1 for c in book.chapters()},
                        {b.id: "done" for b in book.beats()})
    assert finished.finished                    # past the last beat: every loop left is due
    assert [l["id"] for l in due(loops, book, finished)] == ["key", "ring", "map", "coat", "hat"]


def test_settle_gives_payoffs_defers_the_passed_and_marks_the_touched_progressing():
    book = outline(8)
    loops = [loop("new", opened=9), loop("named", opened=9), loop("late", "3", opened=2),
             loop("touched", "6", opened=2), loop("done", "3", status="resolved"),
             loop("kept", "2", keep_open=True)]
    loops[3]["scenes"].append(9)
    settled = settle(loops, book, at(book, 5), 9, {"named": "6.2"})
    assert settled == {"new": {"payoff": "7"}, "named": {"payoff": "6.2"},
                       "late": {"payoff": "5", "status": "deferred"},
                       "touched": {"status": "progressing"}}
    assert [l.get("status") for l in loops] == ["open", "open", "deferred", "progressing",
                                                 "resolved", "open"]
    assert settled_lines(settled) == ["loop payoff: new in 7", "loop payoff: named in 6.2",
                                      "loop deferred: late to 5", "loop progressing: touched"]
    assert settle(loops, book, at(book, 5), 10) == {}          # settled: nothing more to do
    again = [loop("new", opened=9), loop("late", "3", opened=2), loop("touched", "6", opened=2)]
    again[2]["scenes"].append(9)
    assert apply_settled(again, settled) == ["loop payoff: new in 7", "loop deferred: late to 5",
                                             "loop progressing: touched"]
    assert again == [l for l in loops if l["id"] in ("new", "late", "touched")]


def test_the_planner_names_a_payoff_as_its_open_loops_target_when_it_lies_ahead():
    book, memory = outline(8), Memory()
    opened, _ = open_loop(memory, "Who rang the drowned bell?", tick=4)
    ask = [("Who rang the drowned bell?", "6.2"), ("Who rang the drowned bell?", "2"),
           ("Who rang the drowned bell?", "sometime"), ("Who is nobody?", "7")]
    for asked, wanted in zip(ask, [{opened["id"]: "6.2"}, {}, {}, {}]):
        assert named_payoffs([asked], memory.find_loop, book, at(book, 4)) == wanted


def test_progressing_and_deferred_loops_are_still_open():
    memory = Memory()
    for n, status in enumerate(("open", "progressing", "deferred", "resolved")):
        made, _ = open_loop(memory, f"Who stole ledger number {n}?", tick=1)
        made["status"] = status
    assert [l["status"] for l in memory.open_loops()] == ["open", "progressing", "deferred"]
    assert memory.find_loop("Who stole ledger number 2?")["status"] == "deferred"
    assert resolve_loop(memory, "Who stole ledger number 1?", tick=2)["status"] == "resolved"


def test_a_loops_file_may_say_its_payoff_and_keep_open_and_a_bad_one_names_the_line(tmp_path):
    folder = tmp_path / "memory" / "loops"
    folder.mkdir(parents=True)
    (folder / "bell.yaml").write_text("description: Who rang the bell?\nstatus: deferred\n"
                                      "payoff: '7.2'\nkeep_open: true\n")
    (folder / "oar.yaml").write_text("description: Whose oar?\npayoff: 7\n")
    loops = load_memory(tmp_path / "memory").loops
    assert [(l["payoff"], l.get("keep_open")) for l in loops] == [("7.2", True), (7, None)]
    for text, key, line in (("status: closed\n", "status", 2), ("keep_open: yes please\n",
                                                                "keep_open", 2),
                            ("payoff: 7.2\n", "payoff", 2)):
        (folder / "oar.yaml").write_text("description: Whose oar?\n" + text)
        with pytest.raises(FileFormatError) as bad:
            load_memory(tmp_path / "memory")
        assert f"'{key}' must be" in str(bad.value) and bad.value.line == line


def scene(tick: int, chapter: int, beat: str = "") -> Scene:
    return Scene(tick, "Rain fell.", words=2, chapter=chapter, beat=beat,
                 beat_status="done" if beat else "")


def test_the_end_waits_for_the_loops_left_open_a_bounded_number_of_scenes():
    book = Outline(Arc("a", "e"), (Act("I", chapters=(
        Chapter(1, "One", scenes=2, beats=(Beat("1.1", "a"),)),
        Chapter(2, "Two", scenes=2, beats=(Beat("2.1", "b"),)))),))
    scenes = [scene(1, 1, "1.1"), scene(2, 2, "2.1")]           # the last beat, 2 scenes in
    open_ones = [loop("map", "2"), loop("oar", "1", keep_open=True)]
    at0 = book_standing(book, scenes, "rising", open_ones)
    assert at0.position.finished and not at0.finished and at0.in_finale
    assert (at0.finale, at0.finale_left, [l["id"] for l in at0.due]) == (0, FINALE_SCENES, ["map"])
    assert scene_shape(at0, "", "", 5, "why")["chapter"] == 2     # an ending scene: the last
    more = scenes + [scene(t, 2) for t in range(3, 3 + FINALE_SCENES)]
    end = book_standing(book, more, "rising", open_ones)
    assert end.finished and end.finale == FINALE_SCENES
    assert end.finished_line() == ("the book is finished: 2 chapters, 5 scenes, 10 words; 1 loop "
                                   "left open; 1 kept open on purpose: oar")
    late = [scene(t, 1 + (t > 3)) for t in range(1, 7)]    # no beat done: each chapter 1.5x
    stretch = book_standing(book, late, "rising", open_ones)
    assert stretch.position.finished and stretch.finished       # 1.5 x 4 planned: no more room
    assert (stretch.finale, stretch.finale_left) == (0, 0)
    assert book_standing(book, scenes[:1], "rising", open_ones).finale_left == 0
    resolved = [loop("map", "2", status="resolved"), open_ones[1]]
    paid = book_standing(book, scenes, "rising", resolved)
    assert paid.finished and paid.finished_line().endswith("; 1 kept open on purpose: oar")
    assert book_standing(book, scenes, "rising").finished      # no loops given: as before
