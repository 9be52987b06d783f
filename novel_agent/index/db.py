"""`.novel/index.db`: a SQLite cache beside the files (token counts, usage log,
the search index, embeddings, prose numbers).

The files are the truth; this database only remembers what is costly to
recompute (the usage log's truth is `.novel/usage.jsonl`, see ledger.py), so a
file that is not a database, or one whose pages SQLite's quick_check finds
garbled (a few ms for a book of 1,000 scenes), is deleted and rebuilt on open
(`rebuilt` says so in one line); one whose damage shows only in a query is
rebuilt by `heal` (index/sync.heal_index reads the files again).
The search tables (`docs`, its FTS5 twin `search`, and `files`, the size and
mtime of every file they were read from) are filled and kept current by
index_sync.py; the queries on them are search.py's.
It migrates itself: each named migration (one statement or a list) runs once, in
order, in one transaction, and is recorded in `_migrations`. Multi-row writes go
in one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BUSY_SECONDS = 10      # how long a write waits for another process's to end

MIGRATIONS: list[tuple[str, str | list[str]]] = [
    ("001_token_counts",
     "CREATE TABLE token_counts (key TEXT PRIMARY KEY, tokens INTEGER NOT NULL)"),
    ("002_usage",
     "CREATE TABLE usage (id INTEGER PRIMARY KEY, tick INTEGER, stage TEXT, model TEXT, "
     "prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER, "
     "latency REAL, response_format TEXT)"),
    ("003_usage_ledger", [
        f"ALTER TABLE usage ADD COLUMN {column}" for column in (
            "provider TEXT", "attempts INTEGER", "finish_reason TEXT", "cost REAL",
            "error TEXT", "at TEXT")]),
    ("004_search", [
        # One row per searchable thing (a scene, a fact, a character, a lore entry, a
        # summary...); `source` is the file it was read from, `sha` its content's hash.
        "CREATE TABLE docs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, "
        "kind TEXT NOT NULL, tick INTEGER, source TEXT NOT NULL, sha TEXT NOT NULL, "
        "title TEXT, body TEXT, meta TEXT, pinned INTEGER NOT NULL DEFAULT 0)",
        "CREATE INDEX docs_source ON docs (source)",
        "CREATE INDEX docs_kind_tick ON docs (kind, tick)",
        "CREATE INDEX docs_pinned ON docs (kind) WHERE pinned = 1",
        # BM25 over the same rows (rowid = docs.id); `kind` is there to filter on inside
        # the match (weight 0), so `ORDER BY rank LIMIT n` stays FTS5's fast path.
        "CREATE VIRTUAL TABLE search USING fts5(title, summary, body, names, kind, "
        "tokenize = 'porter unicode61 remove_diacritics 2')",
        "INSERT INTO search (search, rank) VALUES ('rank', 'bm25(2.0, 3.0, 1.0, 2.0, 0.0)')",
        "CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER)",
        "CREATE TABLE embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL)",
    ]),
    # prompt tokens written to the provider's prompt cache (Anthropic bills them apart)
    ("005_usage_cache_writes", "ALTER TABLE usage ADD COLUMN cache_write_tokens INTEGER"),
    # a text's prose numbers (reports/prose.py), as JSON, by a hash of what they measured
    ("006_prose_numbers", "CREATE TABLE prose_numbers (key TEXT PRIMARY KEY, numbers TEXT NOT NULL)"),
]
# The columns of a usage row, in the order `novel usage --json` and usage.jsonl give them.
USAGE_COLUMNS = ("tick", "stage", "model", "provider", "prompt_tokens", "cached_tokens",
                 "completion_tokens", "latency", "attempts", "finish_reason", "cost", "error",
                 "response_format", "at", "cache_write_tokens")


def unreadable(exc: BaseException) -> bool:
    """Whether `exc` says the database file is garbage (in whole or in some pages), not
    that it is busy or on a full disk."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and (
        "not a database" in text or "malformed" in text or "encrypted" in text)


class Damaged(sqlite3.DatabaseError):
    """PRAGMA quick_check found garbled pages in a database that opened (its first line)."""


class Index:
    """The project's SQLite cache. Also a CountStore for tokens.TokenCounter."""

    def __init__(self, path: Path | str = ":memory:"):
        self.path, self.rebuilt = path, ""
        self._pending: dict[str, int] = {}
        self.created = path != ":memory:" and not Path(path).exists()
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._open(check=not self.created)
        except sqlite3.DatabaseError as exc:
            if path == ":memory:" or not (unreadable(exc) or isinstance(exc, Damaged)):
                raise
            self.heal(exc)

    def _open(self, check: bool = False) -> None:
        self.db = sqlite3.connect(str(self.path), timeout=BUSY_SECONDS)
        if check and self.path != ":memory:":
            found = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]
            if found != "ok":       # "*** in database main ***\nOn tree page 15 cell 57: …"
                raise Damaged(f"quick_check found garbled pages: {found.splitlines()[-1]}")
        self.db.execute("PRAGMA journal_mode=WAL" if self.path != ":memory:"
                        else "PRAGMA journal_mode=MEMORY")
        self.applied = self.migrate()

    def heal(self, exc: BaseException) -> None:
        """Delete the damaged file (`exc` said how) and start an empty one in its place, on
        this same Index (what holds it sees the new one); `rebuilt` says so. The caller
        fills it again from the files (index/sync.heal_index)."""
        self.db.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self._pending.clear()
        self._open()
        self.rebuilt = (f"{self.path} was unreadable ({exc}): it is a cache and has been "
                        "rebuilt (token counts are recounted)")

    @property
    def migrated(self) -> bool:
        """Whether this open added the search tables to an existing index."""
        return "004_search" in self.applied and not self.created

    def migrate(self) -> list[str]:
        """Apply the migrations not yet applied; returns their names."""
        self.db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY)")
        done = {row[0] for row in self.db.execute("SELECT name FROM _migrations")}
        applied = []
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            with self.writing():
                for statement in [sql] if isinstance(sql, str) else sql:
                    self.db.execute(statement)
                self.db.execute("INSERT INTO _migrations (name) VALUES (?)", (name,))
            applied.append(name)
        return applied

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed at the end (rolled back on an error), that
        holds the write lock from its start (BEGIN IMMEDIATE: another process's write
        is waited for, up to BUSY_SECONDS). A transaction begun implicitly that reads
        before it writes fails at once when another process wrote in between, however
        long the busy timeout: sync (its deletes of nothing begin one, then it reads)
        did, when the daemon ticked while the context page was built."""
        if not self.db.in_transaction:    # (inside another: that one holds the lock)
            self.db.execute("BEGIN IMMEDIATE")
        with self.db:
            yield self.db

    # -- CountStore ------------------------------------------------------------
    def get(self, key: str) -> int | None:
        if key in self._pending:
            return self._pending[key]
        row = self.db.execute("SELECT tokens FROM token_counts WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, n: int) -> None:
        self._pending[key] = n

    def flush(self) -> None:
        """Write buffered counts in one transaction."""
        if not self._pending:
            return
        with self.writing():
            self.db.executemany("INSERT OR REPLACE INTO token_counts (key, tokens) VALUES (?, ?)",
                                list(self._pending.items()))
        self._pending.clear()

    # -- usage log -------------------------------------------------------------
    def log_usage(self, rows: list[dict[str, Any]]) -> None:
        """Record model calls (see USAGE_COLUMNS; a missing key is NULL) in one transaction."""
        with self.writing():
            self._insert_usage(rows)

    def _insert_usage(self, rows: list[dict[str, Any]]) -> None:
        names = ", ".join(USAGE_COLUMNS)
        marks = ", ".join(f":{c}" for c in USAGE_COLUMNS)
        self.db.executemany(f"INSERT INTO usage ({names}) VALUES ({marks})",
                            [{c: row.get(c) for c in USAGE_COLUMNS} for row in rows])

    def usage_rows(self, after_id: int = 0) -> list[dict[str, Any]]:
        """Every usage row (with its `id`) after `after_id`, oldest first."""
        cursor = self.db.execute(f"SELECT id, {', '.join(USAGE_COLUMNS)} FROM usage "
                                 "WHERE id > ? ORDER BY id", (after_id,))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor]

    def last_usage_id(self) -> int:
        """The id of the newest usage row (0 when there is none)."""
        return self.db.execute("SELECT COALESCE(MAX(id), 0) FROM usage").fetchone()[0]

    def replace_usage(self, rows: list[dict[str, Any]]) -> None:
        """Empty the usage table and fill it with `rows`, in one transaction."""
        with self.writing():
            self.db.execute("DELETE FROM usage")
            self._insert_usage(rows)

    # -- prose numbers ---------------------------------------------------------
    def prose_numbers(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored prose numbers (JSON text) of those of `keys` that have some."""
        keys, found = list(keys), dict[str, str]()
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            found.update(self.db.execute(
                f"SELECT key, numbers FROM prose_numbers WHERE key IN ({', '.join('?' * len(chunk))})",
                chunk).fetchall())
        return found

    def put_prose_numbers(self, rows: Mapping[str, str]) -> None:
        """Store prose numbers (key -> JSON text) in one transaction."""
        if rows:
            with self.writing():
                self.db.executemany("INSERT OR REPLACE INTO prose_numbers (key, numbers) "
                                    "VALUES (?, ?)", list(rows.items()))

    def close(self) -> None:
        self.flush()
        self.db.close()


def quick_check(uri: str) -> bool:
    """Whether SQLite's quick_check finds the database at `uri` sound (opened as given:
    `mode=ro` leaves it as it is)."""
    with sqlite3.connect(uri, uri=True) as db:
        ok = db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    db.close()
    return ok


def search_damage(uri: str) -> str:
    """What FTS5's integrity-check finds wrong with the search table of the database at
    `uri` (garbled blocks inside pages quick_check finds sound), "" when nothing or when it
    cannot be asked (read-only, or another process writing): it writes nothing, and what
    it began is rolled back."""
    db = sqlite3.connect(uri, uri=True, timeout=0)
    try:
        db.execute("INSERT INTO search (search, rank) VALUES ('integrity-check', 0)")
        return ""
    except sqlite3.OperationalError:
        return ""           # read-only, busy, or no search table yet
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        db.rollback()
        db.close()
