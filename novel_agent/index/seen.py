"""The files the search index reads, looked at: one stat each, and what moved since.

`look` gives every file the index reads (scenes, summaries, lore, memory) by
folder and name with its mtime and size, the cheapest look that still sees a
file edited in place; `stat_of` the same of some files. A session keeps what
its last sync looked at: `since` tells the files whose stat moved, came or
went since then and what the `files` table says of them, and `keep_up` brings
the kept look up to date after a sync (index/sync.py).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from novel_agent.story.memory.read import FOLDERS, Listed
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import SCENE_RE

LIST_FILES = {"loops.yaml": "loops", "relationships.yaml": "relationships",   # the old layout
              "facts.yaml": "facts"}


def _read_folders(project: Project) -> list[tuple[Path, Callable[[str], bool]]]:
    """The folders the index reads, each with which of its file names it reads."""
    yaml_file = lambda n: n.endswith(".yaml") and not n.startswith(".")   # noqa: E731
    return [(project.scenes_dir, lambda n: bool(SCENE_RE.match(n))),
            (project.summaries_dir, lambda n: n.endswith(".md") and not n.startswith(".")),
            (project.lore_dir, lambda n: n.endswith((".yaml", ".yml")) and not n.startswith(".")),
            *((project.memory_dir / folder, yaml_file) for folder in FOLDERS),
            (project.memory_dir, lambda n: n in LIST_FILES)]


Looked = dict[str, dict[str, tuple[int, int]]]   # folder (relative) -> name -> (mtime_ns, size)


def look(project: Project, listed: Listed | None = None) -> Looked:
    """Every file the index reads, by folder relative to the project and by name, with
    (mtime_ns, size): one stat each, the cheapest look that still sees a file edited in
    place. The folders in `listed` (memory's, just read by story/memory/read.look) are taken
    as it saw them."""
    found: Looked = {}
    for folder, keep in _read_folders(project):
        rel = os.path.relpath(folder, project.root)
        if listed is not None and str(folder) in listed:
            found[rel] = listed[str(folder)]     # named as `keep` would have them
            continue
        found[rel] = _files(folder, keep)
    return found


def _files(folder: Path, keep: Callable[[str], bool]) -> dict[str, tuple[int, int]]:
    """The regular files of `folder` that `keep` names, with (mtime_ns, size)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    try:
        names = [name for name in os.listdir(fd) if keep(name)]
        stats = list(map(functools.partial(_stat, fd), names))
    finally:
        os.close(fd)
    return {name: (st.st_mtime_ns, st.st_size) for name, st in zip(names, stats)
            if st is not None and stat.S_ISREG(st.st_mode)}


def _stat(fd: int, name: str) -> os.stat_result | None:
    """The stat of `name` in the folder open as `fd`; None when it is gone (or a link to
    nothing)."""
    try:
        return os.stat(name, dir_fd=fd)
    except (FileNotFoundError, NotADirectoryError):
        return None


def scan(project: Project, listed: Listed | None = None) -> dict[str, tuple[int, int]]:
    """Every file the index reads, relative to the project, with (mtime_ns, size) (see
    look)."""
    return {os.path.join(folder, name): st
            for folder, files in look(project, listed).items() for name, st in files.items()}


def stat_of(project: Project, paths: Iterable[Path | str]) -> dict[str, tuple[int, int]]:
    """What `scan` would say of these files alone (those the index reads and that are
    there), relative to the project."""
    folders = dict(_read_folders(project))
    found: dict[str, tuple[int, int]] = {}
    for name in paths:
        path = project.root / name
        keep = folders.get(path.parent)
        if keep is None or not keep(path.name):
            continue
        try:
            st = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            continue
        if stat.S_ISREG(st.st_mode):
            found[os.path.relpath(path, project.root)] = (st.st_mtime_ns, st.st_size)
    return found


def since(db: sqlite3.Connection, looked: Looked,
           last: Looked) -> tuple[dict[str, tuple[int, int]] | None, dict | None]:
    """(the files whose stat moved since `last`, or that came or went, with their stat;
    what the `files` table says of them), or (None, None) when the table does not hold
    what `last` says it does (another process rebuilt it, say): look at every file."""
    if db.execute("SELECT COUNT(*) FROM files").fetchone()[0] != \
            sum(len(files) for files in last.values()):
        return None, None
    now: dict[str, tuple[int, int]] = {}
    asked: list[str] = []
    for folder in looked.keys() | last.keys():
        files, before = looked.get(folder, {}), last.get(folder, {})
        if files == before:
            continue
        for name, st in files.items() - before.items():
            now[os.path.join(folder, name)] = st
        asked += [os.path.join(folder, name) for name in before.keys() - files.keys()]
    return now, known(db, sorted([*now, *asked]))


def known(db: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[int, int]]:
    """What the `files` table says of these files (those it holds)."""
    return {path: (mtime, size) for path in paths for mtime, size in
            db.execute("SELECT mtime_ns, size FROM files WHERE path = ?", (path,))}


def keep_up(last: Looked, looked: Looked | None, now: dict[str, tuple[int, int]],
             removed: list[str]) -> None:
    """`last` after a sync: what a whole look saw, or, after a sync of some files, those
    files as it saw them (only once a whole look has filled it)."""
    if looked is not None:
        last.clear()
        last.update(looked)
        return
    if not last:
        return
    for rel in [*now, *removed]:
        folder, name = os.path.split(rel)
        files = last.setdefault(folder, {})
        if rel in now:
            files[name] = now[rel]
        else:
            files.pop(name, None)
