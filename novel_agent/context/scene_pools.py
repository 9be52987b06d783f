"""The extractor's pools: every open loop and known character scored by its few fields,
only the best made into entries.

The extractor sees the open loops and the names it may match (builders.py), each
pool the best `limit` of all by score. A long book holds thousands of each, and
the full scan made every one an entry (relevance.loop_entries, name_entries) to
throw nearly all away. Here each is scored by the fields its score is made of
(shortlist.py's quick readers: the same floats), the best few (ties included) are
made into entries and the rest handed to the pool as an items.Tail: counted, not
made, when the pool is full before them or has less room left than any of their
least texts. tests/test_shortlist.py checks the pools' choice against the full scan.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Sequence
from typing import Any

from novel_agent.context.items import Entry, Item, Tail
from novel_agent.context.relevance import OVERDUE_WORDS, Focus, loop_entry, marked_late, name_entry, text_words
from novel_agent.context.sections import describe_loop
from novel_agent.context.shortlist import OpenLoops, loop_rank, naming, quick_recency, seen_by
from novel_agent.story.memory import Memory


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
    opened = OpenLoops(memory, focus)
    marked = marked_late(opened.late, focus, overdue_only=True)
    touched, named = focus.loops, naming(opened, focus.names)
    late = {id(l) for l in opened.late} if words & OVERDUE_WORDS else set()
    mark_words = frozenset(words) & OVERDUE_WORDS      # the overdue mark's words it says
    scores: list[float] = []
    overlaps: list[int] = []
    for number, loop, key, last in opened.loops:
        own = text_words(describe_loop(loop))           # loop_words, the mark's apart
        overlap = len(words & own) + (len(mark_words - own) if id(loop) in late else 0)
        base = loop_entry(loop, number, focus, marked).score if (
            key in marked or key in touched or loop.get("pinned") is True
            or number in named) else quick_recency(focus.tick, last)     # recency alone
        scores.append(base + overlap)
        overlaps.append(overlap)

    def entry(n: int) -> Entry:     # the item made only if the pool takes it
        number, loop, _, _ = opened.loops[n]
        return Entry(scores[n], loop_rank(loop, number), functools.partial(
            _loop_item, loop, number, focus, marked, overlaps[n]), least=f"[{loop.get('id')}]")

    best, rest = _best(scores, keep)
    return tuple(entry(n) for n in best), _tail(entry, rest, [
        f"[{opened.loops[n][2]}]" for n in rest])      # (its id: f"[{id}]" is "[str(id)]")


def _loop_item(loop: dict[str, Any], number: int, focus: Focus, marked: frozenset[str],
               overlap: int) -> Item:
    return sharing_entry(loop_entry(loop, number, focus, marked), overlap).make()


def _tail(entry: Callable[[int], Entry], rest: list[int], least: list[str]) -> Tail | None:
    return Tail(len(rest), functools.partial(map, entry, rest),
                functools.partial(_given, least)) if rest else None


def scene_names(memory: Memory, focus: Focus,
                keep: int) -> tuple[tuple[Entry, ...], Tail | None]:
    """name_entries(memory, focus): the best `keep` of them (ties included) as entries,
    the rest as a Tail."""
    people = list(memory.characters.values())
    names = focus.names
    scores = [name_entry(c, focus).score if c.get("pinned") is True or seen_by(names, c)
              else quick_recency(focus.tick, c.get("last_seen"))     # the score: recency alone
              for c in people]
    best, rest = _best(scores, keep)
    make = functools.partial(_name_entry, people, focus)
    return tuple(make(n) for n in best), _tail(make, rest, [
        str(people[n].get("name", people[n].get("id", "?"))) for n in rest])


def _name_entry(people: list[dict[str, Any]], focus: Focus, n: int) -> Entry:
    return name_entry(people[n], focus)


def _given(value: Any) -> Any:
    return value
