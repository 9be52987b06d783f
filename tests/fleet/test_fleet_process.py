"""`novel fleet run` as a real process: 20 offline books × 10 ticks; `novel fleet stop`
(SIGTERM) finishes the ticks in flight and exits 0; kill -9 mid-run, then `novel fleet
run` again: every book has its 10 scenes, none lost, none doubled."""

from __future__ import annotations

import signal

from novel_agent.fleet.view import read_state
from novel_agent.story.project.folder import create_project
from novel_agent.story.scenes import scene_ticks
from tests.support.crashes import assert_sound
from tests.support.processes import novel, until  # noqa: F401 - novel is a fixture

BOOKS, TICKS = 20, 10


def make_books(folder):
    return [create_project(folder / f"book-{i:02d}", {
        "name": f"book-{i:02d}", "premise": f"Book {i}: a keeper finds a drowned man's map.",
        "preset": "balanced"}, config={"llm": {"provider": "offline", "seed": i}})
        for i in range(1, BOOKS + 1)]


def landed(books) -> int:
    return sum(len(scene_ticks(b.scenes_dir)) for b in books)


def test_fleet_stop_finishes_the_ticks_in_flight_and_exits_0(novel, projects_dir):
    books = make_books(projects_dir)
    proc = novel("fleet", "run", "--ticks", str(TICKS))
    until(lambda: landed(books) >= 15, timeout=120, what="15 scenes")
    code, out, err = novel.run("fleet", "stop")
    assert code == 0 and out.startswith(f"asked novel fleet (pid {proc.pid}) to finish"), err
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "finishing the ticks in flight, then stopping" in out
    state = read_state(projects_dir)
    assert state.state == "stopped" and state.ticks == landed(books)
    assert {b.state for b in state.books} <= {"stopped", "done"}
    for book in books:          # every tick that started, finished: no half-made tick left
        ticks = scene_ticks(book.scenes_dir)
        assert ticks == list(range(1, len(ticks) + 1))
        assert not any(book.drafts_dir.glob("*")) and not any((book.novel_dir / "txn").glob("*"))
        assert book.state()["tick"] == len(ticks)
        assert not book.lock_file.read_text()        # released


def test_kill_9_then_run_again_loses_nothing_and_doubles_nothing(novel, projects_dir):
    books = make_books(projects_dir)
    proc = novel("fleet", "run", "--ticks", str(TICKS), "--concurrency", "8")
    until(lambda: landed(books) >= 30, timeout=120, what="30 scenes")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = {b.name: scene_ticks(b.scenes_dir) for b in books}
    status = novel.run("fleet", "status")
    assert "ended without a word, killed?" in status[1]
    code, out, err = novel.run("fleet", "run", "--ticks", str(TICKS), timeout=300)
    assert code == 0, err
    assert read_state(projects_dir).state == "finished"
    for book in books:
        assert_sound(book, TICKS)           # scenes 1..10, plans, status, doctor, no journal
        kept = before[book.name]
        assert scene_ticks(book.scenes_dir)[:len(kept)] == kept
        assert len(list(book.plans_dir.glob("*"))) == TICKS     # no plan of a doubled tick
    assert out.splitlines()[-1].startswith(f"fleet  {BOOKS} books ({BOOKS} done): ")
