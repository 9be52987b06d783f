"""`novel rewind N`: the project exactly as it was after tick N; `--undo` brings back
what the last rewind took away.

Nothing is lost: before the branch moves, its last entry is kept under a tag
(`kept/<branch>-<tick>`, named in the result) and as the branch's undo point
(`refs/novel/undo/<branch>`). The files and the refs move in one transaction
(restore.move_to). The caller holds the project's lock, so a running daemon
refuses it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from novel_agent.history.git import HistoryError
from novel_agent.history.restore import differences, move_to
from novel_agent.history.store import SCENE_FILE_RE, Entry, History
from novel_agent.story.project.folder import Project

UNDO = "refs/novel/undo"


@dataclass
class Moved:
    """What a rewind (or its undo) did."""

    branch: str
    before: Entry          # the entry the branch was at
    after: Entry           # the entry it is at now
    kept: str              # the tag that keeps `before`
    changed: list[tuple[str, str]]

    def line(self, undo: str = "`novel rewind --undo`") -> str:
        """What was done, in one line; `undo`: how to bring it back, for the reader."""
        if self.after.sha == self.before.sha:
            return f"{self.branch}: already at tick {self.after.tick}; nothing changed"
        removed = sum(1 for status, path in self.changed
                      if status == "D" and path.startswith("scenes/"))
        gone = f"; {removed} scene{'s' if removed != 1 else ''} taken away" if removed else ""
        return (f"{self.branch}: tick {self.before.tick} → tick {self.after.tick}{gone}; "
                f"what was there is kept as {self.kept} ({undo} brings it back)")

    def scenes(self, status: str) -> list[int]:
        """The scenes the move takes away ("D") or brings ("A"), by tick."""
        return sorted(int(m.group(1)) for s, path in self.changed
                      if s == status and (m := SCENE_FILE_RE.match(path)))


def history_for(project: Project, now: Callable[[], datetime] | None = None) -> History:
    """The project's history with pending hand edits recorded (HistoryError without git)."""
    history = History(project, now=now)
    if not history.available:
        raise HistoryError("rewinding needs the `git` executable, which is not on PATH: "
                           "install git", path=str(project.root))
    history.record_pending()
    return history


def readable(project: Project) -> History:
    """The project's history as it is, to read what a move would do before it is done
    (HistoryError without git, or before its first entry)."""
    history = History(project)
    if not history.available:
        raise HistoryError("the history needs the `git` executable, which is not on PATH: "
                           "install git", path=str(project.root))
    if not history.git.exists() or history.git.resolve("HEAD") is None:
        raise HistoryError("the project has no history yet (it begins at the next tick)",
                           path=str(history.git.git_dir))
    return history


def keep_tag(history: History, branch: str, head: Entry) -> str:
    """A free tag name that keeps `head` (kept/main-12, kept/main-12-2, ...)."""
    base, number = f"kept/{branch}-{head.tick}", 1
    while True:
        name = base if number == 1 else f"{base}-{number}"
        found = history.git.resolve(f"refs/tags/{name}")
        if found is None or found == head.sha:
            return name
        number += 1


def move_branch(history: History, target: Entry,
                files: dict[Path, str | None] | None = None, label: str = "",
                kept: str = "") -> Moved:
    """Move the current branch (and the files) to `target`, keeping where it was under the
    tag `kept` (default: keep_tag's); `files` land in the same transaction (see
    restore.move_to, and `label`)."""
    branch, head = history.git.branch(), history.head()
    kept = kept or keep_tag(history, branch, head)
    refs: dict[str, str | None] = {f"refs/tags/{kept}": head.sha, f"{UNDO}/{branch}": head.sha,
                                   f"refs/heads/{branch}": target.sha}
    changed = move_to(history, target.sha, refs, files, label=label)
    return Moved(branch, head, target, kept, changed)


def planned(history: History, target: Entry, kept: str = "") -> Moved:
    """What `move_branch(history, target)` would do, nothing written: the files it would
    change and the tag that would keep where the branch is (`kept`, else keep_tag's)."""
    branch, head = history.git.branch(), history.head()
    if target.sha == head.sha:
        return Moved(branch, head, head, "", [])
    changed = [(status, path) for status, path, _ in differences(history, head.sha, target.sha)]
    return Moved(branch, head, target, kept or keep_tag(history, branch, head), changed)


def rewind_target(history: History, tick: int) -> Entry:
    """The entry a rewind to tick `tick` goes to (HistoryError past the project's tick)."""
    head = history.head()
    if tick > head.tick:
        raise HistoryError(f"cannot rewind to tick {tick}: the project is at tick {head.tick}",
                           path=str(history.project.scenes_dir))
    if tick < 0:
        raise HistoryError(f"no tick {tick}", path=str(history.project.scenes_dir))
    return history.entry_at(tick)


def undo_target(history: History) -> Entry:
    """The entry an undo goes to: where the branch was before its last rewind."""
    branch = history.git.branch()
    sha = history.git.resolve(f"{UNDO}/{branch}")
    if sha is None:
        raise HistoryError(f"nothing to undo: branch '{branch}' was never rewound",
                           path=str(history.git.git_dir))
    return history.head(sha)


def rewinding(project: Project, tick: int) -> Moved:
    """What `rewind(project, tick)` would do, nothing written (for a confirmation)."""
    history = readable(project)
    return planned(history, rewind_target(history, tick))


def undoing(project: Project) -> Moved:
    """What `undo(project)` would do, nothing written (for a confirmation)."""
    history = readable(project)
    return planned(history, undo_target(history))


def rewind(project: Project, tick: int, now: Callable[[], datetime] | None = None) -> Moved:
    """Put the project back as it was after tick `tick` (the caller holds the lock)."""
    history = history_for(project, now)
    head, target = history.head(), rewind_target(history, tick)
    if target.sha == head.sha:      # where the book is: nothing moves, the undo stays
        return Moved(history.git.branch(), head, head, "", [])
    return move_branch(history, target, label=f"the rewind to tick {tick}")


def undo(project: Project, now: Callable[[], datetime] | None = None) -> Moved:
    """Bring back what the last rewind (or undo) of this branch took away."""
    history = history_for(project, now)
    return move_branch(history, undo_target(history), label="the undo of the last rewind")
