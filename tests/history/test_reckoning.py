"""What a rewind, an undo, a redo or a branch deletion would do, told before it is done
(for a confirmation: `rewinding`, `undoing`, `redoing`, `deleting`): exactly what the act
then does, its tag included, with nothing written; and the branch read cheaply for every
page (`current`)."""

from __future__ import annotations

import pytest

from novel_agent.history import branches, redo
from novel_agent.history.git import HistoryError
from novel_agent.history.hooks import opened
from novel_agent.history.rewind import rewind, rewinding, undo, undoing
from novel_agent.history.store import History
from tests.support.projects import files_of
from tests.support.ticking import run_ticks


def whole(project) -> tuple[dict[str, bytes], str]:
    """The project's files and the history's refs."""
    history = History(project)
    return files_of(project.root), history.git.text("for-each-ref",
                                                    "--format=%(refname) %(objectname)")


def told(moved) -> tuple:
    return (moved.branch, moved.before.sha, moved.after.sha, moved.kept,
            sorted(moved.changed))


def test_a_rewind_and_its_undo_are_told_as_they_are_done(project):
    run_ticks(project, 5)
    before = whole(project)
    reckoned = rewinding(project, 2)
    assert whole(project) == before
    assert reckoned.scenes("D") == [3, 4, 5] and reckoned.kept == "kept/main-5"
    with opened(project):
        done = rewind(project, 2)
    assert told(done) == told(reckoned)
    reckoned = undoing(project)
    assert reckoned.scenes("A") == [3, 4, 5]
    with opened(project):
        assert told(undo(project)) == told(reckoned)
    again = rewinding(project, 5)                          # where the book is: no move
    assert again.after.sha == again.before.sha and again.kept == "" and again.changed == []


def test_a_tag_name_taken_is_told_as_the_act_will_take_the_next(project):
    run_ticks(project, 3)
    with opened(project):
        rewind(project, 1)
    run_ticks(project, 2, offline_seed=7)  # tick 3 again: another entry at tick 3
    reckoned = rewinding(project, 1)
    assert reckoned.kept == "kept/main-3-2"
    with opened(project):
        assert rewind(project, 1).kept == "kept/main-3-2"


def test_a_redo_is_told_as_its_rewind_is_done(project):
    run_ticks(project, 4)
    before = whole(project)
    reckoned = redo.redoing(project, 3)
    assert whole(project) == before
    assert reckoned.after.tick == 2 and reckoned.scenes("D") == [3, 4]
    with opened(project):
        assert told(redo.begin(project, 3)) == told(reckoned)


def test_a_deletion_is_told_with_its_tag(project, cli):
    run_ticks(project, 2)
    cli("branch", "new", "b", "-p", "harbour")
    cli("branch", "switch", "main", "-p", "harbour")
    before = whole(project)
    branch, tag = branches.deleting(project, "b")
    assert whole(project) == before and (branch.name, tag) == ("b", "deleted/b")
    with opened(project):
        assert branches.delete(project, "b") == tag


@pytest.mark.parametrize("reckon, message", [
    (lambda p: rewinding(p, 9), "cannot rewind to tick 9: the project is at tick 2"),
    (lambda p: undoing(p), "nothing to undo: branch 'main' was never rewound"),
    (lambda p: redo.redoing(p, 0), "no tick 0 to redo: the project's ticks are 1–2"),
    (lambda p: branches.deleting(p, "main"), "cannot delete branch 'main': the project is on"),
    (lambda p: branches.deleting(p, "nope"), "no branch 'nope' (branches: main)"),
])
def test_what_cannot_be_done_is_told_as_the_act_would_refuse_it(project, reckon, message):
    run_ticks(project, 2)
    before = whole(project)
    with pytest.raises(HistoryError, match=message.replace("(", r"\(").replace(")", r"\)")):
        reckon(project)
    assert whole(project) == before


def test_before_any_history_nothing_can_be_told(project):
    with pytest.raises(HistoryError, match="the project has no history yet"):
        rewinding(project, 0)


def test_the_current_branch_is_read_from_one_file_and_never_fails(project, cli):
    assert branches.current(project) is None               # no history yet
    run_ticks(project, 1)
    assert branches.current(project) == "main"
    cli("branch", "new", "side-2", "-p", "harbour")
    assert branches.current(project) == "side-2"
    head = project.novel_dir / "history.git" / "HEAD"
    for text in (b"\xff\xfe", b"0123456789abcdef0123456789abcdef01234567\n",
                 b"ref: refs/heads/a/../../b\n", b""):
        head.write_bytes(text)
        assert branches.current(project) is None
    head.unlink()
    assert branches.current(project) is None
