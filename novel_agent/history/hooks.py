"""Where the rest of novel_agent meets the history: the calls the tick, the summarizer
and the project's reconciliation make. Each does nothing when git is not on PATH
(the history is off; `novel status` says so)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from novel_agent.history import redo
from novel_agent.history.git import HistoryError
from novel_agent.history.interrupted import settle_revise
from novel_agent.history.seen import SeenFiles
from novel_agent.history.store import Entry, History
from novel_agent.story.project import recovery
from novel_agent.story.project.folder import Project


def history_of(project: Project, now: Callable[[], datetime] | None = None) -> History | None:
    """The project's history, or None when git is missing."""
    history = History(project, now=now)
    return history if history.available else None


def before_tick(project: Project, now: Callable[[], datetime] | None = None, *,
                quiet: bool = False, seen: SeenFiles | None = None) -> list[str]:
    """Record edits made by hand since the last entry (before the tick reads them); a
    notice when there were any (`quiet`: only for ticks a kill left without an entry).
    `seen`: a session's files as of its last entry, which tell git what to look at."""
    history = history_of(project, now)
    if history is None:
        return []
    look = seen.look() if seen else None
    changed = seen.changed(look) if seen and look and history.git.exists() else None
    entry = history.record_pending(paths=changed)
    if seen and look:
        seen.keep(look)
    if entry is None or entry.kind == "start" or quiet and entry.kind == "hand":
        return []
    return [f"history: {entry.subject}"]


def after_tick(project: Project, tick: int, title: str, words: int, *, imported: bool,
               note: str = "", now: Callable[[], datetime] | None = None,
               written: Sequence[Path] | None = None,
               seen: SeenFiles | None = None) -> Entry | None:
    """The landed tick's entry (its subject names a one-tick note, if there was one).
    `written`, the files the tick's commit wrote, with `seen` holding the session's files
    as of the last entry: only they are looked at."""
    history = history_of(project, now)
    if history is None:
        return None
    subject = (f"tick {tick}: {title}" + (" (imported)" if imported else "")
               + (f" (note: {note[:60]})" if note else ""))
    paths = [p.relative_to(project.root).as_posix() for p in written] \
        if seen and seen.kept and written is not None else None
    look = seen.look_at(paths) if seen and paths is not None else None
    entry = history.record("import" if imported else "tick", tick, subject, words, paths=paths)
    if seen and look and paths is not None:
        seen.keep_part(look, paths)
    elif seen:
        seen.forget()
    return entry


def after_summaries(project: Project, made: list[Any],
                    now: Callable[[], datetime] | None = None,
                    seen: SeenFiles | None = None) -> Entry | None:
    """An entry for the summaries just made or remade (their names), if any changed:
    the whole project looked at (the summarizer's files are not listed)."""
    history = history_of(project, now)
    if history is None:
        return None
    look = seen.look(whole=True) if seen else None
    names = ", ".join(doc.name for doc in made) or "overall"
    entry = history.record("summary", project.tick(), f"summaries: {names}")
    if seen and look:
        seen.keep(look)
    return entry


def after_outline(project: Project, subject: str,
                  now: Callable[[], datetime] | None = None,
                  seen: SeenFiles | None = None) -> Entry | None:
    """An entry for the outline just made, edited, rewritten or revised (`subject` says
    which), if it changed: the outline commands' own change, not an edit by hand (the
    caller opened the project, which recorded those first). `seen`: a session's files as
    of its last entry (a tick's revision): only the outline's file is looked at."""
    history = history_of(project, now)
    if history is None:
        return None
    paths = [project.outline_file.relative_to(project.root).as_posix()] \
        if seen and seen.kept else None
    look = seen.look_at(paths) if seen and paths is not None else None
    entry = history.record("outline", project.tick(), subject, paths=paths)
    if seen and look and paths is not None:
        seen.keep_part(look, paths)
    elif seen:
        seen.forget()
    return entry


def settle(project: Project) -> list[str]:
    """After story/project/recovery.reconcile (the caller holds the lock): a redo a kill cut settled
    (redo.settle); edits by hand, or ticks a kill left without an entry, recorded; a
    notice each. A history that cannot be
    written is said, not raised (reading the project must not depend on it)."""
    try:
        return (redo.settle(project) + settle_revise(project)
                + before_tick(project, quiet=True))     # `novel log` shows the edits
    except (HistoryError, OSError) as exc:
        return [f"the history could not be brought up to date: {exc}"]


def reconcile(project: Project) -> list[str]:
    """story/project/recovery.reconcile, then the history brought up to date (`settle`): what
    opening a project does (the caller holds the lock); the notices, in order."""
    return recovery.reconcile(project) + settle(project)


@contextmanager
def opened(project: Project, wait: float = 0.0) -> Iterator[list[str]]:
    """Hold the project's lock (waiting up to `wait` s) with it reconciled and its
    history up to date; yields the notices."""
    with recovery.reconciled(project, wait) as notices:
        yield notices + settle(project)
