"""Where the rest of novel_agent meets the history: the calls the tick, the summarizer
and the project's reconciliation make. Each does nothing when git is not on PATH
(the history is off; `novel status` says so)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from novel_agent.history import redo
from novel_agent.history.git import HistoryError
from novel_agent.history.interrupted import settle_revise
from novel_agent.history.store import Entry, History
from novel_agent.story import recovery
from novel_agent.story.project import Project


def history_of(project: Project, now: Callable[[], datetime] | None = None) -> History | None:
    """The project's history, or None when git is missing."""
    history = History(project, now=now)
    return history if history.available else None


def before_tick(project: Project, now: Callable[[], datetime] | None = None, *,
                quiet: bool = False) -> list[str]:
    """Record edits made by hand since the last entry (before the tick reads them); a
    notice when there were any (`quiet`: only for ticks a kill left without an entry)."""
    history = history_of(project, now)
    entry = history.record_pending() if history else None
    if entry is None or entry.kind == "start" or quiet and entry.kind == "hand":
        return []
    return [f"history: {entry.subject}"]


def after_tick(project: Project, tick: int, title: str, words: int, *, imported: bool,
               note: str = "", now: Callable[[], datetime] | None = None) -> Entry | None:
    """The landed tick's entry (its subject names a one-tick note, if there was one)."""
    history = history_of(project, now)
    if history is None:
        return None
    subject = (f"tick {tick}: {title}" + (" (imported)" if imported else "")
               + (f" (note: {note[:60]})" if note else ""))
    return history.record("import" if imported else "tick", tick, subject, words)


def after_summaries(project: Project, made: list[Any],
                    now: Callable[[], datetime] | None = None) -> Entry | None:
    """An entry for the summaries just made or remade (their names), if any changed."""
    history = history_of(project, now)
    if history is None:
        return None
    names = ", ".join(doc.name for doc in made) or "overall"
    return history.record("summary", project.tick(), f"summaries: {names}")


def settle(project: Project) -> list[str]:
    """After story.recovery.reconcile (the caller holds the lock): a redo a kill cut settled
    (redo.settle); edits by hand, or ticks a kill left without an entry, recorded; a
    notice each. A history that cannot be
    written is said, not raised (reading the project must not depend on it)."""
    try:
        return (redo.settle(project) + settle_revise(project)
                + before_tick(project, quiet=True))     # `novel log` shows the edits
    except (HistoryError, OSError) as exc:
        return [f"the history could not be brought up to date: {exc}"]


def reconcile(project: Project) -> list[str]:
    """story.recovery.reconcile, then the history brought up to date (`settle`): what
    opening a project does (the caller holds the lock); the notices, in order."""
    return recovery.reconcile(project) + settle(project)


@contextmanager
def opened(project: Project, wait: float = 0.0) -> Iterator[list[str]]:
    """Hold the project's lock (waiting up to `wait` s) with it reconciled and its
    history up to date; yields the notices."""
    with recovery.reconciled(project, wait) as notices:
        yield notices + settle(project)
