"""What a revision changes, laid over memory as the files hold it: a three-way merge.

    base    memory re-derived from the records as they stand (the scene as it was)
    theirs  memory re-derived with the revised scene (revision/rederive.py)
    ours    memory as the files hold it: the records' memory plus every edit by hand

The result takes what `theirs` changes of `base`, item by item (a character, a place,
a loop, a relationship, a fact) and field by field, and keeps `ours` wherever theirs
changed nothing: an edit by hand made after the revised tick stands, and where the
revision and an edit by hand changed the same field the edit wins (it came later).
A revision that changes nothing leaves memory as it was, byte for byte. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, cast

from novel_agent.story.memory.read import as_read
from novel_agent.story.memory.records import Character, Fact, Location, Loop, Relationship
from novel_agent.story.memory.store import Memory

Item = Mapping[str, Any]      # an item of any kind (a character, ... a fact), merged field by field
GONE: Any = object()     # a field, or an item, one side does not have


def merge_memory(base: Memory, ours: Memory, theirs: Memory) -> Memory:
    """The three-way merge of the module docstring (a new Memory; its inputs unchanged)."""
    if theirs == base:
        return ours.copy()
    out = Memory(characters=cast(dict[str, Character], _merge_named(
                     base.characters, ours.characters, theirs.characters)),
                 locations=cast(dict[str, Location], _merge_named(
                     base.locations, ours.locations, theirs.locations)),
                 loops=cast(list[Loop], _merge_listed(base.loops, ours.loops, theirs.loops,
                                                      _by_id)),
                 relationships=cast(list[Relationship], _merge_listed(
                     base.relationships, ours.relationships, theirs.relationships, _by_id)),
                 facts=cast(list[Fact], _merge_listed(base.facts, ours.facts, theirs.facts,
                                                      _fact_keys)))
    return as_read(out.copy())


def merge_value(base: Any, ours: Any, theirs: Any) -> Any:
    """One value three ways: theirs where ours kept base's, else ours."""
    return theirs if ours == base else ours


def merge_item(base: Item | None, ours: Item | None, theirs: Item | None) -> Item | None:
    """One item three ways, field by field (None: the side does not have it). Its fields
    in theirs' order, with ours' own fields after the field before them in ours."""
    if theirs == base:
        return ours
    if ours == base:
        return theirs
    if ours is None:             # gone by hand, changed by the revision: gone
        return None
    if theirs is None:           # gone by the revision, changed by hand: kept
        return ours
    b = base or {}
    merged = {key: merge_value(b.get(key, GONE), ours.get(key, GONE), theirs.get(key, GONE))
              for key in _field_order(ours, theirs)}
    return {key: value for key, value in merged.items() if value is not GONE}


def _field_order(ours: Item, theirs: Item) -> list[str]:
    order = list(theirs)
    for i, key in enumerate(ours):
        if key not in order:
            after = next((k for k in reversed(list(ours)[:i]) if k in order), None)
            order.insert(order.index(after) + 1 if after is not None else 0, key)
    return order


def _merge_named(base: Mapping[str, Item], ours: Mapping[str, Item],
                 theirs: Mapping[str, Item]) -> dict[str, Item]:
    """Characters or places by id."""
    out = {}
    for key in dict.fromkeys([*theirs, *ours, *base]):
        item = merge_item(base.get(key), ours.get(key), theirs.get(key))
        if item is not None:
            out[key] = item
    return out


def _by_id(items: Sequence[Item]) -> list[Hashable]:
    return [str(item.get("id")) for item in items]


def _fact_keys(facts: Sequence[Item]) -> list[Hashable]:
    """A fact's key: its text and scene (and which of that pair it is, for a twin)."""
    seen: Counter[tuple[str, Any]] = Counter()
    keys: list[Hashable] = []
    for fact in facts:
        pair = (str(fact.get("text", "")), fact.get("scene"))
        keys.append((*pair, seen[pair]))
        seen[pair] += 1
    return keys


def _merge_listed(base: Sequence[Item], ours: Sequence[Item], theirs: Sequence[Item],
                  keys_of: Callable[[Sequence[Item]], list[Hashable]]) -> Sequence[Item]:
    """Loops, relationships (by id) or facts (by text and scene), in theirs' order, with
    the items only ours has after the item before them in ours."""
    if theirs == base:
        return ours
    b, o, t = (dict(zip(keys_of(items), items)) for items in (base, ours, theirs))
    order = _list_order(list(o), list(t), new={key for key in t if key not in b})
    out: list[Item] = []
    for key in order:
        item = merge_item(b.get(key), o.get(key), t.get(key))
        if item is not None:
            out.append(item)
    return out


def _list_order(ours: list[Hashable], theirs: list[Hashable],
                new: set[Hashable]) -> list[Hashable]:
    """Theirs' order, each key only ours has after the one before it in ours (and after
    the keys only theirs has that follow that one: they stand where items ours had
    stood, a fact the revision rewrote)."""
    order = list(theirs)
    placed = set(order)
    for i, key in enumerate(ours):
        if key in placed:
            continue
        after = next((k for k in reversed(ours[:i]) if k in placed), None)
        at = order.index(after) + 1 if after is not None else 0
        while at < len(order) and order[at] in new:
            at += 1
        order.insert(at, key)
        placed.add(key)
    return order


def merged_text(base: str, ours: str, theirs: str) -> str:
    """A file's text three ways (memory/clock.yaml): theirs where ours kept base's."""
    return merge_value(base, ours, theirs)
