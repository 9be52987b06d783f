"""The story's clock: the time a scene states, placed on the story's calendar, and what
the clock keeps of it in memory/clock.yaml.

    memory/clock.yaml     {date: 1935-10-18, time: "21:00", weekday: Friday, scene: 9,
                           text: "Friday 18 October, 21:00",
                           named: {weekday: Monday, scene: 1, said: "It was Monday 14 …"},
                           season: {name: winter, date: 1935-10-18, scene: 9,
                                    said: "Snow had fallen on the Upper Terraces …"}}

A scene states its time as the extractor reads it: a day ("day 3"), a date ("Monday 14
October", "2031-04-07 06:30"), a time ("18:00", "4pm", "dusk"), a weekday, or a time
relative to the scene before it ("the next day", "that same night", "ten minutes later").
`placed` puts it on the calendar: a relative time is counted from the clock when the
scene before set the clock (else it places nothing); a weekday alone is the first such
day on or after the clock's; a date with no year is in the year that puts it nearest the
clock's date. `advance` moves the clock on to it (never back), counts the weekday on
from the last one stated (`named`: a weekday stated against the count is the audit's
finding, and not recorded) and keeps the season the prose last stated (`season_of`:
snow, "harvest heat"; not in a dream or a memory), with the scene and the sentence that
said each, for the audit's quotes. Pure, but for `read_clock` and `clock_file`, the file's
only reader and writer.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from novel_agent.files import dump_yaml, read_yaml
from novel_agent.text.cleanup import sentences

CLOCK_FILE = "clock.yaml"
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
# before them is the date's weekday)
_DATES = (re.compile(rf"\b{_DOM}(?:\s+of)?\s+{_MONTH}\b{_YEAR}"),
          re.compile(rf"\b{_MONTH}\s+{_DOM}\b{_YEAR}"))
YEAR, HALF_YEAR = 372, 186   # days of a year of 31-day months, and half of it: a date with no
                             # year stated this far before the last is the next year's
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = re.compile(r"\b(" + "|".join(WEEKDAYS) + r")\b")
_COUNT = {w: i for i, w in enumerate("a one two three four five six seven eight nine ten "
                                     "eleven twelve".split())} | {"a": 1, "an": 1, "a few": 3,
                                                                  "half an": 0, "twenty": 20,
                                                                  "thirty": 30, "forty": 40}
_UNITS = {"moment": 1, "minute": 1, "hour": 60, "day": 0, "week": 0}
_LATER = re.compile(r"\b(?:(\d+|" + "|".join(sorted(_COUNT, key=len, reverse=True)) +
                    r")\s+)?(moment|minute|hour|day|week)s?\s+later\b")
_NEXT = re.compile(r"\b(?:the\s+)?(?:next|following)\s+(day|morning|afternoon|evening|night)\b|"
                   r"\bthe\s+day\s+after\b")
_SAME = re.compile(r"\b(?:that\s+(?:same\s+)?|later\s+that\s+|the\s+same\s+)"
                   r"(day|morning|afternoon|evening|night)\b")
SEASONS = ("winter", "spring", "summer", "autumn")
# A season stated as the scene's time: "in winter", "the summer lay golden", "autumn had
# turned the vines", "snow had fallen", "the harvest heat"; not a "summer dress" or "the
# spring" a stream rises from.
_AS_TIME = r"(?:in|of|this|that|the|a|an|deep|high|hard|mid|early|late)\s+"
_SEASON_OF = r"\s+(?:came|had come|was|had|lay|morning|night|day|evening|afternoon|sun|light)"
_SEASON_WORDS = {
    "winter": rf"{_AS_TIME}winter|winter{_SEASON_OF}|midwinter|wintertime|wintry|"
              r"snow(?:fall|storms?|drifts?|flakes?)?(?!-)|snowing|snowed|blizzards?|sleet",
    "spring": rf"springtime|(?:in|of|this|that|early|late)\s+spring|spring{_SEASON_OF}|"
              r"blossoming|in blossom",
    "summer": rf"{_AS_TIME}summer(?!\s+(?:dress|frock|house|hat|coat|suit|clothes|shirt))|"
              rf"summer{_SEASON_OF}|midsummer|summertime|heat-?waves?|sweltering|"
              r"(?:harvest|summer|august|midday|noonday)\s+heat",
    "autumn": rf"{_AS_TIME}autumn|autumn{_SEASON_OF}|autumnal",
}
_SEASON = {s: re.compile(rf"\b(?:{w})\b", re.I) for s, w in _SEASON_WORDS.items()}
# A sentence of a dream, a memory, a wish or a comparison states no time of the scene's.
NOT_NOW = re.compile(r"\b(?:dream\w*|remember\w*|recall\w*|memor\w+|used to|ago|would|"
                     r"wish\w*|like|as if|as though|as \w+ as|(?:as|than)\s+(?:the\s+)?snow|"
                     r"(?:last|next|that)\s+(?:year|winter|spring|summer|autumn)|years? before)\b",
                     re.I)
SEASON_DAYS = 90     # opposite seasons (winter and summer) are at least this many days apart


class Later(NamedTuple):
    """A time stated relative to the scene before: days on, and minutes on (None: the
    minutes are not counted, as in "the next day")."""

    days: int
    minutes: int | None


@dataclass(frozen=True)
class Said:
    """A weekday or a season a scene stated: the scene, its sentence, and (a season's)
    the day it fell on."""

    value: str
    scene: int
    quote: str = ""
    day: int | None = None
    calendar: bool = False
    year: int | None = None


@dataclass(frozen=True)
class Clock:
    """A point of the story's time: a day (None: not stated) and minutes into it. The day
    is a count of the story's days ("day 3"), or, `calendar`, a date: month * 31 + day of
    the month, in `year` when one is stated. `weekday` (0 is Monday) is stated or counted
    on; `later` is a statement relative to the scene before; `named` and `season` are what
    the clock keeps of the last weekday and season stated."""

    day: int | None
    minutes: int | None
    text: str = ""
    calendar: bool = False
    year: int | None = None
    weekday: int | None = None
    later: Later | None = None
    named: Said | None = None
    season: Said | None = None

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
            out = {"date": _day_text(self.day, self.year)}
        if self.minutes is not None:
            out["time"] = f"{self.minutes // 60:02d}:{self.minutes % 60:02d}"
        if self.weekday is not None:
            out["weekday"] = WEEKDAYS[self.weekday].capitalize()
        if self.text:
            out["text"] = self.text
        if self.named is not None:
            out["named"] = {"weekday": self.named.value.capitalize(), "scene": self.named.scene,
                            "said": self.named.quote}
        if self.season is not None:
            s = self.season
            when = {"date": _day_text(s.day, s.year)} if s.calendar and s.day else {"day": s.day}
            out["season"] = {"name": s.value, **when, "scene": s.scene, "said": s.quote}
        return out


def describe(clock: Clock) -> str:
    """The clock's day and time as a reader says them ("Monday 21 October 1935, 09:00",
    "day 4")."""
    if clock.day is None:
        return clock.text
    month, dom = divmod(clock.day - 1, 31)
    names = list(_MONTHS)
    day = f"{dom + 1} {names[month - 1].capitalize()}" + (f" {clock.year}" if clock.year else "") \
        if clock.calendar else f"day {clock.day}"
    weekday = f"{WEEKDAYS[clock.weekday].capitalize()} " if clock.weekday is not None else ""
    time = f", {clock.minutes // 60:02d}:{clock.minutes % 60:02d}" if clock.minutes is not None \
        else ""
    return f"{weekday}{day}{time}"


def _day_text(day: int, year: int | None) -> str:
    month, dom = divmod(day - 1, 31)
    return f"{year:04d}-{month:02d}-{dom + 1:02d}" if year else f"--{month:02d}-{dom + 1:02d}"


def parse_clock(text: str) -> Clock | None:
    """The clock a stated time gives ("day 3, 18:00", "the evening of the third day",
    "dawn on day 12", a date: "2031-04-07 06:30", "Monday 14 October", "Sunday, 13 October
    1962", "October 14th"; a weekday; a time relative to the scene before: "the next day",
    "that same night", "ten minutes later"); None when it states no time."""
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
    later = _later(t)
    minutes = None
    if m := re.search(r"\b(\d{1,2}):(\d{2})\b", t):
        minutes = int(m.group(1)) * 60 + int(m.group(2))
    elif m := re.search(r"\b(\d{1,2})\s*(am|pm|a\.m\.|p\.m\.)", t):
        minutes = (int(m.group(1)) % 12 + (12 if m.group(2).startswith("p") else 0)) * 60
    else:
        parts = [v for w, v in _PARTS.items() if re.search(rf"\b{w}\b", t)]
        minutes = parts[0] if parts else None
    weekday = _WEEKDAY.search(t)
    if day is None and minutes is None and weekday is None and later is None:
        return None
    return Clock(day, minutes, " ".join(str(text).split())[:80], calendar, year,
                 WEEKDAYS.index(weekday.group(1)) if weekday else None, later)


def _later(t: str) -> Later | None:
    """The time `t` (lower case) states relative to the scene before, if it does."""
    if m := _LATER.search(t):
        said, unit = m.group(1), m.group(2)
        if said is None:             # "moments later"; "hours later": how many is not said
            return Later(0, 1) if unit == "moment" else None
        count = int(said) if said.isdigit() else _COUNT[said]
        if said == "half an":
            return Later(0, 30)
        if unit in ("day", "week"):
            return Later(count * (7 if unit == "week" else 1), None)
        return Later(0, count * _UNITS[unit])
    if _NEXT.search(t):
        return Later(1, None)
    if _SAME.search(t):
        return Later(0, None)
    return None


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


# -- the calendar --------------------------------------------------------------------

def _real(day: int, year: int) -> datetime.date | None:
    month, dom = divmod(day - 1, 31)
    try:
        return datetime.date(year, month, dom + 1)
    except ValueError:
        return None


def _nearest(day: int, to: datetime.date) -> datetime.date | None:
    """The date of `day` (no year stated) nearest `to`."""
    dates = [d for d in (_real(day, to.year + k) for k in (-1, 0, 1)) if d is not None]
    return min(dates, key=lambda d: abs((d - to).days)) if dates else None


def _dates(a: Clock, b: Clock) -> tuple[datetime.date, datetime.date] | None:
    """Two dates as real ones (a date with no year in the year nearest the other's)."""
    assert a.day is not None and b.day is not None
    if a.year is not None and b.year is not None:
        da, db = _real(a.day, a.year), _real(b.day, b.year)
    elif b.year is not None:
        db = _real(b.day, b.year)
        da = _nearest(a.day, db) if db else None
    else:
        da = _real(a.day, a.year if a.year is not None else 2000)   # a leap year: 29 February
        db = _nearest(b.day, da) if da else None
    return (da, db) if da is not None and db is not None else None


def days_between(a: Clock, b: Clock) -> int | None:
    """Days from `a` to `b` (negative when `b` is before), or None when the calendar cannot
    say (a day not stated, a count of days against a date, a date no year has)."""
    if a.day is None or b.day is None or a.calendar != b.calendar:
        return None
    if not a.calendar:
        return b.day - a.day
    dates = _dates(a, b)
    return (dates[1] - dates[0]).days if dates else None


def _shifted(clock: Clock, days: int) -> tuple[int, int | None] | None:
    """The day (and year) `days` on from `clock`'s."""
    assert clock.day is not None
    if not clock.calendar:
        return clock.day + days, None
    start = _real(clock.day, clock.year if clock.year is not None else 2000)
    if start is None:
        return None
    d = start + datetime.timedelta(days=days)
    return d.month * 31 + d.day, d.year if clock.year is not None else None


def placed(stated: Clock | None, clock: Clock | None, clock_scene: int, tick: int) -> Clock | None:
    """`stated`, the time scene `tick` states, on the story's calendar (`clock`, set by
    `clock_scene`): see the module docstring. None when it states none."""
    if stated is None or clock is None or clock.day is None:
        return stated
    if stated.day is not None:
        if stated.calendar and clock.calendar and stated.year is None and clock.year is not None:
            year = _dates(clock, stated)
            return replace(stated, year=year[1].year) if year else stated
        return stated
    days, minutes = 0, stated.minutes
    if stated.later is not None and clock_scene == tick - 1:    # (from a scene that stated
        days = stated.later.days                                 # no time: no telling)
        if minutes is None and stated.later.minutes is not None and clock.minutes is not None:
            days, minutes = divmod(clock.minutes + stated.later.minutes, 24 * 60)
            days += stated.later.days
    elif stated.weekday is not None and clock.weekday is not None:
        days = (stated.weekday - clock.weekday) % 7
    else:
        return stated
    moved = _shifted(clock, days)
    if moved is None:
        return stated
    return replace(stated, day=moved[0], year=moved[1], calendar=clock.calendar,
                   minutes=minutes)


def counted_weekday(clock: Clock | None, now: Clock) -> int | None:
    """The weekday of `now` counted on from `clock`'s (None when either is not known)."""
    if clock is None or clock.weekday is None:
        return None
    days = days_between(clock, now)
    return None if days is None else (clock.weekday + days) % 7


# -- what the prose says of the time -------------------------------------------------------

def weekday_sentence(prose: str, weekday: int) -> str:
    """The first sentence of `prose` that names `weekday` (not in a dream or a memory)."""
    name = WEEKDAYS[weekday]
    return next((s for s in sentences(prose) if re.search(rf"\b{name}\b", s, re.I)
                 and not NOT_NOW.search(s)), "")


def season_of(prose: str) -> tuple[str, str] | None:
    """The season `prose` states (the one its sentences name, not in a dream, a memory or
    a comparison: "snow", "midsummer", "harvest heat") and the first sentence saying it;
    None when it states none, or more than one."""
    said: dict[str, str] = {}
    for sentence in sentences(prose):
        if NOT_NOW.search(sentence):
            continue
        for season, pattern in _SEASON.items():
            if pattern.search(sentence):
                said.setdefault(season, sentence)
    return next(iter(said.items())) if len(said) == 1 else None


def opposite(a: str, b: str) -> bool:
    """Whether two seasons are opposite (winter and summer, spring and autumn)."""
    return a in SEASONS and b in SEASONS and (SEASONS.index(a) - SEASONS.index(b)) % 4 == 2


def season_gap(season: Said, now: Clock) -> int | None:
    """Days from when `season` was said to `now` (None: the calendar cannot say)."""
    if season.day is None:
        return None
    return days_between(Clock(season.day, None, calendar=season.calendar, year=season.year), now)


def against_season(season: Said | None, stated: str, now: Clock | None) -> int | None:
    """The days between `season` and a scene at `now` stating the opposite season, when
    they are fewer than SEASON_DAYS (a finding); else None."""
    if season is None or now is None or not opposite(season.value, stated):
        return None
    gap = season_gap(season, now)
    return gap if gap is not None and abs(gap) < SEASON_DAYS else None


# -- the clock moving on -------------------------------------------------------------------

def advance(clock: Clock | None, clock_scene: int, stated_text: str, prose: str,
            tick: int) -> tuple[Clock | None, int]:
    """The story's clock after scene `tick` and the scene that set its time, from the
    clock before it (`clock`, set by `clock_scene`), the time the scene states
    (`stated_text`, the extraction's) and its prose (see the module docstring)."""
    now = placed(parse_clock(stated_text) if stated_text else None, clock, clock_scene, tick)
    moved = now is not None and now.day is not None and (clock is None or not now.before(clock))
    base, at = (now, tick) if moved and now is not None else (clock, clock_scene)
    if base is None:
        return None, 0
    if moved and now is not None:
        counted = counted_weekday(clock, now)
        stated: int | None = now.weekday
        named: Said | None = None
        if stated is not None and counted in (None, stated):
            named = Said(WEEKDAYS[stated], tick, weekday_sentence(prose, stated))
        else:
            stated, named = counted, clock.named if clock is not None else None
        base = replace(now, weekday=stated, named=named, later=None,
                       season=clock.season if clock is not None else None)
        if now.later is not None or now.weekday is not None and \
                (parse_clock(now.text) or now).day is None:     # placed: say where
            base = replace(base, text=f"{now.text} ({describe(base)})")
    said = season_of(prose)
    when = now if now is not None and now.day is not None else base
    if said is not None and against_season(base.season, said[0], when) is None:
        base = replace(base, season=Said(said[0], tick, said[1], when.day, when.calendar,
                                         when.year))
    return base, at


# -- memory/clock.yaml -------------------------------------------------------------------

def clock_from(data: Any) -> Clock | None:
    """The clock memory/clock.yaml holds (None when empty or unreadable)."""
    if not isinstance(data, dict):
        return None
    day, date = data.get("day"), data.get("date")     # a date YAML read as one: its str()
    when = str(date) if date else f"day {day}" if isinstance(day, int) else ""
    parsed = parse_clock(f"{when} {data.get('time') or ''}") if when else None
    if parsed is None or parsed.day is None:
        return None
    weekday = str(data.get("weekday") or "").lower()
    return Clock(parsed.day, parsed.minutes, str(data.get("text") or ""), parsed.calendar,
                 parsed.year, WEEKDAYS.index(weekday) if weekday in WEEKDAYS else None,
                 named=_named_from(data.get("named")), season=_season_from(data.get("season")))


def _named_from(data: Any) -> Said | None:
    if not isinstance(data, dict) or str(data.get("weekday") or "").lower() not in WEEKDAYS:
        return None
    scene = data.get("scene")
    return Said(str(data["weekday"]).lower(), scene if isinstance(scene, int) else 0,
                str(data.get("said") or ""))


def _season_from(data: Any) -> Said | None:
    if not isinstance(data, dict) or data.get("name") not in SEASONS:
        return None
    when = clock_from({k: data[k] for k in ("date", "day") if k in data})
    scene = data.get("scene")
    return Said(str(data["name"]), scene if isinstance(scene, int) else 0,
                str(data.get("said") or ""), when.day if when else None,
                when.calendar if when else False, when.year if when else None)


def read_clock(memory_dir: Path) -> tuple[Clock | None, int]:
    """The story's clock and the scene that set it (None, 0 when none is stated)."""
    data = read_yaml(memory_dir / CLOCK_FILE, {})
    clock = clock_from(data)
    scene = data.get("scene") if isinstance(data, dict) else 0
    return clock, scene if isinstance(scene, int) else 0


def clock_file(clock: Clock, scene: int) -> str:
    """memory/clock.yaml's text for `clock`, set by `scene`."""
    return dump_yaml({**clock.to_dict(), "scene": scene})
