"""`novel branch list|new|switch|delete`: alternate continuations of one book.

A branch is a git branch of the history: its own scenes, memory, summaries and
state. Switching writes the other branch's files in place of this one's in one
transaction (restore.move_to, HEAD with them), after pending hand edits got
their entry on the branch being left. The caller holds the project's lock, so a
running daemon (which holds it while it runs) keeps writing on the branch it
started on. A deleted branch is kept as the tag `deleted/NAME`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from novel_agent.history.git import GIT_DIR, HistoryError
from novel_agent.history.restore import move_to
from novel_agent.history.rewind import history_for, readable
from novel_agent.history.store import Entry, History
from novel_agent.story.project.folder import Project

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,59}$")


@dataclass
class Branch:
    """One branch: its name, its last entry, whether the project is on it."""

    name: str
    head: Entry
    current: bool


def _check_name(name: str, history: History) -> str:
    if not NAME_RE.match(name):
        raise HistoryError(f"'{name}' is not a branch name: use letters, digits, - and _ "
                           "(at most 60)", path=str(history.git.git_dir))
    return name


def _sha(history: History, name: str) -> str:
    sha = history.git.resolve(f"refs/heads/{name}")
    if sha is None:
        names = ", ".join(b.name for b in branches(history.project))
        raise HistoryError(f"no branch '{name}' (branches: {names})",
                           path=str(history.git.git_dir))
    return sha


def current(project: Project) -> str | None:
    """The branch the project is on, read from the history's HEAD file alone (no git is
    run: every page of `novel serve` shows it); None when the project has no history yet
    or its HEAD cannot be read or names no branch. Never raises."""
    try:
        head = (project.novel_dir / GIT_DIR / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        return None
    name = head.removeprefix("ref: refs/heads/")
    return name if name != head and NAME_RE.match(name) else None


def branches(project: Project) -> list[Branch]:
    """Every branch, the current one marked."""
    history = History(project)
    if not history.available or not history.git.exists():
        return []
    current = history.git.branch()
    out = history.git.text("for-each-ref", "--format=%(refname:short) %(objectname)",
                           "refs/heads")
    found = []
    for line in out.splitlines():
        name, sha = line.split(" ")
        found.append(Branch(name, history.head(sha), name == current))
    return found


def new(project: Project, name: str, at: int | None = None,
        now: Callable[[], datetime] | None = None) -> tuple[Branch, list[tuple[str, str]]]:
    """Make branch `name` from the entry after tick `at` (default: where the project
    is) and switch to it."""
    history = history_for(project, now)
    _check_name(name, history)
    if history.git.resolve(f"refs/heads/{name}") is not None:
        raise HistoryError(f"a branch '{name}' exists already: switch to it with "
                           f"`novel branch switch {name}`", path=str(history.git.git_dir))
    start = history.entry_at(at) if at is not None else history.head()
    changed = move_to(history, start.sha, {f"refs/heads/{name}": start.sha,
                                           "HEAD": f"ref: refs/heads/{name}"},
                      label=f"the making of branch '{name}'")
    return Branch(name, start, True), changed


def switch(project: Project, name: str,
           now: Callable[[], datetime] | None = None) -> tuple[Branch, list[tuple[str, str]]]:
    """Put the project on branch `name`: its files in place of this branch's."""
    history = history_for(project, now)
    if name == history.git.branch():
        raise HistoryError(f"already on branch '{name}'", path=str(history.git.git_dir))
    sha = _sha(history, _check_name(name, history))
    changed = move_to(history, sha, {"HEAD": f"ref: refs/heads/{name}"},
                      label=f"the switch to branch '{name}'")
    return Branch(name, history.head(sha), True), changed


def deleting(project: Project, name: str) -> tuple[Branch, str]:
    """What `delete(project, name)` would do, nothing written (for a confirmation): the
    branch and the tag that would keep it; HistoryError as `delete` would raise it."""
    return _deletion(readable(project), name)


def _deletion(history: History, name: str) -> tuple[Branch, str]:
    if name == history.git.branch():
        raise HistoryError(f"cannot delete branch '{name}': the project is on it (switch "
                           "to another first)", path=str(history.git.git_dir))
    sha = _sha(history, _check_name(name, history))
    tag, number = f"deleted/{name}", 1
    while history.git.resolve(f"refs/tags/{tag}") not in (None, sha):
        number += 1
        tag = f"deleted/{name}-{number}"
    return Branch(name, history.head(sha), False), tag


def delete(project: Project, name: str) -> str:
    """Delete branch `name` (not the current one); the tag that keeps it."""
    history = history_for(project)
    branch, tag = _deletion(history, name)
    history.git.run("update-ref", f"refs/tags/{tag}", branch.head.sha)
    history.git.run("update-ref", "-d", f"refs/heads/{name}", branch.head.sha)
    return tag
