"""The author's note: `steer.md`, and when it is in force.

The note is markdown; optional YAML front matter says when it expires by itself:

    ---
    until: 12        # in force up to and including tick 12
    ---
    ---
    ticks: 3         # in force for 3 ticks, counted from the first tick that reads it
    ---

A `ticks:` note needs to remember where it started: the first tick that reads
it records `steer: {sha1, since}` in `.novel/state.yaml` (committed with that
tick); an edit of the note (a new sha1) starts the count again. The planner and
the writer get the note only while it is in force.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from novel_agent.errors import FileFormatError
from novel_agent.files import parse_front_matter, read_text

KEYS = ("until", "ticks")


@dataclass(frozen=True)
class SteerNote:
    """The note's text, its expiry, and the hash that tells one version from another."""

    text: str = ""
    until: int | None = None
    ticks: int | None = None
    sha1: str = ""

    def since(self, tick: int, state: Mapping[str, Any]) -> int:
        """The first tick that read this version of the note (`tick` if none has yet)."""
        mark = state.get("steer") or {}
        if isinstance(mark, dict) and mark.get("sha1") == self.sha1 and isinstance(
                mark.get("since"), int):
            since: int = mark["since"]
            return since
        return tick

    def last_tick(self, tick: int, state: Mapping[str, Any]) -> int | None:
        """The last tick the note is in force for (None: no expiry)."""
        ends = []
        if self.until is not None:
            ends.append(self.until)
        if self.ticks is not None:
            ends.append(self.since(tick, state) + self.ticks - 1)
        return min(ends) if ends else None

    def active(self, tick: int, state: Mapping[str, Any]) -> bool:
        """Whether tick `tick` gets the note."""
        last = self.last_tick(tick, state)
        return bool(self.text) and (last is None or tick <= last)

    def mark(self, tick: int, state: Mapping[str, Any]) -> dict[str, Any] | None:
        """What state.yaml keeps after tick `tick` (None: nothing to remember)."""
        if self.ticks is None or not self.text:
            return None
        return {"sha1": self.sha1, "since": self.since(tick, state)}


def read_steer(path: Path) -> SteerNote:
    """Read steer.md (missing: an empty note). A bad front matter is a FileFormatError
    with the file and line."""
    try:
        raw = read_text(Path(path))
    except FileNotFoundError:
        return SteerNote()
    meta, body = parse_front_matter(raw, path=path)
    values: dict[str, int] = {}
    for key, value in meta.items():
        line = _key_line(raw, str(key))
        if key not in KEYS:
            raise FileFormatError(f"unknown key '{key}' in the front matter (expected until "
                                  "or ticks)", file=str(path), line=line)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise FileFormatError(f"'{key}' must be a whole number of at least 1, not {value!r}",
                                  file=str(path), line=line)
        values[str(key)] = value
    return SteerNote(text=body.strip(), sha1=hashlib.sha1(raw.encode()).hexdigest(), **values)


def _key_line(raw: str, key: str) -> int | None:
    """The 1-based line where the front matter sets `key`."""
    for number, line in enumerate(raw.splitlines()[1:], start=2):
        if line.split(":", 1)[0].strip() == key:
            return number
    return None


def describe(note: SteerNote, tick: int, state: Mapping[str, Any]) -> str:
    """One line for `novel status`: the note's first line, and whether it is in force."""
    if not note.text:
        return "none (write steer.md to guide the coming scenes)"
    first = note.text.splitlines()[0].strip()
    first = first if len(first) <= 60 else first[:59] + "…"
    last = note.last_tick(tick, state)
    if not note.active(tick, state):
        return f"\"{first}\" (expired after tick {last})"
    if last is None:
        return f"\"{first}\" (in force until you change it)"
    left = last - tick + 1
    return f"\"{first}\" (in force to tick {last}: {left} tick{'s' if left != 1 else ''} left)"
