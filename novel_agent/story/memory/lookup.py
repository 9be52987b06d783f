"""Finding a character, a place or a loop by name without reading all of memory.

Memory is plain dicts and lists (story/memory/store.py), asked "who is 'Mara'?" many
times a tick; a scan of every entity per question made a tick grow with the
book. An index is made once for each dict of entities (by normalized name and
alias, and by the first word of the name) and each list of loops (by id and by
description), kept for that very dict or list and brought up to date as it
grows: entities are added at its end (a new key), loops appended. What an index
gives is checked against the entity itself before it is believed, so an index
behind a change can only say less, never something false; a dict or a list that
shrank is indexed again, and story/memory/store.py tells the index of a name learned
in place (`learned`). Memory kept between ticks (story/memory/kept.py) tells an
index of the items it moved or changed (`reordered`, `loops_from`), so the
index lives as long as its dict or list. Each index answers what the scan it
replaces answered: the first match in the dict's (the list's) order.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from novel_agent.story.memory.records import Character, Entity, Fact, Location, Loop, Named, is_open
from novel_agent.text.names import normalize_name

KEPT = 16      # indexes kept (the last dicts and lists asked about)
T = TypeVar("T")
LOOP_WORD = re.compile(r"[a-z]{5,}")


@functools.lru_cache(maxsize=1 << 14)
def loop_words(description: str) -> frozenset[str]:
    """A loop description's words of 5+ letters (asked again for every loop every tick)."""
    return frozenset(LOOP_WORD.findall(description.lower()))


def names_of(entity: Entity) -> set[str]:
    """The normalized name and aliases of a character or place."""
    return {normalize_name(str(n)) for n in [entity.get("name", ""), *(entity.get("aliases") or [])]
            if str(n).strip()}


def is_named(entity: Entity, wanted: str) -> bool:
    """Whether `wanted` (normalized) is the entity's name, or one of its aliases."""
    name = entity.get("name", "")
    return (normalize_name(str(name)) == wanted and bool(str(name).strip())) or \
        bool(entity.get("aliases")) and wanted in names_of(entity)


def surname(name: str) -> str:
    """What follows the first word of a name, normalized ("" for a name of one word):
    "Katrin Holloway" -> "holloway"."""
    return normalize_name(name).partition(" ")[2]


def surnamed(entity: Entity, rest: str) -> bool:
    """Whether the entity's name or an alias is a full name that ends in `rest` (surname)."""
    return any(surname(str(n)) == rest for n in [entity.get("name", ""),
                                                 *(entity.get("aliases") or [])])


def first_word(entity: Entity) -> str:
    """The first word of the entity's name, normalized ("" for none)."""
    words = normalize_name(str(entity.get("name", ""))).split()
    return words[0] if words else ""


class EntityIndex(Generic[Named]):
    """The entities of one dict by each of their names, by their name's first word, and
    by the rest of each full name (the surname)."""

    def __init__(self, entities: dict[str, Named]):
        self.entities: dict[str, Named] = entities
        self.held: dict[str, Named] = entities
        self.size = 0
        self.order: dict[str, int] = {}
        self.names: dict[str, list[str]] = {}
        self.first: dict[str, list[str]] = {}
        self.rest: dict[str, list[str]] = {}
        self.grow()

    def grow(self) -> None:
        """Index the entities added since the last look (at the dict's end)."""
        for key, entity in itertools.islice(self.entities.items(), self.size, None):
            self.order.setdefault(key, len(self.order))
            self.add(key, entity)
        self.size = len(self.entities)
        self.last = next(reversed(self.entities), None)

    def reorder(self) -> None:
        """The dict holds its entities in another order, some added or gone: take the new
        order and index the new ones."""
        known, self.order = self.order, dict(zip(self.entities, itertools.count()))
        for key in self.order.keys() - known.keys():
            self.add(key, self.entities[key])
        self.size = len(self.entities)
        self.last = next(reversed(self.entities), None)

    def behind(self) -> bool:
        """Whether the dict holds other entities than those indexed and some added."""
        return len(self.entities) < self.size or (
            len(self.entities) == self.size and next(reversed(self.entities), None) != self.last)

    def add(self, key: str, entity: Named) -> None:
        """Index `entity` (again: after it learned a name) under `key`."""
        name = entity.get("name", "")
        found = set(names_of(entity)) if entity.get("aliases") else set()
        if str(name).strip():
            found.add(normalize_name(str(name)))
        for each in found:
            _add(self.names, each, key)
            if " " in each:
                _add(self.rest, each.partition(" ")[2], key)
        if first_word(entity):
            _add(self.first, first_word(entity), key)

    def _ordered(self, keys: list[str], check: Callable[[Named], bool]) -> list[Named]:
        hits = [(self.order[k], self.entities[k]) for k in dict.fromkeys(keys)
                if k in self.entities and check(self.entities[k])]
        return [entity for _, entity in sorted(hits, key=lambda h: h[0])]

    def named(self, wanted: str) -> Named | None:
        """The first entity whose name or an alias is `wanted` (normalized)."""
        hits = self._ordered(self.names.get(wanted, []), lambda e: is_named(e, wanted))
        return hits[0] if hits else None

    def first_named(self, word: str) -> list[Named]:
        """The entities whose name's first word is `word`, in order."""
        return self._ordered(self.first.get(word, []), lambda e: first_word(e) == word)

    def with_surname(self, rest: str) -> list[Named]:
        """The entities with a full name (the name or an alias) that ends in `rest`, in
        order ("holloway": Katrin Holloway, Ansel Holloway)."""
        return self._ordered(self.rest.get(rest, []), lambda e: surnamed(e, rest))


class LoopIndex:
    """The loops of one list by id, by description (lowercased, stripped) and by each
    word of it (loop_words)."""

    def __init__(self, loops: list[Loop]):
        self.loops = self.held = loops
        self.size = 0
        self.ids: dict[str, list[int]] = {}
        self.said: dict[str, list[int]] = {}
        self.words: dict[str, list[int]] = {}
        self.under: list[tuple[str, str, frozenset[str]]] = []   # what each place is under
        self.grow()

    def grow(self) -> None:
        """Index the loops appended since the last look."""
        for n in range(self.size, len(self.loops)):
            under = _under(self.loops[n])
            _add(self.ids, under[0], n)
            _add(self.said, under[1], n)
            for word in under[2]:
                self.words.setdefault(word, []).append(n)
            self.under.append(under)
        self.size = len(self.loops)
        self.last = self.loops[-1] if self.loops else None

    def cut(self, first: int) -> None:
        """Forget the places from `first` on (their loops moved or changed their words)."""
        for key, said, words in self.under[first:]:
            for index, value in ((self.ids, key), (self.said, said),
                                 *((self.words, w) for w in words)):
                found = index.get(value)
                if found is not None:
                    del found[bisect.bisect_left(found, first):]
        del self.under[first:]
        self.size = min(self.size, first)

    def behind(self) -> bool:
        """Whether the list holds other loops than those indexed and some appended."""
        return len(self.loops) < self.size or (
            len(self.loops) == self.size and (self.loops[-1] if self.loops else None)
            is not self.last)

    def with_id(self, *ids: str) -> list[Loop]:
        """The loops with any of these ids, in order."""
        found = sorted({n for i in ids for n in self.ids.get(i, [])})
        return [self.loops[n] for n in found if self.loops[n].get("id") in ids]

    def open_with(self, word: str, enough: int) -> int:
        """How many open loops say `word`, counted up to `enough`."""
        found = 0
        for n in self.words.get(word, []):
            loop = self.loops[n]
            if is_open(loop) and \
                    word in loop_words(str(loop.get("description", ""))):
                found += 1
                if found >= enough:
                    break
        return found

    def open_saying_any(self, words: frozenset[str]) -> list[Loop]:
        """The open loops whose description says any of `words`, in order."""
        found = sorted({n for w in words for n in self.words.get(w, [])})
        return [self.loops[n] for n in found if is_open(self.loops[n])]

    def saying(self, lowered: str) -> list[Loop]:
        """The loops whose description (lowercased, stripped) is `lowered`, in order."""
        return [self.loops[n] for n in self.said.get(lowered, [])
                if _said(self.loops[n]) == lowered]


class FactIndex:
    """The facts of one list by their text, lowercased (where every text is text)."""

    def __init__(self, facts: list[Fact]):
        self.facts = self.held = facts
        self.size = 0
        self.texts: dict[str, list[int]] = {}
        self.plain = True       # every fact's text is a str (else its .lower() would fail)
        self.grow()

    def grow(self) -> None:
        """Index the facts appended since the last look."""
        for n in range(self.size, len(self.facts)):
            text = self.facts[n].get("text", "")
            if isinstance(text, str):
                _add(self.texts, text.lower(), n)
            else:
                self.plain = False
        self.size = len(self.facts)
        self.last = self.facts[-1] if self.facts else None

    def behind(self) -> bool:
        """Whether the list holds other facts than those indexed and some appended."""
        return len(self.facts) < self.size or (
            len(self.facts) == self.size and (self.facts[-1] if self.facts else None)
            is not self.last)

    def says(self, lowered: str) -> bool | None:
        """Whether a fact's text, lowercased, is `lowered`; None when the index cannot
        tell (a text that is not one, or an index behind a change in place)."""
        if not self.plain:
            return None
        found = self.texts.get(lowered)
        if not found:
            return False
        for n in found:
            text = self.facts[n].get("text", "") if n < len(self.facts) else None
            if isinstance(text, str) and text.lower() == lowered:
                return True
        return None


def _under(loop: Loop) -> tuple[str, str, frozenset[str]]:
    """What a loop is indexed under: its id, its description, its words."""
    return str(loop.get("id")), _said(loop), loop_words(str(loop.get("description", "")))


def _said(loop: Loop) -> str:
    return str(loop.get("description", "")).strip().lower()


def _add(index: dict[str, list[T]], key: str, value: T) -> None:
    values = index.setdefault(key, [])
    if value not in values:
        values.append(value)


_KEPT: dict[int, Any] = {}


def entity_index(entities: dict[str, Named]) -> EntityIndex[Named]:
    """The index of this very dict of entities, up to date with what it holds."""
    return _kept_index(EntityIndex, entities)


def loop_index(loops: list[Loop]) -> LoopIndex:
    """The index of this very list of loops, up to date with what it holds."""
    return _kept_index(LoopIndex, loops)


def fact_index(facts: list[Fact]) -> FactIndex:
    """The index of this very list of facts, up to date with what it holds."""
    return _kept_index(FactIndex, facts)


Indexed = TypeVar("Indexed", EntityIndex[Any], LoopIndex, FactIndex)


def _kept_index(kind: type[Indexed], held: Any) -> Indexed:
    """The kept index of kind `kind` of the dict or list `held` (made again when `held`
    is another object at that id or holds other items than it indexed; grown when items
    were added at its end)."""
    found = _KEPT.get(id(held))
    if not isinstance(found, kind) or found.held is not held or found.behind():
        found = _keep(id(held), kind(held))
    elif len(held) > found.size:
        found.grow()
    return found


def reordered(entities: dict[str, Character] | dict[str, Location]) -> None:
    """`entities` holds its entities in another order, some added or gone: its index, if
    it has one, takes the new order (see EntityIndex.reorder)."""
    found = _KEPT.get(id(entities))
    if isinstance(found, EntityIndex) and found.entities is entities:
        found.reorder()


def loops_from(loops: list[Loop], first: int, changed: Sequence[int] = ()) -> None:
    """The loops of `loops` from place `first` on moved, and those at `changed` may have
    changed in place: its index, if it has one, indexes them again from the first place
    whose loop is not what it indexed."""
    found = _KEPT.get(id(loops))
    if isinstance(found, LoopIndex) and found.loops is loops:
        first = min([first, *(n for n in changed
                               if n < min(found.size, len(loops)) and
                               found.under[n] != _under(loops[n]))])
        found.cut(first)
        found.grow()


def learned(entities: dict[str, Character] | dict[str, Location], key: str) -> None:
    """Entity `key` of `entities` learned a name in place: index it under it too."""
    found = _KEPT.get(id(entities))
    if isinstance(found, EntityIndex) and found.entities is entities and key in found.order:
        found.add(key, entities[key])


def _keep(key: int, index: Any) -> Any:
    if len(_KEPT) >= KEPT:
        _KEPT.clear()
    _KEPT[key] = index
    return index
