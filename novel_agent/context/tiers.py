"""Which recent scenes go in full text (tier 1) and which as summaries (tier 2).

The tiers move in steps, not every tick, so consecutive prompts share a long
prefix: new scenes are appended after the ones already in the prompt until a
tier passes its high-water mark (its token cap, or its scene count), then one
compaction brings it down to its low-water mark. The boundaries are the
state carried from one tick to the next (`tier1_start`, `tier2_start`).

Dynamic sizing: tier 1 holds as many of the newest scenes as fit its token
cap, so three short scenes may all go in whole while one 3,000-word scene
pushes the older full text down to its summary. The newest scene is always in
full (the engine truncates it middle-out as the last resort).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping


@dataclass(frozen=True)
class TierLimits:
    """Caps of the two recent tiers."""

    tier1_tokens: int
    tier2_tokens: int
    full_count: int        # scenes kept in full after a compaction (if they fit)
    summary_count: int     # summaries kept after a compaction
    max_full: int          # tier 1 high-water in scenes
    low_water: float       # share of a token cap a tier refills from after compaction

    @property
    def after_compaction(self) -> int:
        """Tier 1's low-water mark in scenes: room to grow before the next compaction."""
        return max(self.full_count, self.max_full // 3)

    @property
    def max_summaries(self) -> int:
        return 4 * self.summary_count


@dataclass(frozen=True)
class RecentSelection:
    """Ticks in each tier (ascending) and the boundaries to carry to the next tick."""

    full: list[int]
    summarized: list[int]
    state: dict[str, int]
    events: list[str] = field(default_factory=list)


def _compact_full(last: int, tokens: Callable[[int], int], limits: TierLimits) -> int:
    """Newest-first down to the low-water mark: `after_compaction` scenes at most, within
    `low_water` of the cap (but `full_count` of them if they fit the whole cap)."""
    start, used = last, tokens(last)
    while start > 1 and last - start + 1 < limits.after_compaction:
        nxt = tokens(start - 1)
        count = last - start + 1
        within_floor = count < limits.full_count and used + nxt <= limits.tier1_tokens
        within_low = used + nxt <= limits.low_water * limits.tier1_tokens
        if not (within_floor or within_low):
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
