"""What the disk and the index said, in words a user can act on.

`explain(exc)` turns an OSError (disk full, read-only, permission, a name too
long) or a sqlite3 error from `.novel/index.db` into a StorageError of one line
naming the file and what to do. The CLI uses it for anything the library let
through; the pipeline for what failed after a commit.
"""

from __future__ import annotations

import errno
import sqlite3

from novel_agent.errors import NovelError, StorageError

_ADVICE = {
    errno.ENOSPC: "the disk is full: free some space and run again",
    errno.EDQUOT: "the disk quota is exceeded: free some space and run again",
    errno.EROFS: "the file system is read-only: make it writable and run again",
    errno.EACCES: "permission denied: make the project writable (chmod -R u+w) and run again",
    errno.EPERM: "not permitted: make the project writable (chmod -R u+w) and run again",
    errno.ENAMETOOLONG: "the file name is too long: use a shorter name",
}


def explain(exc: BaseException) -> NovelError:
    """A NovelError for `exc` (itself when it already is one)."""
    if isinstance(exc, NovelError):
        return exc
    if isinstance(exc, sqlite3.Error):
        return _sqlite(exc)
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        advice = _ADVICE.get(exc.errno or 0, exc.strerror or str(exc))
        return StorageError(f"{where}{advice}", path=exc.filename and str(exc.filename),
                            errno=exc.errno)
    return StorageError(f"{type(exc).__name__}: {exc}")


def _sqlite(exc: sqlite3.Error) -> StorageError:
    text = str(exc)
    if "disk is full" in text or "disk I/O" in text:
        return StorageError(f".novel/index.db: {_ADVICE[errno.ENOSPC]} (sqlite: {text})",
                            path=".novel/index.db", errno=errno.ENOSPC)
    if "readonly" in text or "read-only" in text:
        return StorageError(f".novel/index.db: {_ADVICE[errno.EROFS]} (sqlite: {text})",
                            path=".novel/index.db", errno=errno.EROFS)
    return StorageError(f".novel/index.db: {text}; it is a cache: delete it (or run "
                        "`novel doctor --fix`) and it is rebuilt", path=".novel/index.db")
