"""Selection by item: every memory section is a pool of scored items, taken best-first.

An `Item` has forms from rich to bare (a character: full card -> one line ->
name). A `Pool` is a section's candidates and its share of the budget. For a
compaction level, `select` walks the pools in priority order: each gets its
share plus what the pools before it left unused; its items are taken
best-first, each in the richest form the level allows that still fits, else
a leaner one; what fits in no form is left out, with the reason. Higher levels
start the less relevant items at leaner forms, so detail goes before anything
is dropped. A pool keeps at least `min_items` (its best, in its barest form)
whatever its share, so no section with items is ever emptied, and items marked
`keep` are never dropped. An item's `tight` forms, barer still, are taken only when
the prompt is squeezed into the room its pinned parts leave (`select`'s total). The
chosen items are laid out in their `rank` order (stable from tick to tick, for prompt
caching), not by score.

A pool with a relevance floor need not hold the candidates under it that it
would never take: `bounded` makes the items of those over the floor and of the
best `min_items` under it only, and the pool counts the others (`unlisted`):
the same choice, made at the cost of what is relevant to the scene, not of all
memory, and the report says how many were left out in one line. A pool with a
`limit` may hold its candidates as `entries` (items made on demand): those
ranked after the pool is full are counted in one line, never made; and those
ranking after all of them as a `Tail`, whose entries are not even made unless
the pool can still take one when it comes to them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from novel_agent.context.engine import ItemNote
from novel_agent.context.sections import Section

FORM_NAMES = ("full", "line", "name")


@dataclass(frozen=True)
class Item:
    """One candidate: a character, a loop, a relationship, a scene summary..."""

    key: str
    forms: tuple[str, ...]       # rich -> bare; every form non-empty
    score: float = 0.0           # relevance to the scene at hand
    rank: tuple = ()             # layout order within the section (stable)
    keep: bool = False           # never dropped (may still be shown leaner)
    why: str = ""                # what the score is made of, for the report
    tight: tuple[str, ...] = ()  # barer forms still, for a prompt squeezed (`choose`'s hard)


class Entry(NamedTuple):
    """A candidate before its item is made; the item's score and rank are these."""

    score: float
    rank: tuple
    make: Callable[[], Item]
    least: str = ""     # a text no form of the item counts fewer tokens than ("": none)


@dataclass(frozen=True)
class Pool:
    """A section's candidate items and the share of the budget they may fill."""

    name: str
    title: str
    items: tuple[Item, ...]
    share: float
    min_items: int = 1
    joiner: str = "\n"
    header: str = ""             # a line before the items (shown only with items)
    limit: int = 0               # at most this many items (0 = no limit)
    min_score: float = 0.0       # items scoring under this are not relevant enough
    unlisted: int = 0            # candidates under min_score left out unmade (`bounded`)
    entries: tuple[Entry, ...] = ()   # more candidates, made only when they may be taken
    tail: Tail | None = None          # still more, ranked after all of these


@dataclass(frozen=True)
class Tail:
    """A pool's candidates that rank after all of its items and entries: how many, a
    function giving them as entries, and one giving their `least` texts. The entries
    are made only if the pool can still take one when it comes to them: not when it is
    full (they are counted as those past its limit are), nor when the room left is
    under every one's least (counted as those over its share are)."""

    count: int
    entries: Callable[[], Iterable[Entry]]
    least: Callable[[], Iterable[str]]



def bounded(entries: Iterable[Entry], floor: float,
            weak_kept: int = 1) -> tuple[tuple[Item, ...], int]:
    """The items of the entries scoring at least `floor` and of the best `weak_kept` of
    the others (those a pool with that floor and `min_items` = `weak_kept` can still
    take), made; and how many others were left unmade (the pool's `unlisted`)."""
    strong: list[Entry] = []
    weak: list[Entry] = []
    for entry in entries:
        (strong if entry[0] >= floor else weak).append(entry)
    weak.sort(key=lambda e: (-e[0], e[1]))
    chosen = strong + weak[:weak_kept]
    return tuple(e.make() for e in chosen), len(weak) - min(len(weak), weak_kept)


@dataclass
class Selection:
    """What `select` chose: sections in pool order, a note per candidate, tokens used."""

    sections: list[Section] = field(default_factory=list)
    notes: list[ItemNote] = field(default_factory=list)
    used: int = 0


def start_form(position: int, count: int, level: int) -> int:
    """The richest form index the item at `position` (0 = most relevant of `count`) may
    take at compaction `level`: all rich at 0; the less relevant half one step leaner
    at 1; at 2 the top half one step and the rest two; at 3 all bare but the best."""
    lower_half = position >= max(1, (count + 1) // 2)
    if level <= 0:
        return 0
    if level == 1:
        return 1 if lower_half else 0
    if level == 2:
        return 2 if lower_half else 1
    return 1 if position == 0 else 2


def _fit_form(item: Item, first: int, room: int, count: Callable[[str], int]) -> int | None:
    """The richest form from `first` on that fits `room` tokens (None if none does)."""
    for index in range(min(first, len(item.forms) - 1), len(item.forms)):
        if count(item.forms[index]) + 1 <= room:
            return index
    return None


def choose(pool: Pool, cap: int, level: int, count: Callable[[str], int],
           hard: int | None = None) -> tuple[list[tuple[Item, int]], list[ItemNote], int]:
    """The items of `pool` within `cap` tokens at `level`: [(item, form)], notes, used.
    With `hard`, nothing goes over it, not even an item the pool must keep (its `keep`
    items, its best `min_items`): those are then taken in their barest form while it
    fits (the prompt's room, when the pinned parts leave less than the shares ask)."""
    if hard is not None:
        cap = min(cap, hard)
    ranked: list[Item | Entry] = sorted([*pool.items, *pool.entries], key=_best_first)
    after = pool.tail.count if pool.tail else 0
    total = len(ranked) + after + pool.unlisted       # the unlisted rank after all of these
    taken: list[tuple[Item, int]] = []
    notes: list[ItemNote] = []
    used = 0
    not_made = over = 0

    def candidates() -> Iterable[Item | Entry]:
        nonlocal not_made, over
        yield from ranked
        if pool.tail and after:
            if len(taken) >= pool.min_items:        # (else they are made, each in turn)
                if pool.limit and len(taken) >= pool.limit:
                    not_made += after    # past the limit, every one: counted, not made
                    return
                if _over_all(pool.tail, cap - used, count):
                    over += after        # none fits what is left: counted, not made
                    return
            yield from sorted(pool.tail.entries(), key=_best_first)

    for position, candidate in enumerate(candidates()):
        form = None
        full = bool(pool.limit) and len(taken) >= pool.limit
        if isinstance(candidate, Entry) and len(taken) >= pool.min_items and (
                full or candidate.least and count(candidate.least) + 1 > cap - used):
            if full:              # an entry (never `keep`) the pool has no room for
                not_made += 1
            else:                 # ... or whose every form is over what is left
                over += 1
            continue
        item = candidate if isinstance(candidate, Item) else candidate.make()
        if hard is not None and item.tight:
            item = replace(item, forms=item.forms + item.tight)
        weak = item.score < pool.min_score
        if not full and not weak:
            form = _fit_form(item, start_form(position, total, level), cap - used, count)
        must = item.keep or len(taken) < pool.min_items
        if form is None and must:
            form = len(item.forms) - 1
            if hard is not None and count(item.forms[form]) + 1 > hard - used:
                form = None       # even the barest is over the room the prompt leaves
        if form is None:
            why = (f"the {pool.limit} most relevant are taken" if full and not must else
                   f"not relevant to this scene (score under {pool.min_score})"
                   if weak and not must else
                   f"over the room the prompt leaves ({hard:,} tokens)" if must else
                   f"over the {pool.name} share ({cap:,} tokens) at compaction level {level}")
            notes.append(ItemNote(item.key, pool.name, count(item.forms[0]), False, why,
                                  round(item.score, 3), FORM_NAMES[0]))
            continue
        n = count(item.forms[form]) + 1
        used += n
        taken.append((item, form))
        reason = "kept: the section is never emptied" if must and n > cap else (
            item.why or "relevant")
        notes.append(ItemNote(item.key, pool.name, n, True, reason, round(item.score, 3),
                              FORM_NAMES[min(form, 2)]))
    if over:
        notes.append(ItemNote(f"{pool.name}:+{over}:over", pool.name, 0, False,
                              f"{over} more over the {pool.name} share ({cap:,} tokens) at "
                              f"compaction level {level}, not listed"))
    if not_made:
        notes.append(ItemNote(f"{pool.name}:+{not_made}", pool.name, 0, False,
                              f"{not_made} more: the {pool.limit} most relevant are taken, "
                              "not listed"))
    if pool.unlisted:
        notes.append(ItemNote(f"{pool.name}:+{pool.unlisted}", pool.name, 0, False,
                              f"{pool.unlisted} more not relevant to this scene (score under "
                              f"{pool.min_score}), not listed"))
    return taken, notes, used


def _over_all(tail: Tail, room: int, count: Callable[[str], int]) -> bool:
    """Whether every entry of `tail` is over `room` (as choose skips an entry: its least
    text counted, plus one, is more than the room; an entry with none is never over)."""
    return all(least and count(least) + 1 > room for least in tail.least())


def _best_first(candidate: Item | Entry) -> tuple:
    return -candidate.score, candidate.rank


def render_pool(pool: Pool, taken: list[tuple[Item, int]]) -> Section:
    """The section text: the chosen items in layout (rank) order."""
    ordered = sorted(taken, key=lambda t: t[0].rank)
    text = pool.joiner.join(item.forms[form] for item, form in ordered)
    if text and pool.header:
        text = pool.header + "\n" + text
    return Section(pool.name, pool.title, text, items=tuple(i.key for i, _ in ordered))


def select(pools: list[Pool], budget: int, level: int, count: Callable[[str], int],
           total: int | None = None) -> Selection:
    """Fill the pools in priority order, each within its share plus what earlier ones
    left unused. With `total`, all of them within it, their shares shares of it: what
    each pool must keep (in its barest form) is set aside first, item by item while
    `total` holds it: every pool's keep items (the story told: no scene left out), then
    the best of each pool (no section emptied while there is room for one item of
    each), then the rest of their min_items, each step in priority order."""
    out = Selection()
    carry = 0
    held = [0] * len(pools)       # what each pool must keep, while `total` holds it:
    if total is not None:         # every pool's keep items, then the best of each, then
        needs = [kept_least(pool, count) for pool in pools]     # the rest of min_items
        for step in range(3):
            for n, need in enumerate(needs):
                for cost in need[step]:      # item by item: one over what is left is
                    if sum(held) + cost <= total:        # passed over, not cut
                        held[n] += cost
    shares = sum(pool.share for pool in pools)
    whole = budget if total is None or not shares else total / shares   # shares of `total`
    for n, pool in enumerate(pools):
        cap = int(pool.share * whole) + carry
        hard = None if total is None else max(0, total - out.used - sum(held[n + 1:]))
        taken, notes, used = choose(pool, cap, level, count, hard)
        carry = max(0, min(cap, hard if hard is not None else cap) - used)
        out.sections.append(render_pool(pool, taken))
        out.notes += notes
        out.used += used
    return out


def kept_least(pool: Pool, count: Callable[[str], int]) -> tuple[list[int], ...]:
    """The tokens of each item `pool` keeps whatever its share, in its barest form: its
    `keep` items; its best, when not one of them; the rest of its best `min_items`."""
    ranked: list[Item | Entry] = sorted([*pool.items, *pool.entries], key=_best_first)

    def least(candidates: Iterable[Item | Entry]) -> list[int]:
        made = [c if isinstance(c, Item) else c.make() for c in candidates]
        return [count((*i.forms, *i.tight)[-1]) + 1 for i in made]

    keep = [c for c in ranked if isinstance(c, Item) and c.keep]
    best = [c for c in ranked[:1] if c not in keep] if pool.min_items else []
    more = [c for c in ranked[1:pool.min_items] if c not in keep]
    return least(keep), least(best), least(more)
