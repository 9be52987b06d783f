"""The types of the memory files' fields, checked as they are read.

A hand edit that puts `last_seen: soon` in a character, `scenes: x` or
`status: closed` in a loop or `a: 1` in a relationship would otherwise break a
tick later with a raw traceback. `check_entity` and `check_items` raise FileFormatError naming the
file, the line and the field instead (a character's `voice` card, key by key:
story/memory/voices.py). Fields not listed here are the user's
own and are left alone; a field left empty (`~`) counts as absent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from novel_agent.errors import FileFormatError
from novel_agent.files import yaml_line
from novel_agent.story.memory.lookup import LOOP_STATUSES
from novel_agent.story.memory.voices import check_voice


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _tick(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _texts(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _ticks(v: Any) -> bool:
    return isinstance(v, list) and all(_tick(x) for x in v)


def _flag(v: Any) -> bool:
    return isinstance(v, bool)


def _loop_status(v: Any) -> bool:
    return v in LOOP_STATUSES


def _payoff(v: Any) -> bool:
    # a chapter (7, or "7") or a beat ("7.2", quoted: 7.2 unquoted is a number, and 7.10 7.1)
    return _tick(v) or (isinstance(v, str) and bool(v.strip()))


Check = tuple[Callable[[Any], bool], str]
TEXT: Check = (_text, "text (quote it)")
TICK: Check = (_tick, "a tick number")
TEXTS: Check = (_texts, "a list of text")
TICKS: Check = (_ticks, "a list of tick numbers")
FLAG: Check = (_flag, "true or false")
LOOP_STATUS: Check = (_loop_status, " or ".join(LOOP_STATUSES))
PAYOFF: Check = (_payoff, 'a chapter or a beat of the outline (7, or "7.2" quoted)')

FIELDS: dict[str, dict[str, Check]] = {
    "characters": {"id": TEXT, "name": TEXT, "description": TEXT, "traits": TEXTS,
                   "goals": TEXTS, "state": TEXT, "first_seen": TICK, "last_seen": TICK,
                   # the continuity audit's knowledge (audit/knowledge.py)
                   "status": TEXT, "status_in": TICK, "status_how": TEXT, "place": TEXT,
                   "place_in": TICK, "holds": TEXTS},
    "locations": {"id": TEXT, "name": TEXT, "description": TEXT, "first_seen": TICK},
    "loops": {"id": TEXT, "description": TEXT, "status": LOOP_STATUS, "opened_in": TICK,
              "resolved_in": TICK, "scenes": TICKS, "resolution": TEXT,
              # a book with an outline (story/outline/payoffs.py): where it is meant to pay off,
              # and an author's `keep_open: true` (left open on purpose at the end)
              "payoff": PAYOFF, "keep_open": FLAG},
    "relationships": {"id": TEXT, "a": TEXT, "b": TEXT, "kind": TEXT, "description": TEXT,
                      "since": TICK, "updated_in": TICK},
    "facts": {"text": TEXT, "scene": TICK, "witnesses": TEXTS},
}


def _check(kind: str, item: dict[str, Any], path: Path, *where: str | int) -> None:
    for key, (ok, expected) in FIELDS[kind].items():
        value = item.get(key)
        if value is not None and not ok(value):
            raise FileFormatError(f"'{key}' must be {expected}, not {value!r}: fix the value "
                                  "or remove the line", file=str(path),
                                  line=yaml_line(path, *where, key))


def check_entity(kind: str, data: dict[str, Any], path: Path) -> None:
    """Check one character or location file's fields (a character's voice card key by
    key: story/memory/voices.py)."""
    _check(kind, data, path)
    if kind == "characters" and data.get("voice") is not None:
        wrong = check_voice(data["voice"])
        if wrong is not None:
            key, expected = wrong
            raise FileFormatError(f"'{key}' must be {expected}: fix the value or remove the "
                                  "line", file=str(path), line=yaml_line(path, *key.split(".")))


def check_items(kind: str, items: list[dict[str, Any]], path: Path, key: str | None) -> None:
    """Check the items of a list file (loops, relationships, facts); `key` is the
    top-level key holding the list (None when the file is the list itself)."""
    prefix = [key] if key else []
    for number, item in enumerate(items):
        _check(kind, item, path, *prefix, number)
