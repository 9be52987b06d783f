"""What of the story's files changed since the history's last entry, told by their stat:
what a session keeps between its ticks so that an entry costs what the tick changed,
not what the book holds.

`git add -A` over the whole project, twice a tick (the edits by hand before it,
the tick's files after), stats every file and rebuilds the trees of the folders
that moved: at tick 300 that was ~80 ms of a ~190 ms offline tick, and it grows
with the book. A session instead keeps every story file's stamp (inode, size,
mtime, mode) as of the last entry. Before a tick one look tells what moved since:
nothing, and no git runs at all; a few files, and only they are given to git.
After the tick, the files its commit wrote are stamped again and given to git by
name, so an edit by hand made while the tick ran gets an entry of its own at the
next tick instead of being folded into the tick's.

A look stats only the files the kernel named since the last one (novel_agent/
inotify.py), every file when it cannot say (no inotify, a lost event, the first
look) and at every summary (a project on a network file system, edited from
another machine, is seen at the next checkpoint at the latest).

A stamp cannot tell two writes apart within the clock's grain (git's "racy"
files): a file written less than RACY_NS before it was stamped is kept with a
digest of its bytes as well, and compared by them while its stamp stays the same.

`.novel/log/` is not looked at (the prompt logs are written by the tick's commit
and the summarizer, which name them): a log edited by hand is recorded at the next
whole look, which every command that opens the project and every summary makes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from novel_agent.inotify import Watch

Stamp = tuple[int, int, int, int]     # inode, size, mtime_ns, mode
RACY_NS = 2_000_000_000               # written this close to its stamp: compared by bytes too
SKIPPED = frozenset({".novel", ".git"})   # top-level folders that are not the story's
STATE_FILE = ".novel/state.yaml"      # what of .novel/ a look takes
TRAIL = 8                             # looks whose moved files are kept (`moved_since`)


class Look:
    """The stamps of the story's files at one moment, with the digests of the racy ones."""

    def __init__(self, stamps: dict[str, Stamp], digests: dict[str, bytes]):
        self.stamps, self.digests = stamps, digests


class SeenFiles:
    """The story files of one project as of the history's last entry (see the module
    docstring). Nothing is kept until a whole look is taken in (`keep`)."""

    def __init__(self, root: Path, clock: Callable[[], int], watch: bool = True):
        self.root, self.clock = Path(root), clock     # clock: the file system's, in ns
        self.kept: Look | None = None
        self.moved: set[str] | None = None     # paths that may differ from `kept` (None: any)
        self.now: dict[str, Stamp] | None = None   # the stamps as the last look saw them
        self.racy: dict[str, tuple[Stamp, bytes]] = {}   # the last look's racy files
        self.folders: dict[str, dict[str, Stamp]] = {}   # "memory/loops/" -> name -> stamp
        self.fresh = False                     # a look taken since `folders_now` last gave
        self.watching = watch
        self.watch: Watch | None = None
        self.whole_looks = 0
        self.looks = 0                         # looks taken: `moved_since` counts by them
        self.trail: list[tuple[int, set[str] | None]] = []   # the last looks' moved paths

    def look(self, whole: bool = False) -> Look:
        """Every story file's stamp now: a stat each of the files the kernel named since
        the last look, of every file when it cannot say or `whole` asks it (a file system
        whose changes the kernel does not see all of, a network one, is looked at whole
        at least that often)."""
        began = self.clock()
        if self.watch is None and self.watching:
            self.watch = Watch.start(self.root, SKIPPED)
            self.watching = self.watch is not None
            self.now = None                     # what changed before the watch began is unknown
        named = self.watch.changed() if self.watch else None
        moved: set[str] | None
        if named is None or self.now is None or whole:
            was = self.now
            self.now, self.moved, self.whole_looks = self._all(), None, self.whole_looks + 1
            self.folders = {}
            for path, stamp in self.now.items():
                folder, _, name = path.rpartition("/")
                self.folders.setdefault(folder + "/", {})[name] = stamp
            looked: Iterable[str] = self.now
            moved = None if was is None else {p for p in was.keys() | self.now.keys()
                                              if was.get(p) != self.now.get(p)}
        else:
            looked = moved = self._restamp(named)
            if self.moved is not None:
                self.moved |= set(looked)
        self.looks += 1
        self.trail = [*self.trail[-(TRAIL - 1):], (self.looks, moved)]
        self._set(STATE_FILE, self._stamp_of(STATE_FILE))     # .novel/ is not watched
        if self.moved is not None:
            self.moved.add(STATE_FILE)
        # a racy file's digest is taken again when it was looked at (its stamp may be the
        # same and its bytes not), kept while the kernel named no change to it
        again = {*looked, STATE_FILE}
        racy = {p: self.now[p] for p in (*again, *self.racy)
                if p in self.now and _racy(self.now[p], began)}
        self.racy = {p: (stamp, self._digest(p) if p in again or self.racy[p][0] != stamp
                         else self.racy[p][1]) for p, stamp in racy.items()}
        self.fresh = True
        return Look(dict(self.now), {p: digest for p, (_, digest) in self.racy.items()})

    def moved_since(self, look: int | None) -> set[str] | None:
        """The files whose stamp may have moved in the looks taken after look number
        `look` (those the kernel named, or a whole look found changed, came or gone);
        None when that is not known (no such look kept, the first look, a lost event)."""
        if look is None or look > self.looks or look < self.looks - len(self.trail):
            return None
        out: set[str] = set()
        for number, moved in self.trail:
            if number > look:
                if moved is None:
                    return None
                out |= moved
        return out

    def folders_now(self, folders: Iterable[str]) -> dict[str, dict[str, Stamp]] | None:
        """The files of each of `folders` ("memory/loops/") by name, as the look just
        taken saw them (so a tick reading them need not stat them again); None when no
        look was taken since the last call."""
        if not self.fresh:
            return None
        self.fresh = False
        return {folder: self.folders.get(folder, {}) for folder in folders}

    def look_at(self, paths: Iterable[str]) -> Look:
        """The stamps of `paths` now (one gone from the disk has none)."""
        began = self.clock()
        stamps = {p: s for p in paths if (s := self._stamp_of(p)) is not None}
        return Look(stamps, self._digests(stamps, began))

    def changed(self, now: Look) -> list[str] | None:
        """The files added, removed or changed since the kept look, in name order; None
        when nothing is kept (the caller looks at everything)."""
        if self.kept is None:
            return None
        was, is_ = self.kept.stamps, now.stamps
        if self.moved is None:
            maybe: Iterable[str] = is_.keys() | was.keys()
        else:
            maybe = self.moved | self.kept.digests.keys()
        moved = {p for p in maybe if was.get(p) != is_.get(p)}
        for path, digest in self.kept.digests.items():
            if path not in moved and path in is_ and \
                    (now.digests.get(path) or self._digest(path)) != digest:
                moved.add(path)
        return sorted(moved)

    def keep(self, look: Look) -> None:
        """The files as `look` (the last look) saw them are the last entry's."""
        self.kept, self.moved = look, set()

    def keep_part(self, look: Look, paths: Iterable[str]) -> None:
        """`paths` as `look` (a look at them only) saw them are in the last entry."""
        if self.kept is None:
            return
        for path in filter(covered, paths):
            self.kept.digests.pop(path, None)
            if path in look.stamps:
                self.kept.stamps[path] = look.stamps[path]
                if path in look.digests:
                    self.kept.digests[path] = look.digests[path]
            else:
                self.kept.stamps.pop(path, None)
            if self.moved is not None:
                self.moved.add(path)       # the kernel names it at the next look anyway

    def forget(self) -> None:
        """The next look is compared whole (an entry made some other way)."""
        self.kept = None

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
            self.watch, self.watching = None, False

    # -- files --------------------------------------------------------------------------

    def _all(self) -> dict[str, Stamp]:
        stamps: dict[str, Stamp] = {}
        folders = [""]
        while folders:
            folder = folders.pop()
            try:
                entries = os.scandir(self.root / folder if folder else self.root)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
            with entries:
                for entry in entries:
                    path = folder + entry.name
                    if entry.is_dir(follow_symlinks=False):
                        if not (folder == "" and entry.name in SKIPPED):
                            folders.append(path + "/")
                        continue
                    stamps[path] = _stamp(entry.stat(follow_symlinks=False))
        return stamps

    def _restamp(self, named: set[str]) -> set[str]:
        """Stamp again what the kernel named (a folder: all that was under it); the
        paths looked at."""
        assert self.now is not None
        gone = [n for n in named if n.endswith("/")]
        paths = {n for n in named if not n.endswith("/")}
        if gone:
            paths |= {p for p in self.now if any(p.startswith(g) for g in gone)}
        for path in paths:
            self._set(path, self._stamp_of(path))
        return paths

    def _set(self, path: str, stamp: Stamp | None) -> None:
        assert self.now is not None
        folder, _, name = path.rpartition("/")
        if stamp is None:
            self.now.pop(path, None)
            self.folders.get(folder + "/", {}).pop(name, None)
        else:
            self.now[path] = stamp
            self.folders.setdefault(folder + "/", {})[name] = stamp

    def _stamp_of(self, path: str) -> Stamp | None:
        try:
            st = os.lstat(self.root / path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return None if stat.S_ISDIR(st.st_mode) else _stamp(st)

    def _digests(self, stamps: dict[str, Stamp], began: int) -> dict[str, bytes]:
        return {path: self._digest(path) for path, stamp in stamps.items()
                if _racy(stamp, began)}

    def _digest(self, path: str) -> bytes:
        try:        # a link: the name it holds, as git keeps it (its target is not read)
            with open(self.root / path, "rb", opener=_no_follow) as handle:
                return hashlib.blake2b(handle.read(), digest_size=16).digest()
        except OSError:         # gone, a folder now, unreadable: taken as changed
            try:
                name = os.readlink(self.root / path).encode("utf-8", "surrogateescape")
            except OSError:
                return b""
            return hashlib.blake2b(b"link:" + name, digest_size=16).digest()


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW)


def covered(path: str) -> bool:
    """Whether a look takes the file (relative to the project)."""
    top = path.split("/", 1)[0]
    return top not in SKIPPED or path == STATE_FILE


def _racy(stamp: Stamp, began: int) -> bool:
    """Written so close to the look that a later write may leave the same stamp."""
    return stamp[2] >= began - RACY_NS


def _stamp(st: os.stat_result) -> Stamp:
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode
