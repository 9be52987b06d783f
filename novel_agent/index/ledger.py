"""The usage ledger: one row per model call, in `.novel/usage.jsonl` and `.novel/index.db`.

The JSON-lines file is the ledger's truth: append-only, one JSON object per
call (see index.USAGE_COLUMNS), written when the session flushes (after every
tick, failed ones included, and when a command ends). The index's `usage`
table is its queryable copy; `restore_usage` rebuilds that table from the
file (for `novel reindex`, and for an index.db that was deleted).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from novel_agent.errors import FileFormatError
from novel_agent.files import read_bytes
from novel_agent.index.db import USAGE_COLUMNS, Index
from novel_agent.story.project.folder import Project


def ledger_path(project: Project) -> Path:
    """Where a project's usage rows are appended."""
    return project.novel_dir / "usage.jsonl"


def append_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Append `rows` to the ledger, one JSON object per line, and sync it to disk."""
    if not rows:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps({c: row.get(c) for c in USAGE_COLUMNS}, ensure_ascii=False) + "\n"
                   for row in rows)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The ledger's rows, oldest first ([] when there is no file).

    A last line cut short (a crash mid-append) is skipped; any other line that
    is not a JSON object is a FileFormatError naming the file and the line.
    """
    try:
        text = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        return []
    lines = text.split("\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            if number == len(lines):      # no newline after it: an append cut short
                break
            raise FileFormatError("not a JSON usage row", file=str(path), line=number) from None
        if not isinstance(row, dict):
            raise FileFormatError("not a JSON usage row", file=str(path), line=number)
        rows.append(row)
    return rows


def record(project: Project, index: Index | None, rows: list[dict[str, Any]]) -> None:
    """Write a session's new rows: first to the ledger file, then to the index."""
    append_rows(ledger_path(project), rows)
    if index is not None and rows:
        index.log_usage(rows)


def restore_usage(project: Project, index: Index) -> int:
    """Rebuild the index's usage table from `.novel/usage.jsonl`; returns the rows restored."""
    rows = read_rows(ledger_path(project))
    index.replace_usage(rows)
    return len(rows)
