"""Watching the files a running daemon takes edits from.

A watchdog observer (its own thread) feeds a thread-safe `ChangeSet`: the
paths of `project.yaml`, `steer.md`, the preset in use, `configs/models.yaml`,
and anything under `lore/` and `templates/`, each with the time of its last
event. The daemon drains the set between ticks, once it has been quiet for the
debounce time: editors that save by writing a temp file and renaming it, or
that write twice, make one change, not three. An editor's own files are not
changes: swap and backup files (`.project.yaml.swp`, `project.yaml~`), lock
files (`.#project.yaml`), vim's write test `4913`, temp files before their
rename; under `lore/` only `.yaml`/`.yml` files count (what the lorebook
reads), under `templates/` only `.j2` files. Scenes and memory files are not
watched: every tick reads them again anyway.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from novel_agent.story.lore import SUFFIXES as LORE_SUFFIXES
from novel_agent.story.project.folder import Project

DEBOUNCE = 0.2   # seconds without a new event before a change is taken


def _not_stop_race(record: logging.LogRecord) -> bool:
    """watchdog logs an error when a last event races the observer's stop: harmless."""
    return "called when the thread is inactive" not in record.getMessage()


logging.getLogger("watchdog.observers.inotify").addFilter(_not_stop_race)


@dataclass
class Watched:
    """Which paths matter, and what kind of change each one is."""

    project: Project
    preset_file: Path
    models_file: Path

    def kind(self, path: str | Path) -> str | None:
        """"config", "steer", "lore", "templates", or None for a path nobody watches
        (an editor's swap, backup, lock or temp file among them: its rename is the change)."""
        p = Path(path)
        if p.name.startswith((".", "#")) or p.name.endswith(("~", "#", ".swp", ".swx", ".tmp")):
            return None
        if p in (self.project.project_file, self.preset_file, self.models_file):
            return "config"
        if p == self.project.steer_file:
            return "steer"
        if p.parent == self.project.lore_dir and p.suffix in LORE_SUFFIXES:
            return "lore"
        if p.is_relative_to(self.project.templates_dir) and p.suffix == ".j2":
            return "templates"
        return None

    def folders(self) -> list[tuple[Path, bool]]:
        """(folder, recursive) pairs the observer is scheduled on."""
        out = {self.project.root: True, self.preset_file.parent: False,
               self.models_file.parent: False}
        return [(folder, recursive) for folder, recursive in out.items() if folder.is_dir()]


@dataclass
class ChangeSet:
    """Paths changed since the daemon last looked, with the time of their last event."""

    clock: Callable[[], float] = time.monotonic
    _seen: dict[Path, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, path: Path) -> None:
        with self._lock:
            self._seen[path] = self.clock()

    def pending(self) -> bool:
        with self._lock:
            return bool(self._seen)

    def take(self, quiet: float = DEBOUNCE) -> tuple[set[Path], float]:
        """(the changed paths, 0) once no event came for `quiet` seconds, else (empty set,
        the seconds left to wait)."""
        with self._lock:
            if not self._seen:
                return set(), 0.0
            left = max(self._seen.values()) + quiet - self.clock()
            if left > 0:
                return set(), left
            taken, self._seen = set(self._seen), {}
            return taken, 0.0


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher):
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.watcher.saw(Path(str(raw)))


class Watcher:
    """A watchdog observer over the watched paths, feeding a ChangeSet."""

    def __init__(self, watched: Watched, changes: ChangeSet):
        self.watched, self.changes = watched, changes
        self._observer: BaseObserver | None = None

    def saw(self, path: Path) -> None:
        if self.watched.kind(path) is not None:
            self.changes.add(path)

    def start(self) -> Watcher:
        observer = Observer()
        handler = _Handler(self)
        for folder, recursive in self.watched.folders():
            observer.schedule(handler, str(folder), recursive=recursive)
        observer.daemon = True
        observer.start()
        self._observer = observer
        return self

    def retarget(self, preset_file: Path) -> None:
        """Watch another preset (project.yaml switched to it)."""
        if preset_file != self.watched.preset_file:
            self.stop()
            self.watched.preset_file = preset_file
            self.start()

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
