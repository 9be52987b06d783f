"""The memory records: what each file of memory/ holds, declared once.

A character, a place, a loop and a relationship (one file each,
`memory/<kind>/<id>.yaml`) and a fact (an item of `memory/facts.yaml`) are plain
dicts, as their YAML files hold them. Each kind's keys and their types are declared
here once, as a TypedDict (Character, Location, Loop, Relationship, Fact): mypy checks
the code against them, and `check_entity` and `check_items` check a file against them
as it is read. A hand edit that puts `last_seen: soon` in a character, `scenes: x` or
`status: closed` in a loop or `a: 1` in a relationship would otherwise break a tick
later with a raw traceback: a key whose type says how it is checked (Text, Tick,
Texts, Ticks, Flag, Payoff, Status, Voice) is a FileFormatError naming the file, the
line and the key instead (a character's voice card key by key: `check_voice`). Keys
not declared are the author's own and are left alone. A key left empty (`~`) counts
as absent: it passes the check and reads as None. The audit's `lost` and
`appearance` are read as the audit finds them (audit/knowledge.py looks at each
entry). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import (
    Annotated,
    Any,
    Final,
    Literal,
    NotRequired,
    Required,
    TypedDict,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from novel_agent.errors import FileFormatError
from novel_agent.files import yaml_line


@dataclass(frozen=True)
class Check:
    """How a key's value is checked as its file is read: `ok(value)`, else it must be
    `expected` (said in the error)."""

    ok: Callable[[Any], bool]
    expected: str


@dataclass(frozen=True)
class CardCheck:
    """A mapping checked key by key: `wrong(value)` says the key at fault and what it
    must be, or None."""

    wrong: Callable[[Any], tuple[str, str] | None]


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


def _payoff(v: Any) -> bool:
    # a chapter (7, or "7") or a beat ("7.2", quoted: 7.2 unquoted is a number, and 7.10 7.1)
    return _tick(v) or (isinstance(v, str) and bool(v.strip()))


# A loop's status: open, progressing (a scene touched it), deferred (its payoff passed and
# it was pushed on: story/outline/payoffs.py) or resolved; all but resolved are still open.
LoopStatus = Literal["open", "progressing", "deferred", "resolved"]
LOOP_STATUSES: tuple[LoopStatus, ...] = get_args(LoopStatus)
OPEN_STATUSES = frozenset(LOOP_STATUSES[:3])


def _loop_status(v: Any) -> bool:
    return v in LOOP_STATUSES


Text = Annotated[str, Check(_text, "text (quote it)")]
Tick = Annotated[int, Check(_tick, "a tick number")]          # a scene's tick, 0 or more
Texts = Annotated[list[str], Check(_texts, "a list of text")]
Ticks = Annotated[list[int], Check(_ticks, "a list of tick numbers")]
Flag = Annotated[bool, Check(_flag, "true or false")]
Status = Annotated[LoopStatus, Check(_loop_status, " or ".join(LOOP_STATUSES))]
Payoff = Annotated[int | str, Check(_payoff, 'a chapter or a beat of the outline (7, or "7.2" '
                                             'quoted)')]


# A character's voice card (story/memory/voices.py): how they speak.
AUTHOR: Final = "author"
EXTRACTOR: Final = "extractor"
VoiceText = Literal["diction", "habits"]        # a line of text each
VoiceList = Literal["tics", "never"]            # a list of words or phrases each
VOICE_TEXTS: tuple[VoiceText, ...] = get_args(VoiceText)
VOICE_LISTS: tuple[VoiceList, ...] = get_args(VoiceList)
VOICE_FIELDS: tuple[VoiceText | VoiceList, ...] = (*VOICE_TEXTS, *VOICE_LISTS)


class VoiceCard(TypedDict, total=False):
    """A character's `voice`: who wrote it (the author's is kept as written), how they
    speak, the words they use again and again and those they never say."""

    by: Literal["author", "extractor"]
    diction: str
    habits: str
    tics: list[str]
    never: list[str]


def check_voice(value: Any) -> tuple[str, str] | None:
    """What is wrong with a `voice` value as a hand edit left it: (the key at fault, what
    it must be), or None when it can be used. Empty fields (`~`) count as absent."""
    if not isinstance(value, Mapping):
        return "voice", f"a mapping of {', '.join(VOICE_FIELDS)} (and by)"
    for key, item in value.items():
        if item is None:
            continue
        if key in VOICE_TEXTS and not isinstance(item, str):
            return f"voice.{key}", "text (quote it)"
        if key in VOICE_LISTS and not (isinstance(item, list) and
                                       all(isinstance(x, str) for x in item)):
            return f"voice.{key}", "a list of text, like [mark me, aye]"
        if key == "by" and item not in (AUTHOR, EXTRACTOR):
            return "voice.by", f"{AUTHOR} or {EXTRACTOR}"
        if key not in (*VOICE_FIELDS, "by"):
            return f"voice.{key}", f"one of {', '.join(VOICE_FIELDS)} or by (unknown key)"
    return None


Voice = Annotated[VoiceCard, CardCheck(check_voice)]

# What the continuity audit records of a character (audit/knowledge.py), read as it finds it.
Lost = TypedDict("Lost", {"item": str, "in": int, "how": str}, total=False)   # parted with
Seen = TypedDict("Seen", {"value": str, "in": int}, total=False)   # a feature, as first stated


class Character(TypedDict, total=False):
    """memory/characters/<id>.yaml: a person of the story (the file name is the id; a
    name is given from it when the file has none)."""

    id: Required[Text]
    name: Required[Text]
    description: Text
    traits: Texts
    goals: Texts
    state: Text                       # their state now, as the last scene left it
    first_seen: Tick
    last_seen: Tick
    # the continuity audit's knowledge (audit/knowledge.py)
    status: Text                      # alive, dead or absent
    status_in: Tick
    status_how: Text
    place: Text
    place_in: Tick
    holds: Texts
    aliases: Texts                    # other forms of the name (story/memory/store.py)
    pinned: Flag                      # scores high wherever it is a candidate
    voice: Voice
    lost: list[Lost]
    appearance: dict[str, Seen]       # feature -> how it was first stated


class Location(TypedDict, total=False):
    """memory/locations/<id>.yaml: a place of the story."""

    id: Required[Text]
    name: Required[Text]
    description: Text
    first_seen: Tick
    last_seen: Tick
    aliases: Texts
    pinned: Flag


class Loop(TypedDict, total=False):
    """memory/loops/<id>.yaml: a question the story has raised (an old layout's loop may
    come without an id until it is given one: story/memory/files.give_ids)."""

    id: Text
    description: Text
    status: Status
    opened_in: Tick
    resolved_in: Tick | None          # None while open
    scenes: Ticks                     # the scenes it played in
    resolution: Text
    # a book with an outline (story/outline/payoffs.py): where it is meant to pay off,
    # and an author's `keep_open: true` (left open on purpose at the end)
    payoff: Payoff
    keep_open: Flag
    pinned: Flag


class Relationship(TypedDict, total=False):
    """memory/relationships/<id>.yaml: what two people are to each other (the id names
    both: story/memory/store.relationship_id)."""

    id: Text
    a: Text
    b: Text
    kind: Text
    description: Text
    since: Tick
    updated_in: Tick
    pinned: Flag


class Fact(TypedDict, total=False):
    """An item of memory/facts.yaml: what a scene established, and who witnessed it (none:
    everyone knows it)."""

    text: Text
    scene: Tick
    witnesses: Texts
    pinned: Flag


Entity = Character | Location             # an item found by its name (story/memory/lookup.py)
Named = TypeVar("Named", Character, Location)     # a character or a place, whichever is given
Record = Character | Location | Loop | Relationship | Fact    # an item of any kind
KINDS: dict[str, type] = {"characters": Character, "locations": Location, "loops": Loop,
                          "relationships": Relationship, "facts": Fact}


def is_open(loop: Mapping[str, Any]) -> bool:
    """Whether a loop is still open: open, progressing or deferred (no status: open)."""
    return (loop.get("status") or "open") in OPEN_STATUSES


def _check_of(hint: Any) -> Check | CardCheck | None:
    """How a key of this type is checked (Required, NotRequired and `| None` looked
    through), or None."""
    while get_origin(hint) in (Required, NotRequired) or \
            get_origin(hint) is Union and type(None) in get_args(hint):
        hint = next(arg for arg in get_args(hint) if arg is not type(None))
    checks = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Check | CardCheck)]
    return checks[0] if checks else None


def _checks(record: type) -> dict[str, Check | CardCheck]:
    hints = get_type_hints(record, include_extras=True)
    return {key: check for key, hint in hints.items() if (check := _check_of(hint)) is not None}


CHECKS: dict[str, dict[str, Check | CardCheck]] = {kind: _checks(record)
                                                   for kind, record in KINDS.items()}


def _check(kind: str, item: Mapping[str, Any], path: Path, *where: str | int) -> None:
    for key, check in CHECKS[kind].items():
        value = item.get(key)
        if value is None:
            continue
        if isinstance(check, Check):
            if not check.ok(value):
                raise FileFormatError(f"'{key}' must be {check.expected}, not {value!r}: fix "
                                      "the value or remove the line", file=str(path),
                                      line=yaml_line(path, *where, key))
        elif (wrong := check.wrong(value)) is not None:
            at, expected = wrong
            raise FileFormatError(f"'{at}' must be {expected}: fix the value or remove the "
                                  "line", file=str(path), line=yaml_line(path, *where, *at.split(".")))


def check_entity(kind: str, data: Mapping[str, Any], path: Path) -> None:
    """Check one item file's fields (a character, a place, a loop or a relationship)."""
    _check(kind, data, path)


def check_items(kind: str, items: list[dict[str, Any]], path: Path, key: str | None) -> None:
    """Check the items of a list file (facts; loops and relationships in the old layout);
    `key` is the top-level key holding the list (None when the file is the list itself)."""
    prefix = [key] if key else []
    for number, item in enumerate(items):
        _check(kind, item, path, *prefix, number)
