"""Keeping the search index in step with the files: the files are the truth.

`sync` compares the size and mtime of every file the index reads (scenes,
summaries, lore, memory) with what the `files` table remembers, reads again
only those that changed, appeared or went away, and rewrites only the
documents whose content changed, in one transaction. Every command that opens
a session calls it first, and every tick before it plans, so a scene or a
character edited by hand, a deleted index or a garbage one is healed before
anything reads it, and said in one line: one stat per file, the one part that
grows with the book. A session keeps what its last sync looked at (`last`,
kept in step by the syncs of the files a tick wrote), so the next sync asks
the `files` table about the files whose stat moved since, not about all of
them. After its commit a tick syncs only the files it wrote (`paths`), with
the memory it just wrote, so nothing is parsed twice. A file that cannot be
read is left out of the index (the command that needs it reports it
properly); it never stops a sync. A scene that cannot be read (or holds no
prose) is not remembered as read: every sync reads it again and names it in
`unread`, and the tick stops on it before it asks a model anything.

`rebuild` is `novel reindex`: a new index.db from the files, with the usage
rows restored from `.novel/usage.jsonl`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from novel_agent.errors import FileFormatError
from novel_agent.files import read_yaml
from novel_agent.index import seen
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
from novel_agent.index.seen import LIST_FILES, Looked, keep_up, look, stat_of
from novel_agent.story.lore import read_lore_file
from novel_agent.story.memory.lookup import loop_index
from novel_agent.story.memory.read import Listed, load_list
from novel_agent.story.memory.records import Fact, Record, check_entity
from novel_agent.story.memory.store import Memory
from novel_agent.story.project.damage import read_scene
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import SCENE_RE
from novel_agent.story.summaries import load_doc

# The docs of the items of a list kind (its items of that kind: a loop, a relationship, a fact)
DOCS_OF: dict[str, Callable[[list[Any], str], list[Doc]]] = {
    "loops": loop_docs, "relationships": relationship_docs, "facts": fact_docs}


@dataclass
class SyncReport:
    """What one sync did."""

    read: list[str] = field(default_factory=list)       # files read (again)
    removed: list[str] = field(default_factory=list)    # files gone since the last sync
    written: int = 0                                    # docs inserted or replaced
    skipped: list[str] = field(default_factory=list)    # files that could not be read
    unread: dict[str, str] = field(default_factory=dict)   # of them, scenes: path -> why
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
        """One line for files changed outside a tick, and scenes that cannot be read ("" when
        none)."""
        if not self.changed and not self.unread:
            return ""
        names = self.read + self.removed + sorted(self.unread)
        shown = ", ".join(names[:3]) + (f", … ({len(names)} in all)" if len(names) > 3 else "")
        what = (f"re-read {len(self.read)} changed file{'s' * (len(self.read) != 1)}"
                if self.read else "")
        gone = (f"dropped {len(self.removed)} removed file{'s' * (len(self.removed) != 1)}"
                if self.removed else "")
        unread = (f"left out {len(self.unread)} scene{'s' * (len(self.unread) != 1)} that "
                  "cannot be read (`novel doctor` says why)" if self.unread else "")
        return f"index.db: {' and '.join(w for w in (what, gone, unread) if w)} ({shown})"


def docs_of(project: Project, rel: str, memory: Memory | None = None) -> list[Doc]:
    """The docs one file holds (FileFormatError when it cannot be read)."""
    path = project.root / rel
    parts = Path(rel).parts
    if parts[0] == "scenes":
        scene = read_scene(path)
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
        data: Any = _item(memory, folder, item_id) if memory is not None else None  # folder's kind
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


def _item(memory: Memory, folder: str, item_id: str) -> Record | None:
    """The item of `memory` a memory/<folder>/<id>.yaml file holds, if it is there."""
    items = getattr(memory, folder)
    if isinstance(items, dict):
        return items.get(item_id)
    if folder == "loops":                     # looked up in the loops' index (story/memory/lookup.py)
        return next(iter(loop_index(items).with_id(item_id)), None)
    return next((item for item in items if item.get("id") == item_id), None)


def sync(project: Project, index: Index, memory: Memory | None = None,
         clock: Callable[[], float] = time.monotonic,
         paths: Iterable[Path | str] | None = None, listed: Listed | None = None,
         last: Looked | None = None, facts_before: list[Fact] | None = None) -> SyncReport:
    """Bring the index's documents in step with the files (see the module docstring).
    `paths`: only these files (those a tick just wrote) are looked at, the others are
    trusted to be as the last sync left them. `listed`: memory's folders as reading
    `memory` just saw them (see look). `last`: what the session's last sync looked at,
    brought up to date here (the files whose stat did not move since are not asked
    about again, unless the `files` table holds another number of files).
    `facts_before`: the facts the index holds the docs of (memory's as the tick began):
    when `memory`'s facts only add to them, only the added facts' docs are made."""
    started = clock()
    report = SyncReport()
    db = index.db
    looked: Looked | None = None
    if paths is None:
        looked = look(project, listed)
        now, known = seen.since(db, looked, last) if last else (None, None)
        if now is None or known is None:
            now = {os.path.join(folder, name): st
                   for folder, files in looked.items() for name, st in files.items()}
            known = {path: (mtime, size) for path, mtime, size in
                     db.execute("SELECT path, mtime_ns, size FROM files")}
    else:
        wanted = {os.path.relpath(project.root / p, project.root) for p in paths}
        now = stat_of(project, wanted)
        known = seen.known(db, sorted(wanted))
    changed = sorted((p for p, st in now.items() if known.get(p) != st), key=_file_order)
    report.removed = sorted(p for p in known if p not in now)
    with index.writing():
        for rel in report.removed:
            _replace_source(db, rel, [])
        db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in report.removed])
        for rel in changed:
            added = _added_facts(rel, memory, facts_before)
            if added is not None:
                report.written += _add_docs(db, rel, fact_docs(added, rel))
                report.read.append(rel)
                continue
            try:
                docs = docs_of(project, rel, memory)
            except (FileFormatError, OSError, UnicodeDecodeError) as exc:
                report.skipped.append(f"{rel}: {exc}")
                docs = []
                if rel.startswith(SCENES):
                    report.unread[rel] = str(exc)
            report.written += _replace_source(db, rel, docs)
            if rel not in report.unread:
                report.read.append(rel)
        db.executemany("INSERT OR REPLACE INTO files (path, mtime_ns, size) VALUES (?, ?, ?)",
                       [(p, *now[p]) for p in changed if p not in report.unread])
    if last is not None:
        keep_up(last, looked, now, report.removed)
    report.seconds = clock() - started
    return report


FACTS = os.path.join("memory", "facts.yaml")
SCENES = "scenes" + os.sep      # a scene that cannot be read is not kept as read: every sync
                                # reads it again, and the next tick stops on it (pipeline)


def _added_facts(rel: str, memory: Memory | None,
                 before: list[Fact] | None) -> list[Fact] | None:
    """The facts `memory` adds to `before` (what the index holds of facts.yaml), when
    `rel` is facts.yaml and memory's facts begin with `before`; else None."""
    if rel != FACTS or memory is None or before is None or len(memory.facts) < len(before) \
            or memory.facts[:len(before)] != before:
        return None
    return memory.facts[len(before):]


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
    db.executemany("DELETE FROM docs WHERE id = ?", [(row_id,) for row_id in stale])
    db.executemany("DELETE FROM search WHERE rowid = ?", [(row_id,) for row_id in stale])
    return _insert(db, source, [doc for key, doc in new.items()
                                if key not in old or old[key][1] != doc.sha])


def _add_docs(db: sqlite3.Connection, source: str, docs: Iterable[Doc]) -> int:
    """Add to the docs of `source` those of `docs` it does not hold yet (by key: the first
    of a key stays, as in _replace_source); returns how many rows were written."""
    return _insert(db, source, [doc for doc in docs if db.execute(
        "SELECT 1 FROM docs WHERE key = ? AND source = ?", (doc.key, source)).fetchone() is None])


def _insert(db: sqlite3.Connection, source: str, fresh: list[Doc]) -> int:
    """Insert `fresh` (docs of `source`), first removing the rows of their keys that other
    files held; returns how many rows were written."""
    clash = [(row[0],) for doc in fresh for row in
             db.execute("SELECT id FROM docs WHERE key = ? AND source != ?", (doc.key, source))]
    db.executemany("DELETE FROM docs WHERE id = ?", clash)
    db.executemany("DELETE FROM search WHERE rowid = ?", clash)
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


def heal_index(project: Project, index: Index, exc: BaseException,
               clock: Callable[[], float] = time.monotonic) -> str:
    """`index` rebuilt in place after a query found pages of it garbled (`exc`, a
    "database disk image is malformed" quick_check did not see on open): an empty file,
    the usage rows restored from usage.jsonl, every file read again; the line that says
    so. Nothing is lost: the index is a cache of the files."""
    index.heal(exc)
    restored = restore_usage(project, index)
    report = sync(project, index, clock=clock)
    report.counts = doc_counts(index)
    return opening_line(index, report, restored)


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
