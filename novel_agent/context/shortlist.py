"""What a planner or extractor pool can take, found in one cheap pass over memory: the
full scoring runs on that alone.

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

The extractor's pools take the best few of all (a limit, no floor): every open
loop and every character is scored there, each by its few fields, but only the
best are made into entries; the rest go to the pool as a `Tail`, made only if
the pool is not full before it.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from novel_agent.context.items import Entry, Item, Tail
from novel_agent.context.relevance import (
    HALF_LIFE,
    OVERDUE_SHOWN,
    OVERDUE_WORDS,
    Focus,
    character_entry,
    first_seen,
    in_view,
    last_touched,
    location_entry,
    loop_entry,
    marked_late,
    name_entry,
    overdue,
    recency,
    relationship_entry,
    since,
    text_words,
)
from novel_agent.context.relevance import _any_of as naming_pattern
from novel_agent.context.sections import describe_loop
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


def _first(entity: dict[str, Any]) -> int:
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


def _in_view(names: frozenset[str], c: dict[str, Any]) -> bool:
    """in_view(focus, c) for a focus on `names`, without the general case's work for a
    character named by a plain string and no aliases."""
    name = c.get("name")
    if type(name) is str and name and not c.get("aliases"):
        return normalize_name(name) in names
    return in_view(Focus(0, names), c)


def _recency(tick: int, seen: Any) -> float:
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


def _loop_rank(loop: dict[str, Any], number: int) -> tuple[int, int]:
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
    for c in memory.characters.values():
        first = _first(c)
        if first > tick:
            continue
        name = c.get("name")
        if type(name) is str and name and not c.get("aliases"):    # most: one name, read
            said = normalize_name(name)                             # alike by both
            if first >= edge or said in hot or c.get("pinned") is True:
                _file(_person(c, seen, focus), floor, strong, under)
                continue
            last = max(seen.get(said, 0), first)
        else:
            looked, names = _names(c)
            if first >= edge or c.get("pinned") is True or not (
                    hot.isdisjoint(looked) and hot.isdisjoint(names)):
                _file(_person(c, seen, focus), floor, strong, under)
                continue
            last = max([seen.get(n, 0) for n in names] + [first])
        score = _recency(focus.tick, last)    # all its score: it was last seen before `edge`
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


def _open_loops(memory: Memory, focus: Focus) -> tuple[list[tuple[int, dict[str, Any]]],
                                                      list[dict[str, Any]]]:
    """The open loops, each with its number among them, and those overdue at focus.tick."""
    opened: list[tuple[int, dict[str, Any]]] = []
    late: list[dict[str, Any]] = []
    due = focus.tick - focus.overdue_after      # a loop opened before this is overdue
    number = -1
    for loop in memory.loops:
        if loop.get("status", "open") != "open":
            continue
        number += 1
        opened.append((number, loop))
        began = loop.get("opened_in")
        if began < due if type(began) is int else overdue(loop, focus.tick,
                                                              focus.overdue_after):
            late.append(loop)
    return opened, late


def _marked(loop: dict[str, Any], focus: Focus, marked: frozenset[str]) -> bool:
    """Whether anything but recency adds to a loop's score: it is marked overdue, touched
    by the last scenes, pinned, or its words name someone in focus."""
    key = loop.get("id")
    key = key if type(key) is str else str(key)
    naming = naming_pattern(focus.names)
    return (key in marked or key in focus.loops or loop.get("pinned") is True
            or naming is not None
            and naming.search(normalize_name(str(loop.get("description", "")))) is not None)


def relevant_loops(memory: Memory, focus: Focus, floor: float, keep: int,
                   overdue_shown: int = OVERDUE_SHOWN) -> LoopChoice:
    """bounded(loop_entries(memory, focus, overdue_shown), floor, keep), and whether an
    open loop is overdue at focus.tick."""
    edge = reach(focus.tick, floor)
    opened, late = _open_loops(memory, focus)
    marked = marked_late(late, focus, overdue_shown, overdue_only=True)
    strong: list[Entry] = []
    under = _Under(keep)
    for number, loop in opened:
        last = _last(loop)
        if last >= edge or _marked(loop, focus, marked):
            _file(loop_entry(loop, number, focus, marked), floor, strong, under)
            continue
        score = _recency(focus.tick, last)
        if score < under.worst:
            under.count += 1
        else:
            under.offer(score, functools.partial(_loop_rank, loop, number),
                        functools.partial(loop_entry, loop, number, focus, marked))
    items, unlisted = _chosen(strong, under)
    return LoopChoice(items, unlisted, bool(late))


def _best(scores: Sequence[float], keep: int) -> tuple[list[int], list[int]]:
    """The positions of the `keep` best of `scores` (and of any tied with the last of
    them), and of the rest: every one of those ranks after every one of these."""
    if len(scores) <= keep:
        return list(range(len(scores))), []
    cut = heapq.nlargest(keep, scores)[-1]
    best = [n for n, score in enumerate(scores) if score >= cut]
    return best, [n for n, score in enumerate(scores) if score < cut]


def _sharing(make: Callable[[], Item], overlap: int) -> Item:
    """A loop's item for the extractor: `overlap` words shared with the scene added."""
    item = make()
    return Item(item.key, item.forms, item.score + overlap, item.rank,
                why="shares words with the scene" if overlap else item.why)


def sharing_entry(entry: Entry, overlap: int) -> Entry:
    """A loop's entry for the extractor: the words it shares with the scene added."""
    return entry._replace(score=entry.score + overlap,
                          make=functools.partial(_sharing, entry.make, overlap))


def scene_loops(memory: Memory, focus: Focus, words: frozenset[str] | set[str],
                keep: int) -> tuple[tuple[Entry, ...], Tail | None]:
    """The extractor's loops: loop_entries(memory, focus), each with the number of
    `words` (the scene's) it shares added (sharing_entry); the best `keep` of them (ties
    included) as entries, the rest as a Tail."""
    opened, late = _open_loops(memory, focus)
    marked = marked_late(late, focus, overdue_only=True)
    overdue_ids = {id(l) for l in late}
    mark_words = frozenset(words) & OVERDUE_WORDS      # the overdue mark's words it says
    scores: list[float] = []
    overlaps: list[int] = []
    for number, loop in opened:
        own = text_words(describe_loop(loop))           # loop_words, the mark's apart
        overlap = len(words & own) + (len(mark_words - own) if mark_words and id(loop)
                                      in overdue_ids else 0)
        base = loop_entry(loop, number, focus, marked).score if _marked(loop, focus, marked) \
            else _recency(focus.tick, _last(loop))      # the score: recency alone
        scores.append(base + overlap)
        overlaps.append(overlap)

    def entry(n: int) -> Entry:     # the item made only if the pool takes it
        number, loop = opened[n]
        return Entry(scores[n], _loop_rank(loop, number), functools.partial(
            _loop_item, loop, number, focus, marked, overlaps[n]), least=f"[{loop.get('id')}]")

    best, rest = _best(scores, keep)
    return tuple(entry(n) for n in best), _tail(entry, rest, [
        f"[{opened[n][1].get('id')}]" for n in rest])


def _loop_item(loop: dict[str, Any], number: int, focus: Focus, marked: frozenset[str],
               overlap: int) -> Item:
    return sharing_entry(loop_entry(loop, number, focus, marked), overlap).make()


def _tail(entry: Callable[[int], Entry], rest: list[int], least: list[str]) -> Tail | None:
    return Tail(len(rest), functools.partial(map, entry, rest),
                functools.partial(_same, least)) if rest else None


def scene_names(memory: Memory, focus: Focus,
                keep: int) -> tuple[tuple[Entry, ...], Tail | None]:
    """name_entries(memory, focus): the best `keep` of them (ties included) as entries,
    the rest as a Tail."""
    people = list(memory.characters.values())
    names = focus.names
    scores = [name_entry(c, focus).score if c.get("pinned") is True or _in_view(names, c)
              else _recency(focus.tick, c.get("last_seen"))     # the score: recency alone
              for c in people]
    best, rest = _best(scores, keep)
    make = functools.partial(_name_entry, people, focus)
    return tuple(make(n) for n in best), _tail(make, rest, [
        str(people[n].get("name", people[n].get("id", "?"))) for n in rest])


def _name_entry(people: list[dict[str, Any]], focus: Focus, n: int) -> Entry:
    return name_entry(people[n], focus)
