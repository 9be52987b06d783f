"""`novel rewind N` and `--undo`: the project exactly as a fresh run stopped at tick N
would have it (the offline model, the same seed), nothing lost, refused while another
process holds the project, and a kill -9 at each step leaves it before or after."""

from __future__ import annotations

import signal

import pytest

from novel_agent.books.importer import import_manuscript
from novel_agent.books.split import load_manuscript
from novel_agent.history.hooks import opened
from novel_agent.history.store import History
from novel_agent.models.offline import OfflineModel
from novel_agent.tick.session import Session
from tests.support.clirunner import invoke
from tests.support.crashes import forked
from tests.support.manuscripts import write_book
from tests.support.projects import fresh, story_files
from tests.support.ticking import run_ticks


def rewind(project, *args, ok=True):
    result = invoke("rewind", *args, "-p", str(project.root))
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("k", [10, 7], ids=["at a checkpoint", "between checkpoints"])
def test_rewind_equals_a_fresh_run_stopped_there(project, tmp_path, k):
    run_ticks(project, 13)
    other = fresh(tmp_path / "fresh")
    run_ticks(other, k)
    result = rewind(project, str(k))
    assert f"rewound main: tick 13 → tick {k}; {13 - k} scenes taken away; what was there " \
           "is kept as kept/main-13 (`novel rewind --undo` brings it back)" in result.output
    assert story_files(project) == story_files(other)
    # and the project goes on from there as the fresh one does
    run_ticks(project, 1)
    run_ticks(other, 1)
    assert story_files(project) == story_files(other)


def test_rewind_after_an_import(project, tmp_path):
    book = load_manuscript(write_book(tmp_path / "book.md", chapters=1), "auto", 400)
    other = fresh(tmp_path / "fresh")
    for p in (project, other):
        with opened(p), Session.open(p, p.config(), make_model=lambda: OfflineModel(seed=1)) as s:
            import_manuscript(s, book)
    assert [e.kind for e in History(project).entries()][:3] == ["import"] * 3
    run_ticks(project, 4)
    rewind(project, "3")
    assert story_files(project) == story_files(other)


def test_rewind_and_undo_round_trip_byte_for_byte(project):
    run_ticks(project, 12)
    before = story_files(project)
    rewind(project, "4")
    assert project.tick() == 4 and not project.plan_path(5).exists()
    assert not (project.summaries_dir / "checkpoint_010.md").exists()
    assert project.state()["tick"] == 4
    undone = rewind(project, "--undo")
    assert "undone: main: tick 4 → tick 12; what was there is kept as kept/main-4" \
        in undone.output
    assert story_files(project) == before
    rewind(project, "--undo")                   # and undoing the undo rewinds again
    assert project.tick() == 4


def test_a_rewind_to_where_the_book_is_leaves_the_undo_as_it_was(project, snapshot):
    run_ticks(project, 6)
    rewind(project, "4")
    before, tags = snapshot(project.root), History(project).git.text("tag")
    again = rewind(project, "4")
    assert again.output == "rewound main: already at tick 4; nothing changed\n"
    assert snapshot(project.root) == before and History(project).git.text("tag") == tags
    assert "undone: main: tick 4 → tick 6" in rewind(project, "--undo").output
    assert project.tick() == 6


def test_nothing_is_lost_hand_edits_and_all(project):
    run_ticks(project, 5)
    scene = project.scene_path(5)
    scene.write_text(scene.read_text() + "\nThe author's own ending.\n")
    edited = story_files(project)
    rewind(project, "2")
    assert project.tick() == 2
    rewind(project, "--undo")
    assert story_files(project) == edited


def test_the_rewound_project_is_what_every_command_sees(project, cli):
    run_ticks(project, 6)
    rewind(project, "3")
    status = cli("status", "-p", "harbour").stdout
    assert "ticks       3  (3 scenes" in status
    exported = cli("export", "-p", "harbour", "--format", "md", "-o", "book.md")
    assert exported.exit_code == 0
    book = (project.root.parent.parent / "book.md").read_text()
    title4 = History(project).entries(rev="kept/main-6")[2].subject.split(": ", 1)[1]
    assert title4 not in book
    searched = cli("search", "-p", "harbour", "lantern", ok=False).stdout
    assert "scene 4" not in searched and "scene_004" not in searched
    assert "stats of harbour: 3 scenes" in cli("stats", "-p", "harbour").stdout
    listed = cli("scenes", "list", "-p", "harbour").stdout
    assert "   3 " in listed and "   4 " not in listed
    usage = cli("usage", "-p", "harbour").stdout      # money spent stays spent: 6 ticks' calls
    assert any(line.split()[:2] == ["planner", "6"] for line in usage.splitlines())


def test_refused_while_another_process_holds_the_project(project, snapshot):
    run_ticks(project, 3)
    before = snapshot(project.root)
    project.acquire_lock()
    try:
        result = rewind(project, "1", ok=False)
    finally:
        project.release_lock()
    assert result.exit_code == 1
    assert "is busy: process" in result.output and "novel stop" in result.output
    assert snapshot(project.root) == before


@pytest.mark.parametrize("args, message", [
    (["9"], "Error: cannot rewind to tick 9: the project is at tick 3"),
    (["--undo"], "Error: nothing to undo: branch 'main' was never rewound"),
    ([], "Error: give a tick to rewind to, or --undo"),
])
def test_bad_requests_are_one_line_and_change_nothing(project, snapshot, args, message):
    run_ticks(project, 3)
    before = snapshot(project.root)
    result = rewind(project, *args, ok=False)
    assert result.exit_code != 0 and message in result.output
    assert snapshot(project.root) == before


@pytest.mark.parametrize("point, after", [("before_journal", False), ("mid_commit", True)])
def test_killed_inside_a_rewind_the_project_is_before_or_after(project, cli, point, after):
    run_ticks(project, 6)
    before = story_files(project)
    assert forked(project, ["rewind", "2"], point) == -signal.SIGKILL
    status = cli("status", "-p", "harbour").output    # the first command recovers, and says so
    assert ("note: recovered: the rewind to tick 2 was interrupted and has been finished\n"
            if after else "note: the rewind to tick 2 was interrupted before it changed "
            "anything: the project is as it was before it (run it again)\n") in status
    if after:
        other = fresh(project.root.parent.parent / "fresh")
        run_ticks(other, 2)
        assert story_files(project) == story_files(other)
        assert History(project).head().tick == 2
        rewind(project, "--undo")
    assert story_files(project) == before
    assert History(project).head().tick == 6
    assert cli("doctor", "-p", "harbour").exit_code == 0
