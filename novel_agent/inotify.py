"""What changed under a folder since the last ask, told by the kernel (Linux inotify).

A session that looks at every file of the book before each tick pays a stat per
file, ~2,000 at tick 300: the one cost of the history's look that grows with the
book (history/seen.py). The kernel can say instead which files were written,
made, removed or moved since the last ask, and it says it synchronously: an
event is queued by the very call that changed the file, so once that call has
returned, a read of the queue (non-blocking, no thread) sees it. No barrier and no
observer thread are needed, which is why this is a few lines of ctypes and not
watchdog's observer (the daemon's, for waking up, is that).

`Watch.start` watches a folder and its subfolders (leaving out some top-level
names); `changed()` gives the paths (relative, "/"-separated) that events named
since the last call: files whose stat may have moved, folders made or removed
with everything in them. It gives None, meaning "look at everything", when the
kernel's queue overflowed or a watched folder was itself moved or removed. Where
inotify is not there (another system, the per-user limit reached), `start` gives
None and the caller looks at everything every time. A process holds at most MAX_OPEN
watches (the kernel's limit is per user, shared with the user's editors).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
from pathlib import Path

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_ISDIR = 0x01000000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
        | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
EVENT = struct.Struct("iIII")      # wd, mask, cookie, len; then len bytes of name
MAX_OPEN = 16     # watches a process holds at once (the kernel's default is 128 a user, for
_open = 0         # every program of theirs: a fleet of many books must not take them all)


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 (both must be there)
    except (OSError, AttributeError):
        return None
    return libc


class Watch:
    """The kernel's watch over one folder tree (see the module docstring)."""

    def __init__(self, libc: ctypes.CDLL, fd: int, root: Path, skipped: frozenset[str]):
        self.libc, self.fd, self.root, self.skipped = libc, fd, root, skipped
        self.folders: dict[int, str] = {}      # watch descriptor -> folder ("" or "a/b/")
        self.lost = False                      # a change the watch could not name

    @classmethod
    def start(cls, root: Path, skipped: set[str] | frozenset[str] = frozenset()) -> Watch | None:
        """Watch `root` and every folder under it but the top-level ones in `skipped`;
        None when the system has no inotify or will not give another watch."""
        global _open
        libc = _libc() if os.name == "posix" and _open < MAX_OPEN else None
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC) if libc else -1
        if libc is None or fd < 0:
            return None
        _open += 1
        watch = cls(libc, fd, Path(root), frozenset(skipped))
        if not watch._add_tree("", set()) or watch.lost:
            watch.close()
            return None
        return watch

    def changed(self) -> set[str] | None:
        """The paths events named since the last call (see the module docstring); None
        when some change could not be named."""
        found: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                self.lost = True
                break
            if not data:
                break
            self._read(data, found)
        lost, self.lost = self.lost, False
        return None if lost else found

    def close(self) -> None:
        global _open
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            _open -= 1

    # -- inside -------------------------------------------------------------------------

    def _read(self, data: bytes, found: set[str]) -> None:
        at = 0
        while at + EVENT.size <= len(data):
            wd, mask, _, size = EVENT.unpack_from(data, at)
            name = data[at + EVENT.size:at + EVENT.size + size].split(b"\0", 1)[0]
            at += EVENT.size + size
            if mask & IN_Q_OVERFLOW:
                self.lost = True
                continue
            folder = self.folders.get(wd)
            if mask & IN_IGNORED:
                self.folders.pop(wd, None)
                continue
            if folder is None:
                continue
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                self.lost = self.lost or folder == "" or mask & IN_MOVE_SELF != 0
                continue
            path = folder + os.fsdecode(name)
            if folder == "" and path in self.skipped:
                continue
            if mask & IN_ISDIR:
                if mask & (IN_CREATE | IN_MOVED_TO):     # a new folder: watched, and all in it
                    self._add_tree(path + "/", found)
                elif mask & (IN_DELETE | IN_MOVED_FROM):
                    found.add(path + "/")                # gone with all it held
                continue
            found.add(path)

    def _add_tree(self, folder: str, found: set[str]) -> bool:
        """Watch `folder` and the folders under it, naming the files in them in `found`
        (a folder made after the watch began: its files were not seen being made)."""
        stack = [folder]
        while stack:
            here = stack.pop()
            full = os.fsencode(self.root / here) if here else os.fsencode(self.root)
            wd = self.libc.inotify_add_watch(self.fd, full, MASK)
            if wd < 0:
                if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR):
                    continue                      # gone again already: its removal was seen
                self.lost = True                  # the limit of watches: look at everything
                return False
            self.folders[wd] = here
            try:
                with os.scandir(self.root / here if here else self.root) as entries:
                    for entry in entries:
                        path = here + entry.name
                        if entry.is_dir(follow_symlinks=False):
                            if not (here == "" and entry.name in self.skipped):
                                stack.append(path + "/")
                        elif folder:
                            found.add(path)
            except OSError:
                continue
        return True
