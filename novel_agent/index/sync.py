"""Keeping the search index in step with the files: the files are the truth.

`sync` compares the size and mtime of every file the index reads (scenes,
summaries, lore, memory) with what the `files` table remembers, reads again
only those that changed, appeared or went away, and rewrites only the
documents whose content changed, in one transaction. Every command that opens
a session calls it first, and every tick before it plans, so a scene or a
character edited by hand, a deleted index or a garbage one is healed before
anything reads it, and said in one line: one stat per file, the one part that
grows with the book. After its commit a tick syncs only the files it wrote
(`paths`), with the memory it just wrote, so nothing is parsed twice. A file
that cannot be read is left out of the index (the command that needs it
reports it properly); it never stops a sync.

`rebuild` is `novel reindex`: a new index.db from the files, with the usage
rows restored from `.novel/usage.jsonl`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from novel_agent.errors import FileFormatError
from novel_agent.files import read_yaml
from novel_agent.index.db import Index
from novel_agent.index.documents import (
    Doc,
    entity_doc,
    fact_docs,
    loop_docs,
    lore_doc,
    relationship_docs,
    scene_doc,
    summary_doc,
)
from novel_agent.index.ledger import restore_usage
from novel_agent.story.lore import read_lore_file
from novel_agent.story.memory import FOLDERS, Listed, Memory, load_list
from novel_agent.story.memory_schema import check_entity
from novel_agent.story.project import Project
from novel_agent.story.scenes import SCENE_RE, load_scene
from novel_agent.story.summaries import load_doc

LIST_FILES = {"loops.yaml": "loops", "relationships.yaml": "relationships",   # the old layout
              "facts.yaml": "facts"}
DOCS_OF = {"loops": loop_docs, "relationships": relationship_docs, "facts": fact_docs}


@dataclass
class SyncReport:
    """What one sync did."""

    read: list[str] = field(default_factory=list)       # files read (again)
    removed: list[str] = field(default_factory=list)    # files gone since the last sync
    written: int = 0                                    # docs inserted or replaced
    skipped: list[str] = field(default_factory=list)    # files that could not be read
    counts: dict[str, int] = field(default_factory=dict)  # docs per kind (doc_counts)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.read or self.removed)

    def totals(self) -> str:
        """"312 scenes, 951 facts, 14 characters, ..." (kinds with docs only)."""
        order = ("scene", "fact", "character", "location", "loop", "relationship", "lore",
                 "summary")
        names = {"scene": ("scene", "scenes"), "fact": ("fact", "facts"),
                 "character": ("character", "characters"), "location": ("place", "places"),
                 "loop": ("loop", "loops"), "relationship": ("relationship", "relationships"),
                 "lore": ("lore entry", "lore entries"), "summary": ("summary", "summaries")}
        return ", ".join(f"{self.counts[k]:,} {names[k][self.counts[k] != 1]}" for k in order
                         if self.counts.get(k))

    def changes_line(self) -> str:
        """One line for files changed outside a tick ("" when none)."""
        if not self.changed:
            return ""
        names = self.read + self.removed
        shown = ", ".join(names[:3]) + (f", … ({len(names)} in all)" if len(names) > 3 else "")
        what = (f"re-read {len(self.read)} changed file{'s' * (len(self.read) != 1)}"
                if self.read else "")
        gone = (f"dropped {len(self.removed)} removed file{'s' * (len(self.removed) != 1)}"
                if self.removed else "")
        return f"index.db: {' and '.join(w for w in (what, gone) if w)} ({shown})"


def _read_folders(project: Project) -> list[tuple[Path, Callable[[str], bool]]]:
    """The folders the index reads, each with which of its file names it reads."""
    yaml_file = lambda n: n.endswith(".yaml") and not n.startswith(".")   # noqa: E731
    return [(project.scenes_dir, lambda n: bool(SCENE_RE.match(n))),
            (project.summaries_dir, lambda n: n.endswith(".md") and not n.startswith(".")),
            (project.lore_dir, lambda n: n.endswith((".yaml", ".yml")) and not n.startswith(".")),
            *((project.memory_dir / folder, yaml_file) for folder in FOLDERS),
            (project.memory_dir, lambda n: n in LIST_FILES)]


def scan(project: Project, listed: Listed | None = None) -> dict[str, tuple[int, int]]:
    """Every file the index reads, relative to the project, with (mtime_ns, size): one
    stat each, the cheapest look that still sees a file edited in place. The folders in
    `listed` (memory's, just read by story.memory.read_memory) are taken as it saw them."""
    found: dict[str, tuple[int, int]] = {}
    for folder, keep in _read_folders(project):
        if listed is not None and str(folder) in listed:
            prefix = f"{os.path.relpath(folder, project.root)}{os.sep}"
            found.update((prefix + name, st) for name, st in listed[str(folder)].items()
                         if keep(name))
            continue
        try:
            with os.scandir(folder) as entries:
                prefix = f"{os.path.relpath(folder, project.root)}{os.sep}"
                for entry in entries:
                    if keep(entry.name) and entry.is_file():
                        st = entry.stat()
                        found[prefix + entry.name] = (st.st_mtime_ns, st.st_size)
        except (FileNotFoundError, NotADirectoryError):
            continue
    return found


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


def docs_of(project: Project, rel: str, memory: Memory | None = None) -> list[Doc]:
    """The docs one file holds (FileFormatError when it cannot be read)."""
    path = project.root / rel
    parts = Path(rel).parts
    if parts[0] == "scenes":
        scene = load_scene(path)
        return [scene_doc(scene, rel, pinned=scene.pinned)]
    if parts[0] == "summaries":
        doc = load_doc(path)
        return [summary_doc(doc.name, doc.kind, doc.first, doc.last, doc.body, rel)]
    if parts[0] == "lore":
        entries, _ = read_lore_file(path)
        return [lore_doc(entry, rel) for entry in entries]
    return _memory_docs(path, rel, parts, memory)


def _memory_docs(path: Path, rel: str, parts: tuple[str, ...],
                 memory: Memory | None) -> list[Doc]:
    if len(parts) == 3:                          # memory/<folder>/<id>.yaml
        folder, item_id = parts[1], Path(parts[2]).stem
        data = _item(memory, folder, item_id) if memory is not None else None
        if data is None:
            data = read_yaml(path, {})
            if not isinstance(data, dict):
                raise FileFormatError("expected a mapping of fields", file=str(path), line=1)
            check_entity(folder, data, path)
            data = {"id": item_id, **data}
        if folder in DOCS_OF:
            return DOCS_OF[folder]([data], rel)
        return [entity_doc("character" if folder == "characters" else "location", data, rel)]
    kind = LIST_FILES[parts[1]]
    items = getattr(memory, kind) if memory is not None else load_list(path, kind)
    return DOCS_OF[kind](items, rel)


def _item(memory: Memory, folder: str, item_id: str) -> dict | None:
    """The item of `memory` a memory/<folder>/<id>.yaml file holds, if it is there."""
    items = getattr(memory, folder)
    if isinstance(items, dict):
        return items.get(item_id)
    return next((item for item in items if item.get("id") == item_id), None)


def sync(project: Project, index: Index, memory: Memory | None = None,
         clock: Callable[[], float] = time.monotonic,
         paths: Iterable[Path | str] | None = None, listed: Listed | None = None) -> SyncReport:
    """Bring the index's documents in step with the files (see the module docstring).
    `paths`: only these files (those a tick just wrote) are looked at, the others are
    trusted to be as the last sync left them. `listed`: memory's folders as reading
    `memory` just saw them (see scan)."""
    started = clock()
    report = SyncReport()
    db = index.db
    if paths is None:
        now = scan(project, listed)
        known = {path: (mtime, size) for path, mtime, size in
                 db.execute("SELECT path, mtime_ns, size FROM files")}
    else:
        wanted = {os.path.relpath(project.root / p, project.root) for p in paths}
        now = stat_of(project, wanted)
        known = {path: (mtime, size) for path in sorted(wanted) for mtime, size in
                 db.execute("SELECT mtime_ns, size FROM files WHERE path = ?", (path,))}
    changed = sorted((p for p, st in now.items() if known.get(p) != st), key=_file_order)
    report.removed = sorted(p for p in known if p not in now)
    with db:
        for rel in report.removed:
            _replace_source(db, rel, [])
        db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in report.removed])
        for rel in changed:
            try:
                docs = docs_of(project, rel, memory)
            except (FileFormatError, OSError, UnicodeDecodeError) as exc:
                report.skipped.append(f"{rel}: {exc}")
                docs = []
            report.written += _replace_source(db, rel, docs)
            report.read.append(rel)
        db.executemany("INSERT OR REPLACE INTO files (path, mtime_ns, size) VALUES (?, ?, ?)",
                       [(p, *now[p]) for p in changed])
    report.seconds = clock() - started
    return report


def doc_counts(index: Index) -> dict[str, int]:
    """The index's documents per kind (SyncReport.counts, for what a session says)."""
    return dict(index.db.execute("SELECT kind, COUNT(*) FROM docs GROUP BY kind"))


def _file_order(rel: str) -> tuple[int, str]:
    """Scenes in tick order (for readable messages), then the rest by name."""
    match = SCENE_RE.match(Path(rel).name)
    return (int(match.group(1)), rel) if match and rel.startswith("scenes") else (1 << 40, rel)


def _replace_source(db: sqlite3.Connection, source: str, docs: Iterable[Doc]) -> int:
    """Make the docs of `source` exactly `docs`, touching only what changed; returns how
    many rows were written."""
    old = {key: (row_id, sha) for row_id, key, sha in
           db.execute("SELECT id, key, sha FROM docs WHERE source = ?", (source,))}
    new = {doc.key: doc for doc in docs}
    stale = [row_id for key, (row_id, sha) in old.items()
             if key not in new or new[key].sha != sha]
    fresh = [doc for key, doc in new.items() if key not in old or old[key][1] != doc.sha]
    clash = [row[0] for doc in fresh for row in
             db.execute("SELECT id FROM docs WHERE key = ? AND source != ?", (doc.key, source))]
    gone = [(row_id,) for row_id in stale + clash]
    db.executemany("DELETE FROM docs WHERE id = ?", gone)
    db.executemany("DELETE FROM search WHERE rowid = ?", gone)
    for doc in fresh:
        cursor = db.execute(
            "INSERT INTO docs (key, kind, tick, source, sha, title, body, meta, pinned) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (doc.key, doc.kind, doc.tick, doc.source, doc.sha, doc.title, doc.body,
             json.dumps(doc.meta, ensure_ascii=False, default=str),
             int(doc.meta.get("pinned") is True)))
        db.execute("INSERT INTO search (rowid, title, summary, body, names, kind) "
                   "VALUES (?, ?, ?, ?, ?, ?)",
                   (cursor.lastrowid, doc.title, doc.summary, doc.body, doc.names, doc.kind))
    return len(fresh)


def opening_line(index: Index, report: SyncReport, restored: int | None) -> str:
    """What to say when a session opens the index: how it was healed, or ""."""
    usage = f"; {restored:,} usage rows restored from usage.jsonl" if restored else ""
    what = report.totals() or "no documents yet"
    if index.rebuilt:
        return f"{index.rebuilt}; searched files read again: {what}{usage}"
    if index.created:       # a new project's first index says nothing: nothing was lost
        return f"{index.path} was missing: built again from the files ({what}){usage}" \
            if report.counts or restored else ""
    if index.migrated and report.counts:
        return f"index.db: search index built from the files ({what})"
    return report.changes_line()


def open_index(project: Project, clock: Callable[[], float] = time.monotonic) -> tuple[Index, str]:
    """The project's index, healed and in step with the files, and what to say about it
    ("" when nothing was wrong): a missing or garbage index.db is built again (the usage
    rows restored from usage.jsonl), files changed since the last sync are read again."""
    index = Index(project.index_db)
    try:
        restored = restore_usage(project, index) if index.rebuilt or index.created else None
        report = sync(project, index, clock=clock)
        report.counts = doc_counts(index)
        line = opening_line(index, report, restored)
    except BaseException:
        index.db.close()
        raise
    return index, line


def rebuild(project: Project, clock: Callable[[], float] = time.monotonic) -> tuple[SyncReport, int]:
    """`novel reindex`: delete index.db and build it again from the files; returns the
    sync report and the usage rows restored from the ledger file."""
    started = clock()
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{project.index_db}{suffix}").unlink(missing_ok=True)
    index = Index(project.index_db)
    try:
        restored = restore_usage(project, index)
        report = sync(project, index, clock=clock)
        report.counts = doc_counts(index)
    finally:
        index.close()
    report.seconds = clock() - started
    return report, restored
