"""What a planner pool can take, found in one cheap pass over memory: the full scoring
runs on that alone.

The planner's pools score every character, place, relationship and open loop
(relevance.py) and keep, through items.bounded, those scoring over a relevance
floor and the best few under it. A long book holds thousands of them, and each
tick asks again. What lifts an item over the floor is always one of a few
things that a glance tells: it was seen (or opened, or touched) recently enough
for its recency alone to reach the floor, one of its names is in focus, it is
pinned, overdue or touched by the last scenes, its text names someone in focus.
So one pass reads each entity's few fields that say so; those that may reach
the floor are scored in full (relevance's own functions, on what `as_of` would
make of them); the rest score their recency and nothing else, and are ranked by
it for the best few under the floor. The items, their order and the count left
out are the full scan's (tests/context/test_shortlist.py checks it on random memories).
The extractor's pools, which take the best of all, are in scene_pools.py.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import eq, gt, is_, is_not, le, lt, not_, sub
from typing import Any, cast

from novel_agent.context.items import Entry, Item
from novel_agent.context.presence import unsettled
from novel_agent.context.relevance import (
    HALF_LIFE,
    OVERDUE_SHOWN,
    Focus,
    character_entry,
    first_seen,
    in_view,
    last_touched,
    location_entry,
    loop_entry,
    marked_late,
    naming_pattern,
    overdue,
    recency,
    relationship_entry,
    since,
)
from novel_agent.story.memory.records import Character, Entity, Location, Loop, Named, Record, Relationship, is_open
from novel_agent.story.memory.store import Memory
from novel_agent.text.names import normalize_name

Scene = Any     # story.scenes.Scene: its tick, pov, characters and location are read


def seen_at(scenes: Iterable[Scene]) -> dict[str, int]:
    """The last of `scenes` each normalized name was in (places as "@" + their name)."""
    seen: dict[str, int] = {}
    for scene in scenes:
        for name in (scene.pov, *scene.characters, "@" + scene.location):
            seen[normalize_name(name)] = scene.tick
    return seen


def last_seen_then(seen: dict[str, int], entity: Entity, *names: Any) -> int:
    """When `seen` last shows any of `names`, or the entity's first scene if later."""
    return max([seen.get(normalize_name(str(n)), 0) for n in names if n]
               + [first_seen(entity)])


def seen_then(entity: Named, last_seen: int, *without: str) -> Named:
    """A copy of `entity` last seen at `last_seen`, without the fields `without` (the
    fields in their order, as {**entity, "last_seen": ...} has them)."""
    copied: dict[str, Any] = dict(entity)
    for key in without:
        copied.pop(key, None)
    copied["last_seen"] = last_seen
    return cast(Named, copied)


def person_then(c: Character, seen: dict[str, int], tick: int) -> Character:
    """A character as `as_of` shows it at `tick`: last seen as `seen` says, without its
    state, where it is and what it holds; dead or absent if it was by `tick`
    (presence.unsettled)."""
    return seen_then(c, last_seen_then(seen, c, c.get("name"), *(c.get("aliases") or [])),
                     "state", *unsettled(c, tick))


def place_then(loc: Location, seen: dict[str, int]) -> Location:
    """A place as `as_of` shows it: last seen as `seen` says."""
    return seen_then(loc, last_seen_then(seen, loc, "@" + str(loc.get("name"))))


@functools.lru_cache(maxsize=64)
def _oldest_age(floor: float) -> int:
    """The most ticks an item can be unseen and still score `floor` on recency alone."""
    age = 0
    while 0.5 ** ((age + 1) / HALF_LIFE) >= floor and age < 1_000_000:
        age += 1
    return age


def reach(tick: int, floor: float) -> int:
    """A tick such that anything last seen before it scores under `floor` on recency at
    `tick` (one tick earlier than it need be: what it lets through is scored in full)."""
    return tick - 1 - _oldest_age(floor) - 1


class _Under:
    """The best `keep` of the candidates under the floor (score descending, then rank,
    the first offered first among equals: a stable sort's order), and how many."""

    def __init__(self, keep: int):
        self.keep, self.count = keep, 0
        self.best: list[tuple[float, tuple, int, Callable[[], Entry]]] = []
        # what a candidate must score to be kept (none can when keep is 0): one scoring
        # less is only counted (`count += 1`, by the caller: no call for most of memory)
        self.worst = -math.inf if keep > 0 else math.inf

    def offer(self, score: float, rank: Callable[[], tuple],
              make: Callable[[], Entry]) -> None:
        self.count += 1
        if score < self.worst:
            return
        key = (-score, rank(), self.count)
        at = bisect.bisect_right([(-s, r, n) for s, r, n, _ in self.best], key)
        if at < self.keep:
            self.best.insert(at, (score, key[1], self.count, make))
            del self.best[self.keep:]
            if len(self.best) >= self.keep:
                self.worst = self.best[-1][0]

    def offer_entry(self, entry: Entry) -> None:
        self.offer(entry.score, functools.partial(_same, entry.rank),
                   functools.partial(_same, entry))

    def entries(self) -> list[Entry]:
        return [make() for _, _, _, make in self.best]

    def unlisted(self) -> int:
        return self.count - min(self.count, self.keep)


def first_seen_of(entity: Entity) -> int:
    """first_seen(entity), without a call when it is a plain int."""
    value = entity.get("first_seen")
    return value if type(value) is int else first_seen(entity)


def seen_after(items: Sequence[Entity], tick: int) -> list[int]:
    """The positions of the `items` first seen after `tick` (first_seen_of(item) > tick),
    by one pass over the column when every first_seen is a plain int."""
    firsts = column(items, "first_seen")
    if all_of(int, firsts):
        return where(functools.partial(lt, tick), firsts)
    return [n for n, item in enumerate(items) if first_seen_of(item) > tick]


def _last(loop: Loop) -> int:
    """last_touched(loop), by one max() when its scenes are a list whose largest is an int
    (then it is also the largest of its ints)."""
    scenes = loop.get("scenes")
    if type(scenes) is list and scenes:
        try:
            largest = max(scenes)
        except TypeError:
            return last_touched(loop)
        if type(largest) is int:
            return largest
    return last_touched(loop)


def seen_by(names: frozenset[str], c: Character) -> bool:
    """in_view(focus, c) for a focus on `names`, without the general case's work for a
    character named by a plain string and no aliases."""
    name = c.get("name")
    if type(name) is str and name and not c.get("aliases"):
        return normalize_name(name) in names
    return in_view(Focus(0, names), c)


def quick_recency(tick: int, seen: Any) -> float:
    """recency(tick, seen), the same float, without a call for an int."""
    if type(seen) is int:
        return 0.5 ** (max(0, tick - 1 - seen) / HALF_LIFE)
    return recency(tick, seen)


def _same(value: Any) -> Any:
    return value


# The passes below read every loop and character each tick: their fields are read a
# column at a time (dict.get, map, compress: no Python step an item), the few items
# the columns cannot tell about read one by one as before, and only those that may be
# chosen scored in full.

def column(items: Sequence[Record], field: str, default: Any = None) -> list[Any]:
    """Each item's item.get(field, default) (dict.get itself: every record is a dict)."""
    return list(map(dict.get, cast(Sequence[dict[str, Any]], items), repeat(field),
                    repeat(default)))


def all_of(kind: type, values: Iterable[Any]) -> bool:
    """Whether every one of `values` is exactly a `kind` (not a subclass: no bool for int)."""
    return set(map(type, values)) <= {kind}


def where(test: Callable[[Any], Any], values: Iterable[Any]) -> list[int]:
    """The positions of the `values` that pass `test`."""
    return list(compress(count(), map(test, values)))


_AGES: list[float] = []      # _AGES[age]: 0.5 ** (age / HALF_LIFE), quick_recency's float


def recencies(tick: int, seen: list[Any]) -> list[float]:
    """[quick_recency(tick, s) for s in seen], by a table of ages when every one is an int."""
    if not seen or not all_of(int, seen):
        return [quick_recency(tick, s) for s in seen]
    ages = list(map(max, map(sub, repeat(tick - 1), seen), repeat(0)))
    oldest = max(ages)
    if oldest >= 1 << 16:
        return [quick_recency(tick, s) for s in seen]
    _AGES.extend(0.5 ** (age / HALF_LIFE) for age in range(len(_AGES), oldest + 1))
    return list(map(_AGES.__getitem__, ages))


def warmest(lasts: list[int], hot: set[int], keep: int, tick: int) -> list[int]:
    """The positions not in `hot` that may be among the best `keep` of them by
    quick_recency(tick, last) (a score that falls as `last` does), in order: those of the
    latest lasts, enough for `keep`, and any scoring as the last of them does."""
    cold: list[float] = list(lasts)
    for n in hot:
        cold[n] = -math.inf
    found: list[int] = []
    worst = math.inf
    for last in sorted(set(cold) - {-math.inf}, reverse=True):
        score = quick_recency(tick, last)
        if len(found) >= keep and score < worst:
            break
        if tick - 1 - last > 5000:       # (scores that far down may round alike, or worse)
            return [n for n, value in enumerate(cold) if value != -math.inf]
        found += where(functools.partial(eq, last), cold)
        worst = score
    return sorted(found)


def _odd_names(people: Sequence[Character], called: list[Any]) -> set[int]:
    """The positions of the characters not named by one plain string alone (no name, an
    empty or odd one, aliases): seen_by and the settled pass read those one by one."""
    return {*compress(count(), column(people, "aliases")), *where(not_, called),
            *compress(count(), map(is_not, map(type, called), repeat(str)))}


def in_view_at(people: Sequence[Character], names: frozenset[str]) -> set[int]:
    """The positions of the characters of `people` that seen_by(names, c)."""
    if not names:
        return set()
    called = column(people, "name")
    odd = _odd_names(people, called)
    found = set(where(names.__contains__, map(normalize_name, map(str, called)))) - odd
    found.update(n for n in odd if seen_by(names, people[n]))
    return found


def pinned_at(items: Sequence[Record]) -> list[int]:
    """The positions of the items pinned (`pinned: true`)."""
    return where(functools.partial(is_, True), column(items, "pinned"))


def _rank(entity: Entity) -> tuple[int, str]:
    """A character's or a place's rank (relevance.character_entry's)."""
    return first_seen(entity), str(entity.get("id"))


def _person(c: Character, seen: dict[str, int], tick: int, focus: Focus) -> Entry:
    return character_entry(person_then(c, seen, tick), focus)


def _place(loc: Location, seen: dict[str, int], focus: Focus) -> Entry:
    return location_entry(place_then(loc, seen), focus)


def _pair(rel: Relationship, began: int, number: int, focus: Focus) -> Entry:
    return relationship_entry({**rel, "updated_in": began}, number, focus)


def loop_rank(loop: Loop, number: int) -> tuple[int, int]:
    """The rank of the `number`th open loop (relevance.loop_entry's)."""
    return int(loop.get("opened_in") or 0), number


def _file(entry: Entry, floor: float, strong: list[Entry], under: _Under) -> None:
    """An entry scored in full goes over the floor or under it."""
    if entry.score >= floor:
        strong.append(entry)
    else:
        under.offer_entry(entry)


def _chosen(strong: list[Entry], under: _Under) -> tuple[tuple[Item, ...], int]:
    """What items.bounded gives: the items over the floor in order, then the best under it."""
    return tuple(e.make() for e in [*strong, *under.entries()]), under.unlisted()


def _names(c: Character) -> tuple[list[str], list[str]]:
    """A character's names, normalized, as in_view reads them and as last_seen_then does."""
    name, aliases = c.get("name"), c.get("aliases") or ()
    said = [normalize_name(str(n)) for n in (name, *aliases) if n]
    if name and (not aliases or all(aliases)):
        return said, said          # the same forms, read the same way
    return [normalize_name(str(c.get("name", c.get("id")) or "")),
            *(normalize_name(str(a or "")) for a in aliases)], said


def settled_people(memory: Memory, scenes: Sequence[Scene], tick: int, focus: Focus,
                   floor: float, keep: int = 1) -> tuple[tuple[Item, ...], int]:
    """bounded(character_entries(as_of(memory, scenes, tick).characters ...), floor, keep):
    the characters of the planner's settled section."""
    seen = seen_at(scenes)
    edge = reach(focus.tick, floor)
    hot = focus.names | {n for n, t in seen.items() if t >= edge}
    strong: list[Entry] = []
    under = _Under(keep)
    now, seen_in = focus.tick - 1, seen.get      # (the loop below runs for every character:
    for c in memory.characters.values():        # first_seen and recency are written out)
        first = c.get("first_seen")
        if type(first) is not int:
            first = first_seen(c)
        if first > tick:
            continue
        name = c.get("name")
        dead = c.get("status") == "dead"     # (its score has more: relevance.died)
        if type(name) is str and name and not c.get("aliases"):    # most: one name, read
            said = normalize_name(name)                             # alike by both
            if first >= edge or said in hot or c.get("pinned") is True or dead:
                _file(_person(c, seen, tick, focus), floor, strong, under)
                continue
            last = seen_in(said, 0)
            last = first if first > last else last
        else:
            looked, names = _names(c)
            if first >= edge or c.get("pinned") is True or dead or not (
                    hot.isdisjoint(looked) and hot.isdisjoint(names)):
                _file(_person(c, seen, tick, focus), floor, strong, under)
                continue
            last = max([seen_in(n, 0) for n in names] + [first])
        # all its score, recency(focus.tick, last): it was last seen before `edge`
        score = 0.5 ** ((now - last if now > last else 0) / HALF_LIFE)
        if score < under.worst:
            under.count += 1
        else:
            under.offer(score, functools.partial(_rank, c),
                        functools.partial(_person, c, seen, tick, focus))
    return _chosen(strong, under)


def settled_places(memory: Memory, scenes: Sequence[Scene], tick: int, focus: Focus,
                   floor: float, keep: int = 1) -> tuple[tuple[Item, ...], int]:
    """bounded(location_entries(as_of(memory, scenes, tick) ...), floor, keep): the places
    of the planner's settled section."""
    seen = seen_at(scenes)
    edge = reach(focus.tick, floor)
    hot = {n for n, t in seen.items() if t >= edge}
    strong: list[Entry] = []
    under = _Under(keep)
    for loc in memory.locations.values():
        first = first_seen(loc)
        if first > tick:
            continue
        at = normalize_name("@" + str(loc.get("name")))
        if first >= edge or loc.get("pinned") is True or at in hot or normalize_name(
                str(loc.get("name", loc.get("id", "?")))) in focus.places:
            entry = _place(loc, seen, focus)
            _file(entry, floor, strong, under)
            continue
        under.offer(recency(focus.tick, max(seen.get(at, 0), first)),
                    functools.partial(_rank, loc), functools.partial(_place, loc, seen, focus))
    return _chosen(strong, under)


def settled_pairs(memory: Memory, tick: int, focus: Focus, floor: float,
                  keep: int = 1) -> tuple[tuple[Item, ...], int]:
    """bounded(relationship_entries(as_of(memory, ..., tick) ...), floor, keep): the
    relationships of the planner's settled section."""
    edge = reach(focus.tick, floor)
    strong: list[Entry] = []
    under = _Under(keep)
    number = -1
    for rel in memory.relationships:
        began = since(rel)
        if began > tick:
            continue
        number += 1
        if began >= edge or focus.has(rel.get("a")) or focus.has(rel.get("b")):
            entry = _pair(rel, began, number, focus)
            _file(entry, floor, strong, under)
            continue
        under.offer(recency(focus.tick, began), functools.partial(_same, (began, number)),
                    functools.partial(_pair, rel, began, number, focus))
    return _chosen(strong, under)


@dataclass(frozen=True)
class LoopChoice:
    """The planner's loops: bounded(loop_entries(...)) and whether any loop is overdue."""

    items: tuple[Item, ...]
    unlisted: int
    any_overdue: bool


class OpenLoops:
    """The open loops of a memory, read once (`open`; a loop's number is its place
    there), with their ids as strings (`keys`), the last scene each played in (`lasts`),
    the tick each opened in (`began`); those overdue at focus.tick (`late`, at `late_at`);
    and, for each set of ticks `scenes` given, the ids of those that played in one of
    them (what builders.planner_focus gives a focus on those scenes)."""

    def __init__(self, memory: Memory, focus: Focus, *scenes: set[int]):
        loops = memory.loops
        self.open = list(compress(loops, map(is_open, loops)))
        ids = column(self.open, "id")
        self.keys = ids if all_of(str, ids) else [k if type(k) is str else str(k) for k in ids]
        played = column(self.open, "scenes")
        self.lasts = _lasts(self.open, played)
        self.began = column(self.open, "opened_in")
        due = focus.tick - focus.overdue_after      # a loop opened before this is overdue
        self.late_at = where(functools.partial(gt, due), self.began) if all_of(
            int, self.began) else [n for n, (loop, began) in enumerate(zip(self.open, self.began))
                                   if (began < due if type(began) is int else
                                       overdue(loop, focus.tick, focus.overdue_after))]
        self.late = [self.open[n] for n in self.late_at]
        self.touched = [self._played_in(ticks, played) for ticks in scenes]

    def _played_in(self, ticks: set[int], played: list[Any]) -> list[str]:
        """The ids of the loops that played in one of `ticks` (a loop's last scene is at
        least each tick it played in: only those whose last is are looked at)."""
        if not ticks:
            return []
        return [self.keys[n] for n in where(functools.partial(le, min(ticks)), self.lasts)
                if not ticks.isdisjoint(played[n] or ())
                and ticks & {t for t in played[n] or () if isinstance(t, int)}]

    def marked(self, focus: Focus, shown: int = OVERDUE_SHOWN) -> frozenset[str]:
        """marked_late(self.late, focus, shown, overdue_only=True): the ids of the oldest
        `shown` overdue loops, read off the column when every opened_in is a plain int."""
        if not all_of(int, self.began):
            return marked_late(self.late, focus, shown, overdue_only=True)
        oldest = heapq.nsmallest(shown, self.late_at, key=self.began.__getitem__)   # stable
        return frozenset(str(self.open[n].get("id")) for n in oldest)

    def hot(self, focus: Focus, marked: frozenset[str]) -> set[int]:
        """The numbers of the loops marked late, touched, pinned or naming someone in
        focus: those whose score is more than their recency."""
        return {*where((marked | focus.loops).__contains__, self.keys),
                *pinned_at(self.open), *naming(self, focus.names)}


def _lasts(loops: list[Loop], played: list[Any]) -> list[int]:
    """[_last(loop) for loop in loops] (`played`: their scenes), by one max() each when
    every one's scenes are a list whose largest is an int."""
    if all_of(list, played) and all(played):
        try:
            lasts = list(map(max, played))
        except TypeError:
            lasts = []
        if lasts and all_of(int, lasts):
            return lasts
    return list(map(_last, loops))


def naming(opened: OpenLoops, names: frozenset[str]) -> set[int]:
    """The numbers of the open loops whose words name one of `names` (what loop_entry's
    pattern finds in a loop's normalized description: any of them in it), looked for in
    one text of every description rather than loop by loop."""
    wanted = [n for n in names if n]
    if not wanted:
        return set()
    said = list(map(normalize_name, map(str, column(opened.open, "description", ""))))
    if any("\n" in n for n in wanted):      # (no normalized name has one: a text could)
        pattern = naming_pattern(names)
        return {i for i, text in enumerate(said)
                if pattern is not None and pattern.search(text)}
    text = "\n".join(said)        # a normalized description has no line break
    starts = list(itertools.accumulate((len(d) + 1 for d in said), initial=0))
    found: set[int] = set()
    for name in wanted:
        at = text.find(name)
        while at >= 0:
            i = bisect.bisect_right(starts, at) - 1
            found.add(i)
            at = text.find(name, starts[i + 1])    # one is enough: on to the next loop
    return found        # (a loop's number is its place among them)


def relevant_loops(memory: Memory, focus: Focus, floor: float, keep: int,
                   overdue_shown: int = OVERDUE_SHOWN, *,
                   opened: OpenLoops | None = None) -> LoopChoice:
    """bounded(loop_entries(memory, focus, overdue_shown), floor, keep), and whether an
    open loop is overdue at focus.tick (`opened`: OpenLoops(memory, focus), when the
    caller has read them)."""
    edge = reach(focus.tick, floor)
    opened = opened or OpenLoops(memory, focus)
    marked = opened.marked(focus, overdue_shown)
    hot = opened.hot(focus, marked) | set(where(functools.partial(le, edge), opened.lasts))
    warm = warmest(opened.lasts, hot, keep, focus.tick)     # the rest: recency alone
    strong: list[Entry] = []
    under = _Under(keep)
    for number in sorted(hot.union(warm)):
        loop, last = opened.open[number], opened.lasts[number]
        if number in hot:
            _file(loop_entry(loop, number, focus, marked), floor, strong, under)
        else:
            under.offer(quick_recency(focus.tick, last), functools.partial(loop_rank, loop, number),
                        functools.partial(loop_entry, loop, number, focus, marked))
    under.count += len(opened.open) - len(hot) - len(warm)
    items, unlisted = _chosen(strong, under)
    return LoopChoice(items, unlisted, bool(opened.late))
