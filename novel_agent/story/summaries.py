"""The summary tree: checkpoint, arc and overall summaries.

    summaries/checkpoint_NNN.md   level 0: scenes first..last (NNN = last tick)
    summaries/arc_NNN.md          level 1+: condenses the docs its `covers` names
    summaries/overall.md          one running paragraph, the story so far

Files are never deleted, so the tree keeps every level. The *roots* (docs no
arc covers) tile the summarized ticks in order: higher levels are older,
because roll-up always condenses the oldest roots of a level. Which of them a prompt
holds is context/tier3.py's policy; making the files is tick/stages/summarize.py's job.
Each file's front matter keeps the sha1 of its body: a body that no longer
matches was edited by hand, and is respected (see stages/summarize.py).
"""

from __future__ import annotations

import functools
import hashlib
import operator
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from novel_agent.config.settings import Config
from novel_agent.errors import FileFormatError
from novel_agent.files import atomic_write, read_front_matter, render_front_matter
from novel_agent.story.project.folder import Project

DOC_RE = re.compile(r"^(checkpoint|arc)_(\d+)\.md$")
OVERALL = "overall"


def body_sha1(body: str) -> str:
    """The hash kept in front matter to tell a hand-edited body from ours."""
    return hashlib.sha1(body.strip().encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SummaryDoc:
    """One summary file: what it covers, and its text."""

    name: str                    # "checkpoint_010", "arc_002", "overall"
    kind: str                    # "checkpoint", "arc" or "overall"
    first: int
    last: int
    body: str
    level: int = 0               # 0 checkpoint, 1+ arc (overall: -1)
    covers: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    path: Path | None = field(default=None, compare=False, repr=False)

    @property
    def edited(self) -> bool:
        """True when the body is not what novel_agent wrote (a hand edit, or a hand-made file)."""
        return self.meta.get("sha1") != body_sha1(self.body)

    def block(self) -> str:
        """The doc as it reads inside tier 3: a heading with its range, then the text."""
        if self.kind == OVERALL:
            return f"### In short (scenes {self.first}–{self.last})\n{self.body.strip()}"
        return f"### Scenes {self.first}–{self.last}\n{self.body.strip()}"


@dataclass
class SummaryTree:
    """Every summary of a project, with the arcs' cover links checked."""

    docs: dict[str, SummaryDoc] = field(default_factory=dict)   # checkpoints and arcs
    overall: SummaryDoc | None = None
    parent: dict[str, str] = field(default_factory=dict)

    def children(self, doc: SummaryDoc) -> list[SummaryDoc]:
        """The docs an arc condenses, oldest first (none for a checkpoint)."""
        return sorted((self.docs[n] for n in doc.covers), key=lambda d: d.first)

    def roots(self) -> list[SummaryDoc]:
        """Docs no arc covers, oldest first: together they tile every summarized tick once."""
        return sorted((d for d in self.docs.values() if d.name not in self.parent),
                      key=lambda d: d.first)

    def checkpoints(self) -> list[SummaryDoc]:
        return sorted((d for d in self.docs.values() if d.kind == "checkpoint"),
                      key=lambda d: d.last)

    def last_tick(self) -> int:
        """The last tick a checkpoint covers (0 when there is none)."""
        points = self.checkpoints()
        return points[-1].last if points else 0

    def covering(self, tick: int, docs: list[SummaryDoc] | None = None) -> list[SummaryDoc]:
        """The docs (of `docs`, default all) whose range holds `tick`."""
        pool = self.docs.values() if docs is None else docs
        return [d for d in pool if d.first <= tick <= d.last]


def _int(meta: dict[str, Any], key: str, default: int | None, path: Path) -> int:
    value = meta.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise FileFormatError(f"'{key}' must be a tick number, not {value!r}", file=str(path))
    return value


class DocCache:
    """Parsed summary files, each kept while its inode, size and mtime stay the same, and
    the last tree made of them, kept while no file of its folder changed.

    Owned by whoever reads the tree repeatedly (a session); one entry per file,
    replaced when the file changes, so it never outgrows the summaries folder.
    """

    def __init__(self) -> None:
        self._docs: dict[Path, tuple[tuple[int, ...], SummaryDoc]] = {}
        self._tree: tuple[Any, SummaryTree] | None = None

    def tree(self, summaries_dir: Path, make: Callable[[], SummaryTree]) -> SummaryTree:
        """The tree `make()` gives of `summaries_dir`, made again only when a file of it
        came, went or changed (one stat each; the tree is not to be changed)."""
        seen = _look(summaries_dir)
        if self._tree is None or self._tree[0] != seen:
            self._tree = (seen, make())
        return self._tree[1]

    def get(self, path: Path, previous_last: int) -> SummaryDoc:
        """The doc at `path`, parsed again only if the file changed."""
        stat = path.stat()
        key = (stat.st_ino, stat.st_size, stat.st_mtime_ns, previous_last)
        cached = self._docs.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        doc = _parse_doc(path, previous_last)
        self._docs[path] = (key, doc)
        return doc


def load_doc(path: Path, previous_last: int = 0, cache: DocCache | None = None) -> SummaryDoc:
    """Read one summary file. Missing range keys default from the file name (a
    hand-made checkpoint_030.md covers the ticks after the previous checkpoint)."""
    return cache.get(path, previous_last) if cache is not None else _parse_doc(path, previous_last)


def _parse_doc(path: Path, previous_last: int) -> SummaryDoc:
    meta, body = read_front_matter(path)
    match = DOC_RE.match(path.name)
    kind = match.group(1) if match else OVERALL
    number = int(match.group(2)) if match else 0
    covers = meta.get("covers") or []
    if not isinstance(covers, list) or not all(isinstance(c, str) for c in covers):
        raise FileFormatError("'covers' must be a list of summary names", file=str(path))
    if kind == "arc" and not covers:
        raise FileFormatError("an arc needs 'covers': the summaries it condenses",
                              file=str(path))
    last = _int(meta, "last", number if kind == "checkpoint" else 0, path)
    first = _int(meta, "first", previous_last + 1 if kind == "checkpoint" else 1, path)
    if kind != "arc" and not 1 <= first <= last:
        raise FileFormatError(f"range {first}–{last} is empty", file=str(path))
    level = 0 if kind == "checkpoint" else (1 if kind == "arc" else -1)
    return SummaryDoc(path.stem, kind, first, last, body, level, tuple(covers), meta, path)


def _look(folder: Path) -> tuple[Path, list[tuple[str, tuple[int, int, int]]]]:
    """The folder's summary files (*.md, not hidden), by name, with inode, size, mtime."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        return folder, []
    try:
        names = sorted(n for n in os.listdir(fd) if n.endswith(".md") and not n.startswith("."))
        stats = map(functools.partial(os.stat, dir_fd=fd), names)
        return folder, list(zip(names, map(_STAMP, stats)))
    finally:
        os.close(fd)


_STAMP = operator.attrgetter("st_ino", "st_size", "st_mtime_ns")


def load_tree(summaries_dir: Path, cache: DocCache | None = None) -> SummaryTree:
    """Read summaries/; a broken or inconsistent file is a FileFormatError naming it.
    With `cache`, the tree itself is kept while the folder's files stay as they are."""
    if cache is not None:
        return cache.tree(summaries_dir, lambda: _load_tree(summaries_dir, cache))
    return _load_tree(summaries_dir, None)


def _load_tree(summaries_dir: Path, cache: DocCache | None) -> SummaryTree:
    tree = SummaryTree()
    paths = sorted(summaries_dir.glob("*.md"), key=lambda p: p.name) \
        if summaries_dir.is_dir() else []        # (one folder: by name, as by path)
    found = [(DOC_RE.match(p.name), p) for p in paths]
    checkpoints = sorted((int(m.group(2)), p) for m, p in found if m and m.group(1) == "checkpoint")
    last = 0
    for _, path in checkpoints:
        doc = load_doc(path, last, cache)
        if doc.first <= last:
            raise FileFormatError(f"ticks {doc.first}–{doc.last} overlap an earlier checkpoint "
                                  f"(which ends at {last})", file=str(path))
        tree.docs[doc.name], last = doc, doc.last
    arcs = [load_doc(p, 0, cache) for m, p in found if m and m.group(1) == "arc"]
    for arc in sorted(arcs, key=lambda a: int(a.name.split("_")[1])):
        tree.docs[arc.name] = arc
    for arc in arcs:
        for name in arc.covers:
            if name not in tree.docs:
                raise FileFormatError(f"covers '{name}', which does not exist", file=str(arc.path))
            if name in tree.parent:
                raise FileFormatError(f"'{name}' is already covered by {tree.parent[name]}",
                                      file=str(arc.path))
            tree.parent[name] = arc.name
    settled: dict[str, SummaryDoc] = {}
    for arc in arcs:
        tree.docs[arc.name] = _settle_arc(tree, arc, set(), settled)
    if (summaries_dir / "overall.md").is_file():
        tree.overall = load_doc(summaries_dir / "overall.md", 0, cache)
    return tree


def _settle_arc(tree: SummaryTree, arc: SummaryDoc, seen: set[str],
                settled: dict[str, SummaryDoc]) -> SummaryDoc:
    """An arc's level and range follow from its children (whatever its front matter says);
    each arc settled once (`settled`), however many arcs above it."""
    if arc.name in settled:
        return settled[arc.name]
    if arc.name in seen:
        raise FileFormatError("its 'covers' form a cycle", file=str(arc.path))
    kids = [tree.docs[n] for n in arc.covers]
    kids = [_settle_arc(tree, k, seen | {arc.name}, settled) if k.kind == "arc" else k
            for k in kids]
    first, last = min(k.first for k in kids), max(k.last for k in kids)
    level = max(k.level for k in kids) + 1
    settled[arc.name] = SummaryDoc(arc.name, "arc", first, last, arc.body, level, arc.covers,
                                   arc.meta, arc.path)
    return settled[arc.name]


# -- tier 3 --------------------------------------------------------------------


def tree_depth(tree: SummaryTree) -> int:
    """The highest level in the tree (0: checkpoints only or none)."""
    return max((d.level for d in tree.docs.values()), default=0)


def write_doc(path: Path, meta: dict[str, Any], body: str) -> SummaryDoc:
    """Write a summary file (front matter with the body's sha1) and return it as loaded."""
    body = body.strip()
    atomic_write(path, render_front_matter({**meta, "sha1": body_sha1(body)}, body))
    match = DOC_RE.match(path.name)
    kind = match.group(1) if match else OVERALL
    level = int(meta.get("level", 0))
    return SummaryDoc(path.stem, kind, int(meta["first"]), int(meta["last"]), body, level,
                      tuple(meta.get("covers") or ()), {**meta, "sha1": body_sha1(body)}, path)


# -- pending checkpoints -----------------------------------------------------------


def pending_ticks(project: Project, config: Config, tree: SummaryTree | None = None, *,
                  tick: int | None = None) -> list[int]:
    """Checkpoints owed: those recorded pending in state.yaml, and every multiple of
    the interval after the last checkpoint, up to the last committed tick (`tick`, when
    the caller knows it: else read from the scenes folder)."""
    tree = tree or load_tree(project.summaries_dir)
    done, tick = tree.last_tick(), project.tick() if tick is None else tick
    interval = config.generation.checkpoint_summary_interval
    recorded = project.state().get("pending_checkpoints") or []
    owed = {int(t) for t in recorded if isinstance(t, int) and done < int(t) <= tick}
    owed |= set(range((done // interval + 1) * interval, tick + 1, interval))
    return sorted(owed)


def record_pending(project: Project, ticks: list[int]) -> None:
    """Keep the checkpoints still owed in `.novel/state.yaml` (`pending_checkpoints`)."""
    if sorted(ticks) != sorted(project.state().get("pending_checkpoints") or []):
        project.update_state(pending_checkpoints=sorted(ticks) or None)
