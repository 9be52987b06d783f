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
out are the full scan's (tests/test_shortlist.py checks it on random memories).
The extractor's pools, which take the best of all, are in scene_pools.py.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from novel_agent.context.items import Entry, Item
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
    overdue,
    recency,
    relationship_entry,
    since,
)
from novel_agent.context.relevance import _any_of as naming_pattern
from novel_agent.story.memory import Memory
from novel_agent.text.names import normalize_name

Scene = Any     # story.scenes.Scene: its tick, pov, characters and location are read


def seen_at(scenes: Iterable[Scene]) -> dict[str, int]:
    """The last of `scenes` each normalized name was in (places as "@" + their name)."""
    seen: dict[str, int] = {}
    for scene in scenes:
        for name in (scene.pov, *scene.characters, "@" + scene.location):
            seen[normalize_name(name)] = scene.tick
    return seen


def last_seen_then(seen: dict[str, int], entity: dict[str, Any], *names: Any) -> int:
    """When `seen` last shows any of `names`, or the entity's first scene if later."""
    return max([seen.get(normalize_name(str(n)), 0) for n in names if n]
               + [first_seen(entity)])


def seen_then(entity: dict[str, Any], last_seen: int, *without: str) -> dict[str, Any]:
    """A copy of `entity` last seen at `last_seen`, without the fields `without` (the
    fields in their order, as {**entity, "last_seen": ...} has them)."""
    copied = dict(entity)
    for key in without:
        copied.pop(key, None)
    copied["last_seen"] = last_seen
    return copied


def person_then(c: dict[str, Any], seen: dict[str, int]) -> dict[str, Any]:
    """A character as `as_of` shows it: last seen as `seen` says, without its state."""
    return seen_then(c, last_seen_then(seen, c, c.get("name"), *(c.get("aliases") or [])),
                     "state")


def place_then(loc: dict[str, Any], seen: dict[str, int]) -> dict[str, Any]:
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


def first_seen_of(entity: dict[str, Any]) -> int:
    """first_seen(entity), without a call when it is a plain int."""
    value = entity.get("first_seen")
    return value if type(value) is int else first_seen(entity)


def _last(loop: dict[str, Any]) -> int:
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


def seen_by(names: frozenset[str], c: dict[str, Any]) -> bool:
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


def _rank(entity: dict[str, Any]) -> tuple[int, str]:
    """A character's or a place's rank (relevance.character_entry's)."""
    return first_seen(entity), str(entity.get("id"))


def _person(c: dict[str, Any], seen: dict[str, int], focus: Focus) -> Entry:
    return character_entry(person_then(c, seen), focus)


def _place(loc: dict[str, Any], seen: dict[str, int], focus: Focus) -> Entry:
    return location_entry(place_then(loc, seen), focus)


def _pair(rel: dict[str, Any], began: int, number: int, focus: Focus) -> Entry:
    return relationship_entry({**rel, "updated_in": began}, number, focus)


def loop_rank(loop: dict[str, Any], number: int) -> tuple[int, int]:
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


def _names(c: dict[str, Any]) -> tuple[list[str], list[str]]:
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
        if type(name) is str and name and not c.get("aliases"):    # most: one name, read
            said = normalize_name(name)                             # alike by both
            if first >= edge or said in hot or c.get("pinned") is True:
                _file(_person(c, seen, focus), floor, strong, under)
                continue
            last = seen_in(said, 0)
            last = first if first > last else last
        else:
            looked, names = _names(c)
            if first >= edge or c.get("pinned") is True or not (
                    hot.isdisjoint(looked) and hot.isdisjoint(names)):
                _file(_person(c, seen, focus), floor, strong, under)
                continue
            last = max([seen_in(n, 0) for n in names] + [first])
        # all its score, recency(focus.tick, last): it was last seen before `edge`
        score = 0.5 ** ((now - last if now > last else 0) / HALF_LIFE)
        if score < under.worst:
            under.count += 1
        else:
            under.offer(score, functools.partial(_rank, c),
                        functools.partial(_person, c, seen, focus))
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
    """The open loops of a memory, read once: each with its number among them, its id (as
    a string), the last scene it played in; those overdue at focus.tick; and, for each
    set of ticks `scenes` given, the ids of those that played in one of them (what
    builders.planner_focus gives a focus on those scenes)."""

    def __init__(self, memory: Memory, focus: Focus, *scenes: set[int]):
        self.loops: list[tuple[int, dict[str, Any], str, int]] = []
        self.late: list[dict[str, Any]] = []
        self.touched: list[list[str]] = [[] for _ in scenes]
        due = focus.tick - focus.overdue_after      # a loop opened before this is overdue
        for loop in memory.loops:
            if loop.get("status", "open") != "open":
                continue
            key = loop.get("id")
            key = key if type(key) is str else str(key)
            self.loops.append((len(self.loops), loop, key, _last(loop)))
            began = loop.get("opened_in")
            if began < due if type(began) is int else overdue(loop, focus.tick,
                                                                  focus.overdue_after):
                self.late.append(loop)
            played = loop.get("scenes") or ()
            for ticks, ids in zip(scenes, self.touched):
                if not ticks.isdisjoint(played) and ticks & {t for t in played
                                                             if isinstance(t, int)}:
                    ids.append(key)


def naming(opened: OpenLoops, names: frozenset[str]) -> set[int]:
    """The numbers of the open loops whose words name one of `names` (what loop_entry's
    pattern finds in a loop's normalized description: any of them in it), looked for in
    one text of every description rather than loop by loop."""
    wanted = [n for n in names if n]
    if not wanted:
        return set()
    said = [normalize_name(str(loop.get("description", ""))) for _, loop, _, _ in opened.loops]
    if any("\n" in n for n in wanted):      # (no normalized name has one: a text could)
        pattern = naming_pattern(names)
        return {opened.loops[i][0] for i, text in enumerate(said)
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
    return {opened.loops[i][0] for i in found}


def relevant_loops(memory: Memory, focus: Focus, floor: float, keep: int,
                   overdue_shown: int = OVERDUE_SHOWN, *,
                   opened: OpenLoops | None = None) -> LoopChoice:
    """bounded(loop_entries(memory, focus, overdue_shown), floor, keep), and whether an
    open loop is overdue at focus.tick (`opened`: OpenLoops(memory, focus), when the
    caller has read them)."""
    edge = reach(focus.tick, floor)
    opened = opened or OpenLoops(memory, focus)
    marked = marked_late(opened.late, focus, overdue_shown, overdue_only=True)
    touched, named = focus.loops, naming(opened, focus.names)
    strong: list[Entry] = []
    under = _Under(keep)
    for number, loop, key, last in opened.loops:
        if (last >= edge or key in marked or key in touched or loop.get("pinned") is True
                or number in named):
            _file(loop_entry(loop, number, focus, marked), floor, strong, under)
            continue
        score = quick_recency(focus.tick, last)    # all of its score
        if score < under.worst:
            under.count += 1
        else:
            under.offer(score, functools.partial(loop_rank, loop, number),
                        functools.partial(loop_entry, loop, number, focus, marked))
    items, unlisted = _chosen(strong, under)
    return LoopChoice(items, unlisted, bool(opened.late))
