"""The writer's context: tiers laid out stable-first and packed into the budget.

Layout (fixed; empty sections are skipped, never reordered):
  bible (pinned) · tier3 (arcs, checkpoints, overall) · cast (POV, location,
  present, lore) · retrieved · recent_summaries (tier 2) · recent_full (tier 1)
  · tools, intention, steer (pinned, volatile)

Compaction levels: 0 everything the tiers hold; 1 older full text becomes
summaries (only the newest scene stays whole); 2 fewer tier-2 summaries and
tier 3 cut to what fits half its share; 3 only the pinned parts and the newest
scene.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..decisions import Plan
from ..memory import Memory
from ..scenes import Scene
from ..tokens import TokenCounter
from .builders import cast_section, intention_text, scene_full, scene_summary
from .engine import ItemNote, Proposal
from .sections import Context, Section, bullets, story_bible
from .tiers import RecentSelection, TierLimits, select_recent

WRITER_ORDER = ("bible", "tier3", "cast", "retrieved", "recent_summaries", "recent_full",
                "tools", "intention", "steer")


@dataclass(frozen=True)
class Piece:
    """A candidate item of a section: a summary, a lore entry, a retrieved scene."""

    key: str
    text: str


@dataclass
class WriterInputs:
    """Everything the writer's context is made of (already read from disk)."""

    story: Any
    memory: Memory
    plan: Plan
    last_tick: int                      # newest committed scene (0 = none)
    scene: Callable[[int], Scene | None]  # loads a scene by tick (cached by the caller)
    tick: int = 0
    tool_results: Sequence[str] = ()
    steer: str = ""
    # In layout order (arcs, checkpoints, overall); or a function giving them for a
    # token budget, so each compaction level gets the newest covering level that fits.
    tier3: Sequence[Piece] | Callable[[int], Sequence[Piece]] = ()
    lore: Sequence[Piece] = ()
    retrieved: Sequence[Piece] = ()
    state: Mapping[str, int] = field(default_factory=dict)
    min_words: int = 200
    max_words: int = 400


def _take(pieces: Sequence[Piece], cap: int, counter: TokenCounter, section: str,
          notes: list[ItemNote], why: str, *, newest_first: bool = False) -> list[Piece]:
    """Pieces within `cap` tokens (oldest dropped first when newest_first), order kept."""
    order = list(reversed(pieces)) if newest_first else list(pieces)
    kept, used = [], 0
    for piece in order:
        n = counter.count(piece.text)
        if used + n <= cap:
            kept.append(piece)
            used += n
            notes.append(ItemNote(piece.key, section, n, True, "fits its share"))
        else:
            notes.append(ItemNote(piece.key, section, n, False, why))
    return list(reversed(kept)) if newest_first else kept


def propose_writer(inputs: WriterInputs, counter: TokenCounter, budget: int, ctx: Any,
                   gen: Any) -> Callable[[int], Proposal]:
    """A function level -> Proposal for the writer (ctx: ContextConfig, gen: GenerationConfig)."""
    limits = TierLimits(tier1_tokens=int(budget * ctx.tier1_share),
                        tier2_tokens=int(budget * ctx.tier2_share),
                        full_count=max(1, gen.full_text_scenes_count),
                        summary_count=gen.summary_scenes_count,
                        max_full=max(ctx.max_full_text_scenes, gen.full_text_scenes_count),
                        low_water=ctx.low_water)

    def full_tokens(tick: int) -> int:
        scene = inputs.scene(tick)
        return counter.count(scene_full(scene)) if scene else 0

    def summary_tokens(tick: int) -> int:
        scene = inputs.scene(tick)
        return counter.count(scene_summary(scene)) if scene else 0

    recent = select_recent(inputs.last_tick, full_tokens, summary_tokens, limits, inputs.state)

    def propose(level: int) -> Proposal:
        return _proposal(inputs, counter, budget, ctx, gen, recent, level)

    return propose


def _proposal(inputs: WriterInputs, counter: TokenCounter, budget: int, ctx: Any, gen: Any,
              recent: RecentSelection, level: int) -> Proposal:
    notes: list[ItemNote] = []
    full, summarized = list(recent.full), list(recent.summarized)
    if level >= 1 and len(full) > 1:
        for tick in full[:-1]:
            notes.append(ItemNote(f"scene_{tick:03d}", "recent_full", 0, False,
                                  f"compaction level {level}: shown as its summary"))
        summarized, full = summarized + full[:-1], full[-1:]
    if level >= 2 and summarized:
        keep = max(1, len(summarized) // 2)
        for tick in summarized[:-keep]:
            notes.append(ItemNote(f"scene_{tick:03d}", "recent_summaries", 0, False,
                                  "compaction level 2: fewer tier-2 summaries"))
        summarized = summarized[-keep:]
    if level >= 3:
        for tick in summarized:
            notes.append(ItemNote(f"scene_{tick:03d}", "recent_summaries", 0, False,
                                  "compaction level 3: only pinned parts and the last scene"))
        summarized = []
    scenes_full = [s for s in (inputs.scene(t) for t in full) if s]
    scenes_sum = [s for s in (inputs.scene(t) for t in summarized) if s]
    for s in scenes_full:
        notes.append(ItemNote(f"scene_{s.tick:03d}", "recent_full", counter.count(scene_full(s)),
                              True, "tier 1: recent scene in full"))
    for s in scenes_sum:
        notes.append(ItemNote(f"scene_{s.tick:03d}", "recent_summaries",
                              counter.count(scene_summary(s)), True, "tier 2: recent summary"))
    older = summarized[0] - 1 if summarized else (full[0] - 1 if full else 0)
    if older > 0:
        notes.append(ItemNote(f"scene_001..scene_{older:03d}", "recent_summaries", 0, False,
                              "older than the recent tiers: covered by tier 3 and retrieval"))
    cut = "compaction level 3: only pinned parts and the last scene"
    tier3_cap = 0 if level >= 3 else int(budget * ctx.tier3_share * (0.5 if level >= 2 else 1))
    offered = inputs.tier3(tier3_cap) if callable(inputs.tier3) else inputs.tier3
    tier3 = _take(offered, tier3_cap, counter, "tier3", notes,
                  cut if level >= 3 else "over the tier-3 share", newest_first=True)
    lore_cap = 0 if level >= 3 else int(budget * ctx.cast_share)
    lore = _take(inputs.lore, lore_cap, counter, "cast", notes,
                 cut if level >= 3 else "over the cast share")
    retrieved_cap = 0 if level >= 3 else int(budget * ctx.retrieved_share)
    retrieved = _take(inputs.retrieved, retrieved_cap, counter, "retrieved", notes,
                      cut if level >= 3 else "over the retrieval share")
    # The cast is anchored on scenes that change only when a tier compacts, so it
    # stays a stable prefix; whoever else is in this scene is described in the tail.
    first = recent.state.get("tier2_start", 1)
    last = min(recent.state.get("tier1_start", 0), first + max(1, gen.summary_scenes_count))
    anchor = [s for s in (inputs.scene(t) for t in range(first, last + 1)) if s]
    cast = cast_section(inputs.memory, ensemble=[n for s in anchor for n in (s.pov, *s.characters)],
                        places=[s.location for s in anchor])
    if lore:
        cast = Section(cast.name, cast.title, cast.text + "\n\nLore:\n" +
                       "\n".join(p.text for p in lore), items=cast.items + tuple(p.key for p in lore))
    if level >= 3:
        cast = Section(cast.name, cast.title, "", items=())
    sections = (
        Section("bible", "Story bible", story_bible(inputs.story), pinned=True),
        Section("tier3", "The story so far", "\n\n".join(p.text for p in tier3),
                items=tuple(p.key for p in tier3)),
        cast,
        Section("retrieved", "Earlier scenes that matter now",
                "\n\n".join(p.text for p in retrieved), items=tuple(p.key for p in retrieved)),
        Section("recent_summaries", "Earlier scenes (summaries)",
                "\n\n".join(scene_summary(s) for s in scenes_sum),
                items=tuple(f"scene_{s.tick:03d}" for s in scenes_sum)),
        Section("recent_full", "The last scenes in full",
                "\n\n".join(scene_full(s) for s in scenes_full),
                items=tuple(f"scene_{s.tick:03d}" for s in scenes_full)),
        Section("tools", "Notes from the planner's tools", bullets(inputs.tool_results),
                pinned=True),
        Section("intention", "This scene",
                intention_text(inputs.plan, inputs.memory, described=cast.items), pinned=True),
        Section("steer", "Author's note", inputs.steer, pinned=True),
    )
    context = Context("writer", sections, {"tick": inputs.tick, "min_words": inputs.min_words,
                                           "max_words": inputs.max_words,
                                           "title": inputs.plan.title})
    return Proposal(context, notes, truncatable=("recent_full",),
                    state=dict(recent.state), events=list(recent.events))
