"""Files of the book brought back from the history: the newest version that reads well.

A scene made binary or emptied, a memory file of broken YAML, a scene deleted in
the middle of the book: the history holds each as it was. `last_good` looks back
along the current branch's line (first parents) through the versions of one file,
newest first, for the first that `sound` accepts (story/project/damage.sound: read by the
loader the program reads it with); a version recorded damaged (every command
that opens the project records hand edits, damage included) is passed over, as
is a version that was a link (git keeps the name it points to, which would read
as a scene of one line).
`bring_back` writes the copies in one transaction, after an entry of the files as
they are (so the damaged versions stay in the history too), and makes an entry
naming what came back from where.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from novel_agent.history.git import HistoryError
from novel_agent.history.store import Entry, History
from novel_agent.story.project.folder import Project

PAGE = 32        # versions of a file asked of git at a time


@dataclass(frozen=True)
class Copy:
    """A version of one file (relative to the project) kept in the history."""

    path: str
    entry: Entry          # the entry that wrote this version
    text: str

    def source(self) -> str:
        """Where it comes from: "entry 1a2b3c4d (tick 10: The Lamp)"."""
        subject = self.entry.subject
        return f"entry {self.entry.short} ({subject[:60]}{'…' if len(subject) > 60 else ''})"


def last_good(history: History, path: str,
              sound: Callable[[str, bytes], bool]) -> Copy | None:
    """The newest version of `path` on the current line of the history that `sound`
    accepts (UTF-8 text), or None when none does (or there is no history)."""
    git = history.git
    if not git.exists() or git.resolve("HEAD") is None:
        return None
    skip = 0
    while True:
        shas = git.text("log", "--first-parent", "--format=%H", f"-n{PAGE}", f"--skip={skip}",
                        "HEAD", "--", path).split()
        if not shas:
            return None
        for sha, data in zip(shas, git.contents([f"{sha}:{path}" for sha in shas])):
            if data is None or not sound(path, data) or git.is_link(sha, path):
                continue
            try:
                return Copy(path, history.head(sha), data.decode("utf-8"))
            except UnicodeDecodeError:
                continue
        skip += len(shas)


def bring_back(project: Project, copies: Sequence[Copy],
               now: Callable[[], datetime] | None = None) -> Entry | None:
    """Write each copy in place of what is there (the caller holds the lock), in one
    transaction; the entry that says so (None when the history could not be written: the
    files are back all the same, and the next command records them)."""
    if not copies:
        return None
    history = History(project, now=now)
    try:
        history.record_pending()       # the damaged files get their entry first
    except HistoryError:
        pass                           # one git cannot read (no permission) is replaced
    txn = project.transaction("doctor's bringing back of files from the history")
    for copy in copies:
        txn.stage(project.root / copy.path, copy.text)
    txn.commit()
    names = [f"{c.path} (from {c.entry.short})" for c in copies]
    more = f" and {len(names) - 6} more" if len(names) > 6 else ""
    try:
        return history.record("repair", project.tick(),
                              "doctor: brought back " + ", ".join(names[:6]) + more)
    except HistoryError:
        return None
