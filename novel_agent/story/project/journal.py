"""Files that land together: the journaled Transaction, and `recover` for one a crash cut.

A Transaction collects operations on project files (write a whole file, append
to one, remove one) and `commit()` lands them all or none:

An operation may also cut a file: keep its first bytes and write a text after
them (`cut`: a prompt log that loses its messages keeps its report as it is);
its few bytes are written in the journal itself, not staged.

1. every text is written to a staging file under `.novel/txn/` and fsynced;
2. the journal (`journal.json`) names every operation: writing it is the
   commit point;
3. each operation is applied (a rename, an append, an unlink), the folders
   touched are fsynced, and the journal goes.

A crash before step 2 leaves the project as it was (`recover` drops the
staging files); after it, `recover` applies the journal again from the top.
A transaction may say what it is (`label`: "the rewind to tick 4"), written
before anything is staged, so the note its recovery gives names it, whether it
was finished or dropped (`interrupted`).
Every operation gives the same result applied twice: a rename whose staging
file is gone was done; an append first truncates the file to the size the
journal recorded before it (a cut, to the size it keeps); removing a removed
file does nothing. So a tick's
commit writes only what changed (one file per changed character, loop or
relationship, the new facts appended) and still lands whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from novel_agent import crashpoints
from novel_agent.errors import FileFormatError, OverwriteError
from novel_agent.files import (
    atomic_write,
    dump_yaml,
    fsync_dir,
    read_bytes,
    temp_files,
    write_synced,
)

JOURNAL = "journal.json"
LABEL = "what.txt"       # what the transaction is, for the note its recovery gives


class Cut(NamedTuple):
    """A file cut: its first `at` bytes kept, `text` written after them."""

    at: int
    text: str


class Transaction:
    """Operations on files that must land together (a tick's commit). One operation per
    path: a later one replaces an earlier one (an append to a file staged whole is
    added to the staged text)."""

    def __init__(self, root: Path, work_dir: Path, label: str = ""):
        self.root = Path(root)
        self.work_dir = Path(work_dir)
        self.label = label
        self.ops: dict[Path, tuple[str, str]] = {}  # path -> ("write"|"append"|"cut"|"remove", text)
        self.new: set[Path] = set()
        self.kept: dict[Path, int] = {}     # the bytes a cut keeps

    def stage(self, path: Path, text: str, *, new: bool = False) -> None:
        """Write the whole file. `new`: the file must not exist yet; the commit stops,
        naming it, rather than replace it."""
        self.ops[Path(path)] = ("write", text)
        if new:
            self.new.add(Path(path))

    def stage_yaml(self, path: Path, data: Any) -> None:
        """Write a YAML file."""
        self.stage(path, dump_yaml(data))

    def append(self, path: Path, text: str) -> None:
        """Add `text` at the end of the file (created when missing)."""
        kind, staged = self.ops.get(Path(path), ("append", ""))
        self.ops[Path(path)] = (kind if kind != "remove" else "write",
                                (staged if kind != "remove" else "") + text)

    def cut(self, path: Path, cut: Cut) -> None:
        """Keep the file's first `cut.at` bytes and write `cut.text` after them."""
        self.ops[Path(path)] = ("cut", cut.text)
        self.kept[Path(path)] = cut.at
        self.new.discard(Path(path))

    def remove(self, path: Path) -> None:
        """Delete the file (nothing when it is already gone)."""
        self.ops[Path(path)] = ("remove", "")
        self.new.discard(Path(path))

    def commit(self) -> None:
        """Land every operation, all or nothing."""
        if not self.ops:
            return
        for path in [p for p in self.ops if p in self.new]:
            if path.exists():
                raise OverwriteError(f"{path.relative_to(self.root)} exists and this commit "
                                     "did not write it: nothing was changed; move the file "
                                     "away (or run `novel doctor --fix`)", path=str(path))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        if self.label:
            (self.work_dir / LABEL).write_text(self.label, encoding="utf-8")
        entries = [self._entry(number, path, kind, text)
                   for number, (path, (kind, text)) in enumerate(self.ops.items())]
        fsync_dir(self.work_dir)
        crashpoints.hit("before_journal")
        atomic_write(self.work_dir / JOURNAL, json.dumps(entries, indent=1))
        recover(self.root, self.work_dir, midway=lambda: crashpoints.hit("mid_commit"))

    def _entry(self, number: int, path: Path, kind: str, text: str) -> dict[str, Any]:
        """Stage one operation's text; its journal entry."""
        entry: dict[str, Any] = {"target": str(path.relative_to(self.root))}
        if kind == "remove":
            return {**entry, "remove": True}
        if kind == "cut":          # a few bytes: in the journal itself, no file staged
            return {**entry, "cut_at": self.kept[path], "text": text}
        staged = self.work_dir / f"{number:04d}.staged"
        staged.unlink(missing_ok=True)
        write_synced(os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                             0o666), text.encode("utf-8"))
        entry["staged"] = staged.name
        if kind == "append":
            entry["append_at"] = path.stat().st_size if path.exists() else 0
        return entry


def _entries(journal: Path) -> list[dict[str, Any]]:
    """The journal's operations; an unreadable journal is a FileFormatError."""
    try:
        entries = json.loads(read_bytes(journal).decode("utf-8"))
        if isinstance(entries, list) and all(isinstance(e, dict) and
                                             isinstance(e.get("target"), str) for e in entries):
            return entries
    except (ValueError, UnicodeDecodeError):
        pass
    raise FileFormatError("an unreadable commit journal (hand-edited?): move it away to drop "
                          "the interrupted commit", file=str(journal))


def journal_targets(work_dir: Path) -> list[str]:
    """The files an unfinished journal in `work_dir` will land (relative paths)."""
    try:
        return [str(e["target"]) for e in _entries(Path(work_dir) / JOURNAL)]
    except (OSError, FileFormatError):
        return []


def interrupted(work_dir: Path) -> tuple[str, bool] | None:
    """An interrupted transaction under `work_dir`: (its label, "" when it gave none; whether
    it reached its journal: `recover` finishes it, else drops it), or None when there is
    none."""
    work_dir = Path(work_dir)
    if not work_dir.is_dir():
        return None
    label_file = work_dir / LABEL
    try:
        label = read_bytes(label_file).decode("utf-8", errors="replace").strip()
    except (FileNotFoundError, FileFormatError):
        label = ""
    journaled = (work_dir / JOURNAL).is_file()
    if not (journaled or label or any(work_dir.glob("*.staged"))):
        return None
    return label, journaled


def _apply(entry: dict[str, Any], work_dir: Path, target: Path) -> bool:
    """Apply one journal entry; False when there was nothing left to do."""
    if entry.get("remove"):
        if not target.exists():
            return False
        target.unlink()
        return True
    if "cut_at" in entry:                # the same done twice: applied again, no harm
        if not target.is_file():
            return False
        _append(target, str(entry.get("text", "")).encode("utf-8"), int(entry["cut_at"]))
        return True
    staged = work_dir / str(entry.get("staged"))
    if not staged.is_file():
        return False                    # applied before the crash
    target.parent.mkdir(parents=True, exist_ok=True)
    if "append_at" not in entry:
        os.replace(staged, target)
        return True
    _append(target, read_bytes(staged), int(entry["append_at"]))
    staged.unlink()
    return True


def _append(target: Path, data: bytes, at: int) -> None:
    """Write `data` at offset `at` of `target` and cut what followed (an append applied
    before a crash is applied again, not twice). A file already shorter than `at`
    (changed since) gets `data` at its end."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o666)
    size = os.fstat(fd).st_size
    if size >= at:
        os.ftruncate(fd, at)
    os.lseek(fd, min(size, at), os.SEEK_SET)
    write_synced(fd, data)


def recover(root: Path, work_dir: Path, midway: Callable[[], None] | None = None) -> bool:
    """Finish a transaction whose journal was written; drop one that never got that far.

    Returns True when a journal was rolled forward.
    """
    work_dir = Path(work_dir)
    journal = work_dir / JOURNAL
    if not work_dir.is_dir():
        return False
    rolled = False
    if journal.is_file():
        touched = set()
        for entry in _entries(journal):
            target = Path(root) / entry["target"]
            if _apply(entry, work_dir, target):
                touched.add(target.parent)
                if midway is not None:
                    midway()
                    midway = None
        for folder in sorted(touched):
            fsync_dir(folder)
        journal.unlink()
        rolled = True
    for leftover in [*work_dir.glob("*.staged"), *temp_files(root, [work_dir])]:
        leftover.unlink(missing_ok=True)
    (work_dir / LABEL).unlink(missing_ok=True)
    return rolled
