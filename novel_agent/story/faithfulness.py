"""Faithfulness of a summary: the characters, loops and facts of its range it names.

A checkpoint or arc may replace text in the prompt only if it keeps what the
range established. `range_items` lists those items from memory and the
scenes; `coverage` measures the share a summary names and what it misses.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from novel_agent.story.memory.store import Memory
from novel_agent.story.scenes import Scene
from novel_agent.story.summaries import SummaryDoc

ARC_MAX_ITEMS = 12    # an arc is checked against at most this many of its range's items
STOPWORDS = set("that this with from have what when where which whom whose about into their "
                "there they them been were will would could should does because after before "
                "over under than then also only just some very".split())


@dataclass(frozen=True)
class Mention:
    """Something a range established that its summary should name."""

    kind: str    # "character", "loop" or "fact"
    label: str


def range_items(memory: Memory, scenes: list[Scene], first: int, last: int) -> list[Mention]:
    """Characters who appeared in ticks first..last, loops opened or resolved there,
    facts established there."""
    seen: dict[str, str] = {}
    for scene in scenes:
        for name in [scene.pov, *scene.characters]:
            if name and first <= scene.tick <= last:
                seen.setdefault(name.strip().lower(), name.strip())
    items = [Mention("character", n) for n in seen.values()]
    for loop in memory.loops:
        ticks = (loop.get("opened_in"), loop.get("resolved_in"))
        if any(isinstance(t, int) and first <= t <= last for t in ticks):
            items.append(Mention("loop", str(loop.get("description", ""))))
    items += [Mention("fact", str(f.get("text", ""))) for f in memory.facts
              if isinstance(f.get("scene"), int) and first <= f["scene"] <= last]
    return [i for i in items if i.label.strip()]


def _words(text: str) -> set[str]:
    return {w.removesuffix("'s").rstrip("s") for w in re.findall(r"[a-z0-9']+", text.lower())}


def names(text: str, item: Mention, shared: frozenset[str] = frozenset()) -> bool:
    """Does `text` name `item`? A character by full name, or by first name when no
    other character of the range shares it (`shared`); a loop or fact when 60% of
    its significant words appear."""
    lowered = text.lower()
    if item.kind == "character":
        first = item.label.split()[0].lower()
        return item.label.lower() in lowered or (
            len(first) > 2 and first not in shared and first.rstrip("s") in _words(text))
    key = [w for w in _words(item.label) if len(w) >= 4 and w not in STOPWORDS]
    if not key:
        return item.label.lower() in lowered
    return sum(w in _words(text) for w in key) >= math.ceil(0.6 * len(key))


def coverage(text: str, items: list[Mention]) -> tuple[float, list[Mention]]:
    """(share of `items` that `text` names, the items it leaves out)."""
    firsts = [i.label.split()[0].lower() for i in items if i.kind == "character"]
    shared = frozenset(f for f in firsts if firsts.count(f) > 1)
    missing = [i for i in items if not names(text, i, shared)]
    return (1.0 - len(missing) / len(items)) if items else 1.0, missing


def arc_items(items: list[Mention], children: list[SummaryDoc]) -> list[Mention]:
    """What an arc must keep: its range's items its children named, most-named first,
    the kinds taken in turn, at most ARC_MAX_ITEMS."""
    ranked = sorted(((sum(not coverage(c.body, [i])[1] for c in children), n, i)
                     for n, i in enumerate(items)),
                    key=lambda t: (-t[0], t[1]))
    by_kind: dict[str, list[Mention]] = {}
    for hits, _, item in ranked:
        if hits:
            by_kind.setdefault(item.kind, []).append(item)
    turns = [by_kind.get(k, []) for k in ("character", "loop", "fact")]
    merged = [i for group in zip(*[t + [None] * ARC_MAX_ITEMS for t in turns]) for i in group if i]
    return merged[:ARC_MAX_ITEMS]
