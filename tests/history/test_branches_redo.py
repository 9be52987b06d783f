"""`novel redo` (tick N written again, a note for it alone, the old scene kept) and
`novel branch` (alternate continuations, each its own book), with kills in each."""

from __future__ import annotations

import signal

import pytest

from novel_agent.history.store import History
from novel_agent.story.scenes import load_scene
from tests.support.crashes import forked
from tests.support.projects import fresh, story_files
from tests.support.ticking import run_ticks


def test_redo_writes_the_tick_again_with_the_note(project, cli):
    run_ticks(project, 5)
    old = project.scene_path(4).read_text()
    result = cli("redo", "4", "--note", "Mara keeps the key to herself.", "-p", "harbour")
    assert "rewound main: tick 5 → tick 3; 2 scenes taken away; what was there is kept as " \
           "kept/main-5" in result.output
    assert "→ harbour/scenes/scene_004.md" in result.output
    assert project.tick() == 4 and not project.scene_path(5).exists()
    scene = load_scene(project.scene_path(4))
    assert "as the author asks: Mara keeps the key to herself." in scene.body
    assert project.scene_path(4).read_text() != old
    assert not (project.novel_dir / "redo.yaml").exists()
    assert History(project).head().subject.endswith(" (note: Mara keeps the key to herself.)")
    kept = History(project).entries(rev="kept/main-5")
    old_entry = next(e for e in kept if e.kind == "tick" and e.tick == 4)
    shown = History(project).git.run("show", f"{old_entry.sha}:scenes/scene_004.md")
    assert shown.decode() == old                      # the old scene 4 is still in history
    # the note was for that tick only
    cli("tick", "-p", "harbour")
    assert "as the author asks" not in load_scene(project.scene_path(5)).body


def test_redo_without_a_note_of_the_last_tick(project, cli):
    run_ticks(project, 3)
    result = cli("redo", "-p", "harbour")
    assert "rewound main: tick 3 → tick 2; 1 scene taken away" in result.output
    assert project.tick() == 3


@pytest.mark.parametrize("point, landed", [("before_journal", False), ("after_write", False),
                                           ("after_commit", True)])
def test_killed_inside_a_redo_the_project_is_before_or_after(project, cli, point, landed):
    run_ticks(project, 4)
    before = story_files(project)
    assert forked(project, ["redo", "3", "--note", "Rain."], point) == -signal.SIGKILL
    status = cli("status", "-p", "harbour")
    if landed:
        assert project.tick() == 3 and "as the author asks: Rain." in \
            project.scene_path(3).read_text()
    else:
        assert story_files(project) == before
        if point != "before_journal":
            assert "the redo of tick 3 was interrupted before its tick landed: the project " \
                   "is back at tick 4" in status.output
        else:
            assert "note: the rewind that begins the redo of tick 3 was interrupted before it " \
                   "changed anything: the project is as it was before it (run it again)" \
                   in status.output
    assert not (project.novel_dir / "redo.yaml").exists()
    assert cli("doctor", "-p", "harbour").exit_code == 0


@pytest.mark.parametrize("point", ["mid_commit", "after_plan", "after_write"])
def test_a_redo_put_back_leaves_no_tag_and_the_undo_as_it_was(project, cli, point):
    """mid_commit: inside the rewind the redo begins with (finished, then put back); the
    others inside its tick."""
    run_ticks(project, 5)
    cli("rewind", "4", "-p", "harbour")           # the undo point: tick 5
    tags = History(project).git.text("tag")
    assert forked(project, ["redo", "4"], point) == -signal.SIGKILL
    status = cli("status", "-p", "harbour").output
    assert "the redo of tick 4 was interrupted before its tick landed" in status
    assert History(project).git.text("tag") == tags and project.tick() == 4
    assert "undone: main: tick 4 → tick 5" in cli("rewind", "--undo", "-p", "harbour").output


def test_a_redo_that_lands_keeps_the_old_scene_under_its_tag(project, cli):
    run_ticks(project, 3)
    cli("redo", "-p", "harbour")
    assert History(project).git.text("tag") == "kept/main-3"


def test_two_branches_from_tick_20_each_export_their_own_book(project, cli, tmp_path):
    run_ticks(project, 22)
    made = cli("branch", "new", "whatif", "--at", "20", "-p", "harbour")
    assert "on new branch whatif, at tick 20" in made.output
    assert project.tick() == 20
    cli("tick", "-n", "3", "--provider", "offline", "-p", "harbour")
    cli("redo", "21", "--note", "A storm takes the lighthouse.", "-p", "harbour")
    assert "branch      whatif  (" in cli("status", "-p", "harbour").output
    cli("export", "-p", "harbour", "--format", "md", "-o", str(tmp_path / "whatif.md"))
    listed = cli("branch", "list", "-p", "harbour").output.splitlines()
    assert listed[0].startswith("  main                 tick 22")
    assert listed[1].startswith("* whatif               tick 21")
    switched = cli("branch", "switch", "main", "-p", "harbour")
    assert "on branch main, at tick 22" in switched.output
    cli("export", "-p", "harbour", "--format", "md", "-o", str(tmp_path / "main.md"))
    main, whatif = (tmp_path / "main.md").read_text(), (tmp_path / "whatif.md").read_text()
    assert "A storm takes the lighthouse." in whatif and "A storm" not in main
    first20 = project.scene_path(20).read_text().split("---\n", 2)[2].strip()
    assert first20[:200] in main and first20[:200] in whatif
    other = fresh(tmp_path / "fresh")                 # main is as if whatif never was
    run_ticks(other, 22)
    assert story_files(project) == story_files(other)
    assert "deleted branch whatif; its entries are kept as the tag deleted/whatif" in \
        cli("branch", "delete", "whatif", "-p", "harbour").output
    assert [line[2:8] for line in cli("branch", "list", "-p", "harbour").output.splitlines()] \
        == ["main  "]


@pytest.mark.parametrize("args, message", [
    (["switch", "main"], "Error: already on branch 'main'"),
    (["switch", "nope"], "Error: no branch 'nope' (branches: main)"),
    (["new", "main"], "Error: a branch 'main' exists already"),
    (["new", "a b"], "Error: 'a b' is not a branch name"),
    (["new", "x", "--at", "9"], "Error: no history entry for tick 9 on branch 'main'"),
    (["delete", "main"], "Error: cannot delete branch 'main': the project is on it"),
])
def test_bad_branch_requests_are_one_line_and_change_nothing(project, cli, snapshot, args,
                                                             message):
    run_ticks(project, 2)
    before = snapshot(project.root)
    result = cli("branch", *args, "-p", "harbour", ok=False)
    assert result.exit_code == 1 and message in result.output
    assert snapshot(project.root) == before


def test_switch_is_refused_while_a_daemon_holds_the_project(project, cli):
    run_ticks(project, 2)
    cli("branch", "new", "b", "-p", "harbour")
    project.acquire_lock()
    try:
        result = cli("branch", "switch", "main", "-p", "harbour", ok=False)
    finally:
        project.release_lock()
    assert result.exit_code == 1 and "is busy" in result.output
    assert "branch      b  (" in cli("status", "-p", "harbour").output


@pytest.mark.parametrize("point, after", [("before_journal", False), ("mid_commit", True)])
def test_killed_inside_a_switch_the_project_is_before_or_after(project, cli, point, after):
    run_ticks(project, 3)
    cli("branch", "new", "b", "--at", "1", "-p", "harbour")
    run_ticks(project, 1)
    on_b = story_files(project)
    assert forked(project, ["branch", "switch", "main"], point) == -signal.SIGKILL
    status = cli("status", "-p", "harbour").output
    assert ("recovered: the switch to branch 'main' was interrupted and has been finished"
            if after else "the switch to branch 'main' was interrupted before it changed "
            "anything") in status
    if after:
        assert "branch      main  (" in status and project.tick() == 3
    else:
        assert "branch      b  (" in status and story_files(project) == on_b
    assert cli("doctor", "-p", "harbour").exit_code == 0
