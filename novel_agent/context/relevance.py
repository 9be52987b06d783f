"""How relevant each memory item is to the scene at hand, and its forms rich -> bare.

A `Focus` says what the next scene is about: who (the POV and characters
present, or for the planner those of the last scenes and of the loops they
touch), where, which loops, and the tick. Each `*_items` function turns a kind
of memory into scored `Item`s with their forms (its `*_entries` twin scores them
without making the items yet: items.bounded makes those a pool can use). Scores
add up small signals:
being in focus, how recently the item appeared (halving every 10 ticks), an
overdue loop, an explicit `pinned: true`. Pure functions of their arguments.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from novel_agent.context.items import Entry, Item
from novel_agent.context.presence import called, gone, known_as, status_since, status_text, whereabouts
from novel_agent.context.sections import (
    describe_character,
    describe_location,
    describe_loop,
    describe_relationship,
)
from novel_agent.story.memory.records import Character, Entity, Location, Loop, Record, Relationship, is_open
from novel_agent.story.memory.store import Memory
from novel_agent.text.names import normalize_name

HALF_LIFE = 10      # ticks after which an item's recency counts half
OVERDUE_SHOWN = 3   # overdue loops marked to pay off (the oldest); the rest go by relevance


@dataclass(frozen=True)
class Focus:
    """What the scene at hand is about."""

    tick: int
    names: frozenset[str] = frozenset()     # normalized names of who is in focus
    places: frozenset[str] = frozenset()    # normalized place names
    loops: frozenset[str] = frozenset()     # loop ids in focus
    overdue_after: int = 30

    @classmethod
    def of(cls, tick: int, names: Iterable[str] = (), places: Iterable[str] = (),
           loops: Iterable[str] = (), overdue_after: int = 30) -> Focus:
        """A focus from plain names (normalized here)."""
        return cls(tick, frozenset(normalize_name(n) for n in names if n),
                   frozenset(normalize_name(p) for p in places if p),
                   frozenset(str(i) for i in loops), overdue_after)

    def has(self, name: Any) -> bool:
        return normalize_name(str(name or "")) in self.names


def settled_tick(tick: int, every: int) -> int:
    """The tick that the sections meant to stay put (the planner's characters, places and
    relationships; the writer's cast and settled block when tier 3 has no end yet) are
    chosen for when writing `tick`: the last
    multiple of `every` (the checkpoint interval, when "the story so far" changes too)
    before it; before the first, the last tick. They change once every `every` ticks.

    >>> [settled_tick(t, 10) for t in (1, 5, 10, 11, 20, 21, 35)]
    [0, 4, 9, 10, 10, 20, 30]
    """
    last = tick - 1
    return last if last < every else last // every * every


def recency(tick: int, seen: Any) -> float:
    """1.0 for an item seen at the last tick, halving every HALF_LIFE ticks."""
    try:
        age = max(0, tick - 1 - int(seen))
    except (TypeError, ValueError):
        return 0.0
    return 0.5 ** (age / HALF_LIFE)


def _pin(entity: Record) -> float:
    return 5.0 if entity.get("pinned") is True else 0.0


def _first_words(text: str, n: int = 8) -> str:
    words = str(text).split()
    return " ".join(words[:n]) + (" …" if len(words) > n else "")


def character_names(memory: Memory, focus: Focus) -> list[Item]:
    """Characters by name alone, scored as `character_items` scores them (the extractor's
    list of who is known: no card is made to be thrown away)."""
    return [e.make() for e in name_entries(memory, focus)]


def name_entries(memory: Memory, focus: Focus) -> list[Entry]:
    """character_names, scored, each item made on demand."""
    return [name_entry(c, focus) for c in memory.characters.values()]


def name_entry(c: Character, focus: Focus) -> Entry:
    """One character's entry of name_entries."""
    score = (3.0 if in_view(focus, c) else 0) + recency(focus.tick, c.get("last_seen")) \
        + _pin(c)
    rank = (first_seen(c), str(c.get("id")))
    name = str(c.get("name", c.get("id", "?")))     # no form is shorter
    return Entry(score, rank, functools.partial(_name_item, c, score, rank), least=name)


def _name_item(c: Character, score: float, rank: tuple) -> Item:
    forms = dict.fromkeys((known_as(c), called(c)))   # where and what they hold -> bare
    return Item(f"character:{c.get('id')}", tuple(forms), score, rank)


def character_items(memory: Memory, focus: Focus) -> list[Item]:
    """Characters: full card -> name, role and state -> name."""
    return [e.make() for e in character_entries(memory, focus)]


def character_entries(memory: Memory, focus: Focus) -> list[Entry]:
    """character_items, scored, each item made on demand."""
    return [character_entry(c, focus) for c in memory.characters.values()]


def character_entry(c: Character, focus: Focus) -> Entry:
    """One character's entry of character_entries."""
    in_focus = 3.0 if in_view(focus, c) else 0
    score = in_focus + recency(focus.tick, c.get("last_seen")) + _pin(c) + died(c, focus.tick)
    rank = (first_seen(c), str(c.get("id")))
    return Entry(score, rank, functools.partial(_character_item, c, score, rank,
                                                bool(in_focus)))


def died(c: Character, tick: int) -> float:
    """What a death adds to a character's score: as much as being seen, the recency of
    the scene they died in (1.0 at the last scene, halving every HALF_LIFE ticks), so
    the recently dead come before the living seen as lately; 0 for the living."""
    return recency(tick, status_since(c)) if gone(c) == "dead" else 0.0


def _character_item(c: Character, score: float, rank: tuple, in_focus: bool) -> Item:
    # the dead are scored (`died`), not kept whatever the room: every form says "dead"
    return Item(f"character:{c.get('id')}", (describe_character(c), character_line(c), called(c)),
                score, rank, why=("in the scene" if in_focus else "seen recently")
                + ("; dead" if gone(c) == "dead" else ""))


def in_view(focus: Focus, character: Character) -> bool:
    """Whether a character (by name or alias) is in focus (focus.has, each name asked
    without a call: every character is asked every tick)."""
    names = focus.names
    if not names:
        return False
    if normalize_name(str(character.get("name", character.get("id")) or "")) in names:
        return True
    aliases = character.get("aliases") or ()
    return any(normalize_name(str(a or "")) in names for a in aliases)


def character_line(c: Character, state_words: int = 10) -> str:
    """A character in one line: name, role, whether dead or absent, and state now if it
    has one (its first `state_words` words; 0: all of it, with how they died or left,
    where they were last and what they hold)."""
    name = str(c.get("name", c.get("id", "?")))
    role = _first_words(c.get("description") or "", 6)
    state = str(c.get("state") or "") if gone(c) != "dead" else ""
    state = _first_words(state, state_words) if state_words else " ".join(state.split())
    marks = [status_text(c, how=not state_words)] if gone(c) else []
    marks += [f"now: {state}"] if state else []
    marks += whereabouts(c) if not state_words else []
    if not role and not marks and c.get("first_seen"):
        return f"{name} (first seen in scene {c['first_seen']})"    # not a bare name
    return name + (f" — {role}" if role else "") + (f" ({'; '.join(marks)})" if marks else "")


def first_seen(entity: Entity) -> int:
    try:
        return int(entity.get("first_seen") or 0)
    except (TypeError, ValueError):
        return 0


def location_items(memory: Memory, focus: Focus) -> list[Item]:
    """Places: name and description -> name."""
    return [e.make() for e in location_entries(memory, focus)]


def location_entries(memory: Memory, focus: Focus) -> list[Entry]:
    """location_items, scored, each item made on demand."""
    return [location_entry(loc, focus) for loc in memory.locations.values()]


def location_entry(loc: Location, focus: Focus) -> Entry:
    """One place's entry of location_entries."""
    name = str(loc.get("name", loc.get("id", "?")))
    here = 3.0 if normalize_name(name) in focus.places else 0
    score = here + recency(focus.tick, loc.get("last_seen", loc.get("first_seen"))) + _pin(loc)
    rank = (first_seen(loc), str(loc.get("id")))
    return Entry(score, rank, functools.partial(_location_item, loc, name, score, rank,
                                                bool(here)))


def _location_item(loc: Location, name: str, score: float, rank: tuple,
                   here: bool) -> Item:
    return Item(f"location:{loc.get('id')}", (describe_location(loc), name), score, rank,
                why="the scene's place" if here else "seen recently")


def relationship_items(memory: Memory, focus: Focus) -> list[Item]:
    """Relationships: a sentence -> "A — kind — B"."""
    return [e.make() for e in relationship_entries(memory, focus)]


def relationship_entries(memory: Memory, focus: Focus) -> list[Entry]:
    """relationship_items, scored, each item made on demand."""
    return [relationship_entry(rel, number, focus)
            for number, rel in enumerate(memory.relationships)]


def relationship_entry(rel: Relationship, number: int, focus: Focus) -> Entry:
    """The entry of relationship_entries for `rel`, the `number`th of its list."""
    both = focus.has(rel.get("a")) + focus.has(rel.get("b"))
    score = 2.0 * both + recency(focus.tick, rel.get("updated_in", rel.get("since")))
    rank = (since(rel), number)
    return Entry(score, rank, functools.partial(_relationship_item, rel, score, rank, both))


def _relationship_item(rel: Relationship, score: float, rank: tuple, both: int) -> Item:
    bare = f"{rel.get('a')} — {rel.get('kind')} — {rel.get('b')}"
    return Item(f"relationship:{rel.get('a')}|{rel.get('b')}",
                (describe_relationship(rel), bare), score, rank,
                why=("between characters in focus" if both == 2 else
                     "involves a character in focus" if both else "recent"))


def since(rel: Relationship) -> int:
    try:
        return int(rel.get("since") or 0)
    except (TypeError, ValueError):
        return 0


def overdue(loop: Loop, tick: int, after: int) -> bool:
    """Open for more than `after` ticks."""
    opened = loop.get("opened_in")
    try:
        return opened is not None and is_open(loop) and tick - int(opened) > after
    except (TypeError, ValueError):
        return False


def loop_text(loop: Loop, tick: int, after: int) -> str:
    """A loop as the planner reads it, with an overdue mark it is asked to act on."""
    text = describe_loop(loop)
    if overdue(loop, tick, after):
        text += overdue_mark(tick - int(loop["opened_in"]))
    return text


def overdue_mark(scenes: int) -> str:
    return f" — OVERDUE: open for {scenes} scenes; pay it off or close it"


def text_words(text: str) -> frozenset[str]:
    """The words of 5+ letters of `text`, lowercased (what the extractor matches a loop
    by)."""
    return _text_words(text)


@functools.lru_cache(maxsize=1 << 14)
def _text_words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z]{5,}", text.lower()))


OVERDUE_WORDS = text_words(overdue_mark(0))


def loop_words(loop: Loop, tick: int, after: int) -> frozenset[str]:
    """text_words(loop_text(loop, tick, after)), the loop's own part cached: the mark's
    words are the same for every count of scenes."""
    words = text_words(describe_loop(loop))
    return words | OVERDUE_WORDS if overdue(loop, tick, after) else words


def loop_items(memory: Memory, focus: Focus, overdue_shown: int = OVERDUE_SHOWN) -> list[Item]:
    """Open loops: the whole question -> its first words -> its id. The oldest
    `overdue_shown` overdue loops score high (a bounded share: the planner is asked to pay
    them off); the others by relevance to where the story is now: loops in focus (touched
    by the last scenes, or naming who is in focus), then the newest touched or opened."""
    return [e.make() for e in loop_entries(memory, focus, overdue_shown)]


def loop_entries(memory: Memory, focus: Focus, overdue_shown: int = OVERDUE_SHOWN) -> list[Entry]:
    """loop_items, scored, each item made on demand."""
    loops = memory.open_loops()
    marked = marked_late(loops, focus, overdue_shown)
    return [loop_entry(loop, number, focus, marked) for number, loop in enumerate(loops)]


def marked_late(loops: Iterable[Loop], focus: Focus,
                overdue_shown: int = OVERDUE_SHOWN, *,
                overdue_only: bool = False) -> frozenset[str]:
    """The ids of the oldest `overdue_shown` overdue loops of `loops` (the open ones; with
    `overdue_only`, the overdue ones): those loop_entries marks to pay off."""
    late = loops if overdue_only else (l for l in loops
                                       if overdue(l, focus.tick, focus.overdue_after))
    oldest = heapq.nsmallest(overdue_shown, late, key=_opened)   # sorted(...)[:n], stable
    return frozenset(str(l.get("id")) for l in oldest)


def _opened(loop: Loop) -> int:
    return int(loop.get("opened_in") or 0)


def loop_entry(loop: Loop, number: int, focus: Focus,
               marked: frozenset[str]) -> Entry:
    """The entry of loop_entries for `loop`, the `number`th open loop (`marked`: the
    ids marked_late gives)."""
    naming = naming_pattern(focus.names)
    late = str(loop.get("id")) in marked
    touched = str(loop.get("id")) in focus.loops
    said = normalize_name(str(loop.get("description", "")))
    names = naming is not None and naming.search(said) is not None
    score = 3.0 * late + 2.0 * touched + 1.0 * names + recency(focus.tick, last_touched(loop)) \
        + _pin(loop)
    rank = (int(loop.get("opened_in") or 0), number)
    why = ("overdue" if late else "touched by the last scenes" if touched
           else "names a character in focus" if names else "recent")
    # every form begins with "[id]" (the barest is it) and the words after it are
    # counted apart (tiktoken splits at the space), so none counts fewer tokens
    return Entry(score, rank, functools.partial(_loop_item, loop, focus, score, rank, why),
                 least=f"[{loop.get('id')}]")


def last_touched(loop: Loop) -> int:
    """The last scene a loop played in (the scene it opened in, if none is listed)."""
    return max([int(t) for t in loop.get("scenes") or [] if isinstance(t, int)] or
               [int(loop.get("opened_in") or 0)])


@functools.lru_cache(maxsize=16)
def naming_pattern(names: frozenset[str]) -> re.Pattern[str] | None:
    """A pattern found in a text that holds any of `names` (None when there are none): one
    search a loop rather than one per name."""
    return re.compile("|".join(re.escape(n) for n in sorted(names) if n)) if any(names) \
        else None


def _loop_item(loop: Loop, focus: Focus, score: float, rank: tuple, why: str) -> Item:
    bare = f"[{loop.get('id')}] {_first_words(loop.get('description', ''))}"
    return Item(f"loop:{loop.get('id')}", (loop_text(loop, focus.tick, focus.overdue_after),
                                           bare, f"[{loop.get('id')}]"), score, rank, why=why)
