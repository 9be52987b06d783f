"""Compaction for the planner, extractor and summarizer contexts.

These contexts have no tiers of their own: each compaction level empties a
few more of their least needed sections (cumulatively), and the engine's
middle-out truncation cuts the named sections as the last resort. The
extractor's scene is pinned but truncatable: a very long scene is cut
middle-out with a note rather than failing the tick.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping

from ..tokens import TokenCounter
from .engine import ItemNote, Proposal
from .sections import Context

# level -> sections emptied from that level on
DROPS: Mapping[str, Mapping[int, tuple[str, ...]]] = {
    "planner": {1: ("locations", "relationships"), 2: ("characters",), 3: ("overall", "loops")},
    "extractor": {1: ("plan",), 2: ("characters",), 3: ("loops",)},
    "summarizer": {1: (), 2: ("previous",), 3: ()},
}
TRUNCATABLE: Mapping[str, tuple[str, ...]] = {
    "planner": ("recent", "overall", "characters", "loops"),
    "extractor": ("scene",),
    "summarizer": ("scenes", "previous"),
}


def propose_sectioned(context: Context, counter: TokenCounter) -> Callable[[int], Proposal]:
    """A function level -> Proposal that empties sections by the stage's DROPS table."""
    drops = DROPS.get(context.stage, {})
    truncatable = TRUNCATABLE.get(context.stage, ())

    def propose(level: int) -> Proposal:
        dropped: dict[str, int] = {}
        for lvl in range(1, level + 1):
            for name in drops.get(lvl, ()):
                dropped[name] = lvl
        notes: list[ItemNote] = []
        sections = []
        for section in context.sections:
            tokens = counter.count(section.text) if section.text else 0
            if section.name in dropped and not section.pinned and section.text:
                notes.append(ItemNote(section.name, section.name, tokens, False,
                                      f"compaction level {dropped[section.name]}: section cut"))
                sections.append(replace(section, text="", items=()))
            else:
                if section.text:
                    notes.append(ItemNote(section.name, section.name, tokens, True,
                                          "pinned" if section.pinned else "fits"))
                sections.append(section)
        return Proposal(replace(context, sections=tuple(sections)), notes, truncatable)

    return propose
