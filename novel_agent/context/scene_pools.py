"""The extractor's pools: every open loop and known character scored by its few fields,
only the best made into entries.

The extractor sees the open loops and the names it may match (builders.py), each
pool the best `limit` of all by score. A long book holds thousands of each, and
the full scan made every one an entry (relevance.loop_entries, name_entries) to
throw nearly all away. Here each is scored by the fields its score is made of
(shortlist.py's quick readers: the same floats), the best few (ties included) are
made into entries and the rest handed to the pool as an items.Tail: counted, not
made, when the pool is full before them or has less room left than any of their
least texts. tests/context/test_shortlist.py checks the pools' choice against the full scan.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Sequence
from operator import add, gt, is_, le
from typing import Any

from novel_agent.context.items import Entry, Item, Tail
from novel_agent.context.relevance import OVERDUE_WORDS, Focus, loop_entry, name_entry, text_words
from novel_agent.context.sections import describe_loop
from novel_agent.context.shortlist import (
    OpenLoops,
    all_of,
    column,
    in_view_at,
    loop_rank,
    pinned_at,
    recencies,
    where,
)
from novel_agent.story.memory.records import Character, Loop
from novel_agent.story.memory.store import Memory


def _best(scores: Sequence[float], keep: int) -> tuple[list[int], list[int]]:
    """The positions of the `keep` best of `scores` (and of any tied with the last of
    them), and of the rest: every one of those ranks after every one of these."""
    if len(scores) <= keep:
        return list(range(len(scores))), []
    cut = heapq.nlargest(keep, scores)[-1]
    return where(functools.partial(le, cut), scores), where(functools.partial(gt, cut), scores)


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
    opened = OpenLoops(memory, focus)
    marked = opened.marked(focus)
    scores = recencies(focus.tick, opened.lasts)         # the score of most: recency alone
    for n in opened.hot(focus, marked):
        scores[n] = loop_entry(opened.open[n], n, focus, marked).score
    overlaps = list(map(len, map(words.intersection, _loop_words(opened, words))))
    scores = list(map(add, scores, overlaps))

    def entry(n: int) -> Entry:     # the item made only if the pool takes it
        loop = opened.open[n]
        return Entry(scores[n], loop_rank(loop, n), functools.partial(
            _loop_item, loop, n, focus, marked, overlaps[n]), least=f"[{loop.get('id')}]")

    best, rest = _best(scores, keep)
    return tuple(entry(n) for n in best), _tail(entry, rest, functools.partial(
        _leasts, opened.keys, rest))      # (its id: f"[{id}]" is "[str(id)]")


_OWN: dict[tuple[str, str, int, bool], frozenset[str]] = {}   # a loop's words, by its fields


def _loop_words(opened: OpenLoops, words: frozenset[str] | set[str]) -> list[frozenset[str]]:
    """Each open loop's words (text_words of describe_loop), with the overdue mark's when
    it is late and the scene says one of those (so that the words it shares with the
    scene are loop_words'): kept by the fields describe_loop reads, when each is plain."""
    late = [False] * len(opened.open)
    if words & OVERDUE_WORDS:
        for n in opened.late_at:
            late[n] = True
    ids, said = column(opened.open, "id"), column(opened.open, "description")
    if not (all_of(str, ids) and all_of(str, said) and all_of(int, opened.began)):
        return [_own(loop, mark) for loop, mark in zip(opened.open, late)]
    keys = list(zip(ids, said, opened.began, late))
    owns: list[Any] = list(map(_OWN.get, keys))
    if None in owns:
        if len(_OWN) > 1 << 15:
            _OWN.clear()
        for n in where(functools.partial(is_, None), owns):
            owns[n] = _OWN[keys[n]] = _own(opened.open[n], late[n])
    return owns


def _own(loop: Loop, late: bool) -> frozenset[str]:
    own = text_words(describe_loop(loop))
    return own | OVERDUE_WORDS if late else own


def _leasts(keys: list[str], rest: list[int]) -> list[str]:
    return [f"[{keys[n]}]" for n in rest]


def _loop_item(loop: Loop, number: int, focus: Focus, marked: frozenset[str],
               overlap: int) -> Item:
    return sharing_entry(loop_entry(loop, number, focus, marked), overlap).make()


def _tail(entry: Callable[[int], Entry], rest: list[int],
          least: Callable[[], list[str]]) -> Tail | None:
    return Tail(len(rest), functools.partial(map, entry, rest), least) if rest else None


def scene_names(memory: Memory, focus: Focus,
                keep: int) -> tuple[tuple[Entry, ...], Tail | None]:
    """name_entries(memory, focus): the best `keep` of them (ties included) as entries,
    the rest as a Tail."""
    people = list(memory.characters.values())
    scores = recencies(focus.tick, column(people, "last_seen"))   # most: recency alone
    for n in in_view_at(people, focus.names).union(pinned_at(people)):
        scores[n] = name_entry(people[n], focus).score
    best, rest = _best(scores, keep)
    make = functools.partial(_name_entry, people, focus)
    return tuple(make(n) for n in best), _tail(make, rest, functools.partial(
        _called, people, rest))


def _called(people: list[Character], rest: list[int]) -> list[str]:
    return [str(people[n].get("name", people[n].get("id", "?"))) for n in rest]


def _name_entry(people: list[Character], focus: Focus, n: int) -> Entry:
    return name_entry(people[n], focus)
