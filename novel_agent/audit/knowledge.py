"""Checkable knowledge: who is alive, dead or absent, where each is, what each holds, how
each looks, who witnessed each fact, the story's clock, each with the scene that
established it.

It lives in the memory files, where a hand edit fixes it:

    memory/characters/mara_quill.yaml     status: dead        status_in: 12
                                          status_how: drowned at the weir
                                          place: the harbour  place_in: 14
                                          holds: [a brass key]
                                          lost: [{item: a map, in: 9, how: gave it to Tobin}]
                                          appearance: {eye colour: {value: grey, in: 2}}
    memory/facts.yaml                     - {text: ..., scene: 3, witnesses: [Mara Quill]}
    memory/clock.yaml                     {day: 3, time: "18:00", scene: 14, text: ...}
                                          (a date: {date: 1962-10-14, ...}, or
                                          {date: "--10-14"} when no year is stated)

Delete `status: dead` and the character lives again for the audit; add a name to a
fact's `witnesses` and that character knows it. A fact without `witnesses` (older
than the audit, or written by hand) is known to everyone. Pure functions over a
Memory; `read_clock` and `clock_file` are the clock file's only reader and writer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from novel_agent.files import dump_yaml, read_yaml
from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.records import Character, Fact, Lost, Seen
from novel_agent.story.memory.store import Memory, find_person
from novel_agent.text.names import normalize_name

STATUSES = ("alive", "dead", "absent")
CLOCK_FILE = "clock.yaml"
_STOP = set("the a an and of to in at on for with from by his her their its was is that this "
            "had has have be been he she they it as into over under not no but or".split())


# -- the clock ---------------------------------------------------------------------

_ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth "
    "twentieth".split())}
_PARTS = {"dawn": 6 * 60, "sunrise": 6 * 60, "morning": 9 * 60, "noon": 12 * 60,
          "midday": 12 * 60, "afternoon": 15 * 60, "dusk": 18 * 60, "sunset": 18 * 60,
          "evening": 19 * 60, "night": 22 * 60, "midnight": 24 * 60 - 1}


_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november "
    "december".split())}
_MONTHS |= {m[:3]: n for m, n in _MONTHS.items()} | {"sept": 9}
_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DOM = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4})\b)?"
# "14 October", "the 14th of October 1962", "October 14th", "October 14, 1962" (a weekday
# before them changes nothing)
_DATES = (re.compile(rf"\b{_DOM}(?:\s+of)?\s+{_MONTH}\b{_YEAR}"),
          re.compile(rf"\b{_MONTH}\s+{_DOM}\b{_YEAR}"))
YEAR, HALF_YEAR = 372, 186   # days of a year of 31-day months, and half of it: a date with no
                             # year stated this far before the last is the next year's


@dataclass(frozen=True)
class Clock:
    """A point of the story's time: a day (None: not stated) and minutes into it. The day
    is a count of the story's days ("day 3"), or, `calendar`, a date: month * 31 + day of
    the month, in `year` when one is stated."""

    day: int | None
    minutes: int | None
    text: str = ""
    calendar: bool = False
    year: int | None = None

    def before(self, other: Clock) -> bool:
        """Whether this point is surely earlier than `other` (both days stated, alike: two
        counts of days or two dates). Of two dates one of which has no year, the earlier in
        the calendar is earlier when it is within half a year of the other."""
        if self.day is None or other.day is None or self.calendar != other.calendar:
            return False
        if self.calendar and self.year is not None and other.year is not None \
                and self.year != other.year:
            return self.year < other.year
        if self.day != other.day:
            if self.calendar and None in (self.year, other.year):
                return (other.day - self.day) % YEAR < HALF_YEAR
            return self.day < other.day
        return self.minutes is not None and other.minutes is not None and \
            self.minutes < other.minutes

    def same_day(self, other: Clock) -> bool:
        """Whether both name the same day (a date's year, when both state one, too)."""
        return self.day is not None and (self.day, self.calendar) == (other.day, other.calendar) \
            and (None in (self.year, other.year) or self.year == other.year)

    def same(self, other: Clock) -> bool:
        """Whether both name the same moment (day and time stated and equal)."""
        return self.minutes is not None and self.same_day(other) and self.minutes == other.minutes

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"day": self.day}
        if self.calendar and self.day is not None:
            month, dom = divmod(self.day - 1, 31)
            out = {"date": f"{self.year:04d}-{month:02d}-{dom + 1:02d}" if self.year
                   else f"--{month:02d}-{dom + 1:02d}"}
        if self.minutes is not None:
            out["time"] = f"{self.minutes // 60:02d}:{self.minutes % 60:02d}"
        if self.text:
            out["text"] = self.text
        return out


def parse_clock(text: str) -> Clock | None:
    """The clock a stated time gives ("day 3, 18:00", "the evening of the third day",
    "dawn on day 12", a date: "2031-04-07 06:30", "Monday 14 October", "Sunday, 13 October
    1962", "October 14th"); None when it states neither day nor time."""
    t = str(text or "").lower()
    day, year, calendar = None, None, False
    if m := re.search(r"(\d{4})-(\d{2})-(\d{2})|--(\d{2})-(\d{2})", t):
        year = int(m.group(1)) if m.group(1) else None
        month, dom = (int(m.group(2)), int(m.group(3))) if m.group(1) else \
            (int(m.group(4)), int(m.group(5)))
        day, calendar = month * 31 + dom, True
        t = t[:m.start()] + t[m.end():]
    elif found := _date(t):
        (month, dom, year), span = found
        day, calendar = month * 31 + dom, True
        t = t[:span[0]] + t[span[1]:]
    elif m := re.search(r"\bday\s+(\d+)\b", t):
        day = int(m.group(1))
    elif m := re.search(r"\b(" + "|".join(_ORDINALS) + r")\s+day\b", t):
        day = _ORDINALS[m.group(1)]
    minutes = None
    if m := re.search(r"\b(\d{1,2}):(\d{2})\b", t):
        minutes = int(m.group(1)) * 60 + int(m.group(2))
    elif m := re.search(r"\b(\d{1,2})\s*(am|pm|a\.m\.|p\.m\.)", t):
        minutes = (int(m.group(1)) % 12 + (12 if m.group(2).startswith("p") else 0)) * 60
    else:
        parts = [v for w, v in _PARTS.items() if re.search(rf"\b{w}\b", t)]
        minutes = parts[0] if parts else None
    if day is None and minutes is None:
        return None
    return Clock(day, minutes, " ".join(str(text).split())[:80], calendar, year)


def _date(t: str) -> tuple[tuple[int, int, int | None], tuple[int, int]] | None:
    """(month, day of the month, year or None) of the first date `t` (lower case) writes
    with the month's name, and where it stands."""
    found = []
    for n, pattern in enumerate(_DATES):
        for m in pattern.finditer(t):
            dom, month = (m.group(1), m.group(2)) if n == 0 else (m.group(2), m.group(1))
            if 1 <= int(dom) <= 31:
                found.append((m.start(), (_MONTHS[month], int(dom),
                                          int(m.group(3)) if m.group(3) else None), m.span()))
                break
    if not found:
        return None
    _, date, span = min(found)
    return date, span


def clock_from(data: Any) -> Clock | None:
    """The clock memory/clock.yaml holds (None when empty or unreadable)."""
    if not isinstance(data, dict):
        return None
    day, date = data.get("day"), data.get("date")     # a date YAML read as one: its str()
    when = str(date) if date else f"day {day}" if isinstance(day, int) else ""
    parsed = parse_clock(f"{when} {data.get('time') or ''}") if when else None
    if parsed is None or parsed.day is None:
        return None
    return Clock(parsed.day, parsed.minutes, str(data.get("text") or ""), parsed.calendar,
                 parsed.year)


def read_clock(memory_dir: Path) -> tuple[Clock | None, int]:
    """The story's clock and the scene that set it (None, 0 when none is stated)."""
    data = read_yaml(memory_dir / CLOCK_FILE, {})
    clock = clock_from(data)
    scene = data.get("scene") if isinstance(data, dict) else 0
    return clock, scene if isinstance(scene, int) else 0


def clock_file(clock: Clock, scene: int) -> str:
    """memory/clock.yaml's text for `clock`, set by `scene`."""
    return dump_yaml({**clock.to_dict(), "scene": scene})


# -- matching ------------------------------------------------------------------------

def words_of(text: str) -> frozenset[str]:
    """The content words of a text (for matching a fact told or used to a known one)."""
    return _words_of(str(text))


@functools.lru_cache(maxsize=1 << 14)
def _words_of(text: str) -> frozenset[str]:
    """words_of, kept for the texts last asked: every fact is asked again for each fact a
    scene tells or uses."""
    return frozenset(w for w in re.findall(r"[a-z']+", text.lower())
                     if w not in _STOP and len(w) > 2)


def match_fact(facts: Sequence[Fact], text: str, *, before: int,
               least: float = 0.6) -> Fact | None:
    """The fact of a scene before `before` that `text` states (most content words shared,
    at least `least` of the shorter's), or None."""
    wanted = words_of(text)
    best, score = None, 0.0
    for fact in facts:
        scene = fact.get("scene")
        if not isinstance(scene, int) or scene >= before:
            continue
        theirs = words_of(fact.get("text", ""))
        if not wanted or not theirs:
            continue
        share = len(wanted & theirs) / min(len(wanted), len(theirs))
        if share > score:
            best, score = fact, share
    return best if score >= least else None


def item_key(item: str) -> str:
    """An object's key: "the Brass Key" and "a brass key" are one."""
    words = re.findall(r"[a-z0-9']+", str(item).lower())
    return " ".join(w for w in words if w not in {"a", "an", "the", "his", "her", "their", "my"})


def same_person(memory: Memory, a: str, b: str) -> bool:
    """Whether two names name one character (known, or spelled alike)."""
    pa, pb = find_person(memory, a), find_person(memory, b)
    if pa is not None and pb is not None:
        return pa is pb
    return normalize_name(a) == normalize_name(b)


def knows(memory: Memory, name: str, fact: Fact) -> bool:
    """Whether `name` knows `fact`: a fact without witnesses is everyone's."""
    witnesses = fact.get("witnesses")
    if not isinstance(witnesses, list):
        return True
    return any(same_person(memory, name, str(w)) for w in witnesses)


# -- applying a scene ----------------------------------------------------------------

def apply_knowledge(memory: Memory, extraction: Extraction, *, tick: int, location: str,
                    pov: str = "") -> list[str]:
    """Record what the scene establishes (in place), each with `tick`: status changes,
    where the people present are, objects gained and lost, how someone looks (the first
    statement of each feature), the witnesses of the facts
    the scene added (the POV and those present in person, when the extraction says who
    was; else the facts stay everyone's), the facts told. Returns what changed, one
    line each. Characters unknown to memory are left out."""
    changes: list[str] = []
    present = [n for n in [pov, *extraction.present] if n]
    for fact in memory.facts if extraction.present else ():   # who was there, when said:
        if fact.get("scene") == tick and "witnesses" not in fact:   # else everyone's
            fact["witnesses"] = _names(memory, present)
    for told in extraction.told:
        heard = match_fact(memory.facts, told.get("fact", ""), before=tick + 1)
        who = find_person(memory, told.get("to", ""))
        if heard is not None and who is not None and not knows(memory, who["name"], heard):
            heard.setdefault("witnesses", []).append(who["name"])
            changes.append(f"{who['name']} is told: {heard.get('text')}")
    for name in present:
        _place(memory, name, location, tick)
    for item in extraction.where:
        _place(memory, item.get("name", ""), item.get("place", ""), tick)
    for item in extraction.status:
        who, status = find_person(memory, item.get("name", "")), item.get("status", "")
        if who is not None and status in STATUSES and who.get("status", "alive") != status:
            who["status"], who["status_in"] = status, tick
            who["status_how"] = item.get("how", "") or status
            changes.append(f"{who['name']} is {status}")
    for item in extraction.items:
        changes += _object(memory, item, tick)
    for item in extraction.appearance:
        changes += _looks(memory, item, tick)
    return changes


def _names(memory: Memory, names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        who = find_person(memory, name)
        full = str(who["name"]) if who is not None else name
        if full not in out:
            out.append(full)
    return out


def _place(memory: Memory, name: str, place: str, tick: int) -> None:
    who = find_person(memory, name)
    if who is not None and place:
        who["place"], who["place_in"] = place, tick


def _object(memory: Memory, item: dict[str, str], tick: int) -> list[str]:
    who, thing, event = find_person(memory, item.get("name", "")), item.get("item", ""), \
        item.get("event", "")
    if who is None or not thing:
        return []
    key = item_key(thing)
    holds = [h for h in who.get("holds") or [] if item_key(h) != key]
    lost = [entry for entry in who.get("lost") or []
            if not (isinstance(entry, dict) and item_key(entry.get("item", "")) == key)]
    if event == "gains" or event == "uses":
        who["holds"], who["lost"] = [*holds, thing], lost
        _tidy(who)
        return [f"{who['name']} holds {thing}"] if event == "gains" else []
    if event in ("loses", "gives"):
        to = item.get("to", "")
        how = f"gave it to {to}" if event == "gives" and to else \
            ("gave it away" if event == "gives" else "lost it")
        who["holds"], who["lost"] = holds, [*lost, {"item": thing, "in": tick, "how": how}]
        _tidy(who)
        receiver = find_person(memory, to) if event == "gives" and to else None
        if receiver is not None:
            _object(memory, {"name": receiver["name"], "item": thing, "event": "gains"}, tick)
        return [f"{who['name']} {how}: {thing}"]
    return []


def _looks(memory: Memory, item: dict[str, str], tick: int) -> list[str]:
    """Record how someone looks, the first time a feature is stated (what a later scene
    states otherwise is the audit's finding, not a change; a hand edit changes it)."""
    who, feature, value = find_person(memory, item.get("name", "")), \
        str(item.get("feature", "")).lower(), item.get("value", "")
    if who is None or not feature or not value or looks(who, feature) is not None:
        return []
    known = who.get("appearance")
    who["appearance"] = {**(known if isinstance(known, dict) else {}),
                         feature: {"value": value, "in": tick}}
    return [f"{who['name']}'s {feature}: {value}"]


def looks(who: Character, feature: str) -> Seen | None:
    """What `who`'s file says of `feature` ({value, in}), or None."""
    known = who.get("appearance")
    entry = known.get(feature) if isinstance(known, dict) else None
    return entry if isinstance(entry, dict) and entry.get("value") else None


def _tidy(who: Character) -> None:
    if not who.get("holds"):
        who.pop("holds", None)
    if not who.get("lost"):
        who.pop("lost", None)


def lost_entry(who: Character, thing: str) -> Lost | None:
    """How `who` parted with `thing` ({item, in, how}), if they did and have not regained it."""
    key = item_key(thing)
    if any(item_key(h) == key for h in who.get("holds") or []):
        return None
    for entry in who.get("lost") or []:
        if isinstance(entry, dict) and item_key(entry.get("item", "")) == key:
            return entry
    return None
