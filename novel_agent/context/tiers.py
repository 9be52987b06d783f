"""Which recent scenes go in full text (tier 1) and which as summaries (tier 2).

The tiers move in steps, not every tick, so consecutive prompts share a long
prefix: new scenes are appended after the ones already in the prompt until a
tier passes its high-water mark (its token cap, or its scene count), then one
compaction brings it down to its low-water mark. The boundaries are the
state carried from one tick to the next (`tier1_start`, `tier2_start`).

Sizes follow the preset: after a compaction tier 1 holds the newest scenes
within `full_text_scenes_count` scenes of typical length (`scene_max_words`),
and it grows to one typical scene more before compacting again; tier 2 holds
`summary_scenes_count` summaries after a compaction and twice that before the
next. Dynamic sizing: the sizes are in tokens, so short scenes fit more,
while one 3,000-word scene pushes the older full text down to its summary.
The newest scene is always in full (the engine truncates it middle-out as the
last resort). A small window's share caps both tiers first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

TOKENS_PER_WORD = 1.4   # an upper estimate for English prose (cl100k/o200k: ~1.3)


def typical_scene_tokens(max_words: int) -> int:
    """The tokens of a scene of typical length (`scene_max_words`), heading included."""
    return int(max_words * TOKENS_PER_WORD) + 12


@dataclass(frozen=True)
class TierLimits:
    """Caps of the two recent tiers."""

    tier1_tokens: int      # tier 1's high-water mark in tokens
    tier1_low: int         # tier 1's low-water mark in tokens (what a compaction keeps)
    tier2_tokens: int
    full_count: int        # the preset's full-text scenes (of typical length)
    summary_count: int     # summaries kept after a compaction
    max_full: int          # tier 1 never holds more scenes than this
    floor: int = 1         # scenes a compaction keeps if they fit the whole cap

    @classmethod
    def for_preset(cls, budget: int, ctx: Any, gen: Any) -> TierLimits:
        """Tier 1: `full_text_scenes_count` typical scenes after a compaction, one more at
        its high-water mark, both within `tier1_share` of the budget (refilling from
        `low_water` of it when that share binds first); tier 2 within `tier2_share`."""
        typical = typical_scene_tokens(gen.scene_max_words)
        count = max(1, gen.full_text_scenes_count)
        share = int(budget * ctx.tier1_share)
        if (count + 1) * typical <= share:
            high, low, floor = (count + 1) * typical, count * typical, count
        else:    # a small window: refill from low_water of the share, for a wide band
            high, low, floor = share, int(ctx.low_water * share), 1
        return cls(tier1_tokens=high, tier1_low=max(1, low),
                   tier2_tokens=int(budget * ctx.tier2_share), full_count=count,
                   summary_count=gen.summary_scenes_count,
                   max_full=max(ctx.max_full_text_scenes, count), floor=floor)

    @property
    def max_summaries(self) -> int:
        """Tier 2's high-water mark in summaries."""
        return 2 * self.summary_count


@dataclass(frozen=True)
class RecentSelection:
    """Ticks in each tier (ascending) and the boundaries to carry to the next tick."""

    full: list[int]
    summarized: list[int]
    state: dict[str, int]
    events: list[str] = field(default_factory=list)
    tier3_end: int | None = None   # the last tick tier 3 tells (writer.reach_back)


def _compact_full(last: int, tokens: Callable[[int], int], limits: TierLimits) -> int:
    """Newest-first down to the low-water mark: the newest scene, then older ones while
    they fit `tier1_low` tokens (or, up to `floor` scenes, the whole cap)."""
    start, used = last, tokens(last)
    while start > 1 and last - start + 1 < limits.max_full:
        nxt = tokens(start - 1)
        floor = last - start + 1 < limits.floor and used + nxt <= limits.tier1_tokens
        if not (floor or used + nxt <= limits.tier1_low):
            break
        start, used = start - 1, used + nxt
    return start


def _compact_summaries(end: int, tokens: Callable[[int], int], limits: TierLimits) -> int:
    """Newest-first summaries ending at `end`: `summary_count` of them within the cap."""
    start, used = end + 1, 0
    while start > 1 and end - start + 1 < limits.summary_count:
        nxt = tokens(start - 1)
        if used + nxt > limits.tier2_tokens and start <= end:
            break
        start, used = start - 1, used + nxt
    return start


def select_recent(last: int, full_tokens: Callable[[int], int],
                  summary_tokens: Callable[[int], int], limits: TierLimits,
                  state: Mapping[str, int] | None = None) -> RecentSelection:
    """Choose tiers 1 and 2 for a story whose newest scene is `last` (0 = none yet)."""
    if last < 1:
        return RecentSelection([], [], {}, [])
    state = state or {}
    events: list[str] = []
    b1 = int(state.get("tier1_start") or 0)
    if not 1 <= b1 <= last or last - b1 + 1 > limits.max_full:
        b1 = _compact_full(last, full_tokens, limits)
        events.append("tier 1 compacted" if state else "tier 1 started")
    elif sum(full_tokens(t) for t in range(b1, last + 1)) > limits.tier1_tokens:
        b1 = _compact_full(last, full_tokens, limits)
        events.append("tier 1 compacted")
    b2 = int(state.get("tier2_start") or 0)
    if limits.summary_count <= 0:
        b2 = b1
    elif not 1 <= b2 <= b1 or b1 - b2 > limits.max_summaries:
        b2 = _compact_summaries(b1 - 1, summary_tokens, limits)
        if "tier2_start" in state:
            events.append("tier 2 compacted")
    elif sum(summary_tokens(t) for t in range(b2, b1)) > limits.tier2_tokens:
        b2 = _compact_summaries(b1 - 1, summary_tokens, limits)
        events.append("tier 2 compacted")
    return RecentSelection(full=list(range(b1, last + 1)), summarized=list(range(b2, b1)),
                           state={"tier1_start": b1, "tier2_start": b2}, events=events)
