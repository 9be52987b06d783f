"""The writer's context: tiers laid out stable-first and packed into the budget.

Layout (fixed; empty sections are skipped, never reordered):
  bible (pinned) · style (style.yaml: context/voice.py) · tier3 (arcs, checkpoints,
  overall) · cast (who and where) ·
  settled (older scenes and facts about them) · recent_summaries (tier 2) ·
  recent_full (tier 1) · retrieved · lore · voices (the cards of those present:
  context/voice.py) · avoid (the phrases this book has used too often: one line) ·
  tools, intention, steer (pinned).

What comes before the recent tiers changes once per checkpoint interval, all at
once: tier 3 ends at the last checkpoint before the newest scene (`reach_back`),
and the cast and the settled block are chosen for that tick (`settled_at`) from
what was known up to it, so they stay byte for byte the same until tier 3 moves;
the recent tiers between them only grow (tier 1 compacting into tier 2). The
settled block is sized so the prompt meets the target fill when the recent tiers
are halfway grown. What is chosen for this scene alone -- `retrieved` (its facts
first, then scenes, within `retrieved_share`), lore that fires, the brief -- comes
after the newest scene, so consecutive prompts share all but their tail.

Compaction levels: 0 everything the tiers hold; 1 older full text becomes
summaries (only the newest scene stays whole); 2 the older half of tier 2 as
titles and tier 3 cut to what fits half its share; 3 the pinned parts and the
newest scene, tier 2 as titles but its newest, and of every other section with
items only its best in its barest form (the cast's names, the newest tier-3
summary, one lore entry, one settled and one retrieved item): a section with items is never
emptied while the prompt has room, and no recent scene is left out (tier 2
reaches back to where tier 3 ends: `reach_back`). If the prompt is still over,
those are dropped (retrieval first, the cast last), then the last scene is cut
middle-out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from novel_agent.context.builders import (
    cast_section,
    gone_since,
    intention_text,
    scene_ending,
    scene_full,
    scene_summary,
    scene_title,
    shortened,
)
from novel_agent.context.engine import ItemNote, Proposal
from novel_agent.context.items import Item, Pool, choose
from novel_agent.context.relevance import settled_tick
from novel_agent.context.sections import Context, Section, bullets, story_bible
from novel_agent.context.tiers import RecentSelection, TierLimits, select_recent
from novel_agent.context.voice import STYLE_TITLE, VOICES_TITLE
from novel_agent.story.decisions import Plan
from novel_agent.story.memory.store import Memory
from novel_agent.story.scenes import Scene, key_tick, scene_key
from novel_agent.text.tokens import TokenCounter

HEADING_TOKENS, INSTRUCTION_TOKENS = 8, 120    # estimates, for the room left to retrieval
# Tier 3 may take this many times its share to tell the whole story, coarsely, rather
# than leave its beginning out (tier3.select_tier3's `stretch`).
TIER3_STRETCH = 2
# At level 3 the best items kept may not fit: they are then dropped, least needed first,
# before the last scene is cut middle-out.
LEAN_DROPPABLE = ("retrieved", "settled", "lore", "voices", "style", "tier3",
                  "recent_summaries", "cast")
WRITER_ORDER = ("bible", "style", "tier3", "cast", "settled", "recent_summaries",
                "recent_full", "retrieved", "lore", "voices", "avoid", "tools", "intention",
                "steer")
# What moves only with tier 3, once a checkpoint interval: the stable prefix (stable.py).
WRITER_STABLE = WRITER_ORDER[:5]
# The recent tiers: between two compactions a new scene is appended to them, nothing else.
WRITER_GROWING = WRITER_ORDER[5:7]
# The tail a scene's brief takes (tools, intention, steer), an estimate for sizing the
# settled block before the brief is known.
BRIEF_TOKENS = 300
SETTLED_TITLE = "Earlier, about these people and places"
RETRIEVED_TITLE = "Earlier scenes that matter now"
RECENT = ("recent_summaries", "recent_full")


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
    # In layout order; or a function (token budget, last tick to tell) giving them, so
    # each compaction level gets the newest covering level that fits and tier 3 ends
    # where the recent tiers begin.
    tier3: Sequence[Piece] | Callable[[int, int | None], Sequence[Piece]] = ()
    # The ticks tier 3 can end at (the checkpoints' last ticks): the recent tiers reach
    # back to the one before them, so every scene after tier 3 is told, once (None:
    # the tiers as the hysteresis has them, for a caller giving tier 3 itself).
    tier3_ends: Sequence[int] | None = None
    lore: Sequence[Item] = ()            # the entries that fire, scored by priority
    voices: Sequence[Item] = ()          # the voice cards of those present (context/voice.py)
    style: Sequence[Item] = ()           # the book's style: its lines and sample (context/voice.py)
    avoid: str = ""                      # the line of phrases this book has overused (prose_step)
    # Older scenes and facts scored for this scene; or a function of the ticks the recent
    # tiers hold (and those in full) giving them, so retrieval skips what is there.
    retrieved: Sequence[Item] | Callable[[set[int], set[int]], Sequence[Item]] = ()
    # Older scenes and facts about the people and places of the scenes up to where tier 3
    # ends, chosen from what was known then; or a function (that tick, those scenes)
    # giving them: the same until tier 3 moves, so they stay in the prompt's prefix.
    settled: Sequence[Item] | Callable[[int, Sequence[Scene]], Sequence[Item]] = ()
    state: Mapping[str, int] = field(default_factory=dict)
    min_words: int = 200
    max_words: int = 400
    # Tier 1 as the newest scene's ending only, every earlier recent scene as its summary
    # (context.full_text "ending": a small model shown whole scenes writes them again).
    ending: bool = False
    # A book with an outline: what the beat the plan names must make happen, and when it
    # is the outline's last, the arc's ending (this scene ends the book).
    beat: str = ""
    finale: str = ""

    def full_form(self, scene: Scene) -> str:
        """A tier-1 scene as this writer is shown it: whole, or its ending."""
        return scene_ending(scene) if self.ending else scene_full(scene)


def _take(pieces: Sequence[Piece], cap: int, counter: TokenCounter, section: str,
          notes: list[ItemNote], why: str, *, newest_first: bool = False,
          at_least: int = 0, short: Callable[[Piece], Piece] | None = None) -> list[Piece]:
    """Pieces within `cap` tokens (oldest dropped first when newest_first), order kept;
    the first `at_least` of them whatever their size. With `short`, a piece over the cap
    is told in its short form instead, whatever the cap (tier 3: every scene told)."""
    order = list(reversed(pieces)) if newest_first else list(pieces)
    kept: list[Piece] = []
    used = 0
    for piece in order:
        n = counter.count(piece.text)
        if used + n <= cap or len(kept) < at_least:
            kept.append(piece)
            used += n
            notes.append(ItemNote(piece.key, section, n, True, "fits its share"))
        elif short is not None:
            piece = short(piece)
            n = counter.count(piece.text)
            kept.append(piece)
            used += n
            notes.append(ItemNote(piece.key, section, n, True, f"{why}: told in short",
                                  form="line"))
        else:
            notes.append(ItemNote(piece.key, section, n, False, why))
    return list(reversed(kept)) if newest_first else kept


SHORT_WORDS = 40      # a tier-3 summary over the share: its first and last sentences


def told_short(piece: Piece) -> Piece:
    """A tier-3 summary in short: its heading (the scenes it tells), then the first and
    last of its sentences (builders.shortened)."""
    head, newline, body = piece.text.partition("\n")
    return Piece(piece.key, f"{head}\n{shortened(body, SHORT_WORDS)}" if newline
                 else shortened(head, SHORT_WORDS))


def propose_writer(inputs: WriterInputs, counter: TokenCounter, budget: int, ctx: Any,
                   gen: Any) -> Callable[[int], Proposal]:
    """A function level -> Proposal for the writer (ctx: ContextConfig, gen: GenerationConfig)."""
    limits = TierLimits.for_preset(budget, ctx, gen)

    def full_tokens(tick: int) -> int:
        scene = inputs.scene(tick)
        return counter.count(inputs.full_form(scene)) if scene else 0

    def summary_tokens(tick: int) -> int:
        scene = inputs.scene(tick)
        return counter.count(scene_summary(scene)) if scene else 0

    recent = select_recent(inputs.last_tick, full_tokens, summary_tokens, limits, inputs.state)
    if inputs.tier3_ends is not None:
        recent = reach_back(recent, inputs.tier3_ends, reach_limit(gen, limits.max_summaries))
    # the facts of scenes in full are left out per level (level 1 shows them as summaries)
    in_tiers = set(recent.full) | set(recent.summarized)
    retrieved = (inputs.retrieved(in_tiers, set())
                 if callable(inputs.retrieved) else inputs.retrieved)
    window = _window(inputs, recent, gen)
    upto = settled_at(inputs, recent, gen)
    settled = [i for i in (inputs.settled(upto, window) if callable(inputs.settled)
                           else inputs.settled)
               if _fact_tick(i.key) not in recent.full
               and not (i.key.startswith("scene_") and key_tick(i.key) in in_tiers)]
    summary = sum(summary_tokens(s.tick) for s in window) // max(1, len(window))
    # who the prompt tells of (the cast's scenes, the recent tiers', the plan's) and who
    # died or left in the scenes of the recent tiers: the brief names the dead and the
    # absent among them (presence.gone_sentences)
    ticks = [*recent.summarized, *recent.full]
    told = [*window, *(s for s in map(inputs.scene, ticks) if s)]
    around = [n for s in told for n in (s.pov, *s.characters) if n]
    if ticks:
        people = list(inputs.memory.characters.values())
        around += [str(people[n].get("name")) for n in sorted(gone_since(people, min(ticks) - 1))]
    # the recent tiers halfway between tier 3's moves: the settled block is sized so the
    # prompt meets the target fill there (under it just after a move, over it before one)
    expected = limits.tier1_low + (gen.checkpoint_summary_interval // 2 - 1) * summary

    def propose(level: int) -> Proposal:
        return _proposal(inputs, counter, budget, ctx, gen, recent, level, retrieved,
                         (window, settled, expected), around)

    return propose


LEVEL_NOTES = {1: "compaction level 1: shown as its summary",
               2: "compaction level 2: an older tier-2 scene as its title",
               3: "compaction level 3: only pinned parts, the last scene and the best item "
                  "of each other section"}


def _proposal(inputs: WriterInputs, counter: TokenCounter, budget: int, ctx: Any, gen: Any,
              recent: RecentSelection, level: int, retrieved_items: Sequence[Item],
              stable: tuple[Sequence[Scene], Sequence[Item], int],
              around: Sequence[str] = ()) -> Proposal:
    """The writer's draft at one compaction level: each section chosen in turn."""
    notes: list[ItemNote] = []
    full, summarized, lined = _recent_at_level(recent, level, notes, inputs.ending)
    scenes_full = _recent_scenes(inputs, full, "recent_full", inputs.full_form, counter, notes,
                                 "tier 1: the newest scene's ending" if inputs.ending
                                 else "tier 1: recent scene in full")
    scenes_sum = _recent_scenes(inputs, summarized, "recent_summaries",
                                lambda s: recent_form(s, lined), counter, notes,
                                "tier 2: recent summary")
    notes[:] = [replace(n, reason=LEVEL_NOTES[min(level, 3)] if level < 3 else LEVEL_NOTES[2],
                        form="line") if n.section == "recent_summaries" and n.included
                and key_tick(n.key) in lined else n for n in notes]
    _note_older((summarized or full)[:1], notes)
    caps, on = _caps(budget, ctx, level), _caps(budget, ctx, 0)   # a share of 0 is off
    why = (lambda share: LEVEL_NOTES[3] if level >= 3 else f"over the {share} share")
    offered = (inputs.tier3(caps["tier3"] or on["tier3"] // 2, recent.tier3_end)
               if callable(inputs.tier3) else inputs.tier3)
    tier3 = _take(offered, TIER3_STRETCH * caps["tier3"], counter, "tier3", notes, why("tier-3"),
                  newest_first=True, at_least=int(on["tier3"] > 0),
                  short=told_short if on["tier3"] and level < 3 else None)
    # the cast's share: the voice cards of those present first, the lore what they leave
    voices = _chosen(Pool("voices", VOICES_TITLE, tuple(inputs.voices), 0,
                          min_items=int(on["lore"] > 0)), caps["lore"], level, counter, notes)
    left = max(0, caps["lore"] - sum(counter.count(p.text) + 1 for p in voices))
    lore = _chosen(Pool("lore", "Lore", tuple(inputs.lore), 0,
                        min_items=int(on["lore"] > 0)), left, level, counter, notes)
    style = _chosen(Pool("style", STYLE_TITLE, tuple(inputs.style) if on["style"] else (), 0,
                         joiner="\n\n"), caps["style"], level, counter, notes)
    window, settled_items, expected = stable
    cast = _cast(inputs, window, level)
    # at level 3 what the brief tells of the people (their state, the dead and the away)
    # is chosen within the cast's share, the most relevant first: it never grows with the
    # cast (builders.intention_text)
    brief = (int(budget * ctx.cast_share), counter.count) if level >= 3 else None
    described = () if level >= 3 else cast.items     # profiled in the cast section
    settled: list[Piece] = []
    if on["retrieved"] and settled_items:
        head = sum(counter.count(s.text) + HEADING_TOKENS for s in _sections(
            inputs, tier3, cast, [], [], [], [], described, around=around, style=style,
            brief=brief)
            if s.text and s.name not in ("tools", "intention", "steer"))
        room = (int(ctx.target_fill * budget) - head - INSTRUCTION_TOKENS - BRIEF_TOKENS
                - expected - caps["retrieved"])
        settled = _facts_first(settled_items, room if level < 3 else 0,
                               0 if level < 3 else level, counter, notes, 1,
                               ("settled", SETTLED_TITLE))
    shown = {p.key: p.text for p in settled}
    rest = _sections(inputs, tier3, cast, [], lore, scenes_sum, scenes_full, described, lined,
                     settled, around, voices=voices, style=style, brief=brief)
    cap = caps["retrieved"]
    if cap:        # the room the rest leaves under the target fill flows to retrieval; but
        # while the settled block has items waiting, only half of the room the recent
        # tiers will take before tier 3 moves again (they were counted at `expected`)
        used = sum(counter.count(s.text) + HEADING_TOKENS for s in rest if s.text)
        grown = sum(counter.count(s.text) for s in rest if s.name in RECENT and s.text)
        growing = max(0, expected - grown) // 2 if any(
            not n.included for n in notes if n.section == "settled") else 0
        cap = max(cap, int(ctx.target_fill * budget) - used - INSTRUCTION_TOKENS - growing)
    # a fact the settled block shows that this scene's POV does not know comes again,
    # marked as such (retrieval's form for it differs from the plain one shown there)
    pool = [i for i in retrieved_items if _fact_tick(i.key) not in full
            and (i.key not in shown or i.key.startswith("fact:") and i.forms[0] != shown[i.key])]
    retrieved = _facts_first(pool, cap, level, counter, notes, int(on["retrieved"] > 0))
    context = Context("writer", _sections(inputs, tier3, cast, retrieved, lore, scenes_sum,
                                          scenes_full, described, lined, settled, around,
                                          voices=voices, style=style, brief=brief),
                      {"tick": inputs.tick, "min_words": inputs.min_words,
                       "max_words": inputs.max_words, "title": inputs.plan.title,
                       "goes_on": inputs.ending and bool(scenes_full),
                       "beat": inputs.beat, "finale": inputs.finale})
    return Proposal(context, notes, truncatable=("recent_full",),
                    droppable=LEAN_DROPPABLE if level >= 3 else ("retrieved", "settled"),
                    elastic=("retrieved", "settled", "tier3"),   # sized by their own caps
                    state=dict(recent.state), events=list(recent.events))


def _fact_tick(key: str) -> int | None:
    """The scene a retrieved fact comes from ("fact:12:<hash>" -> 12; None for a scene)."""
    parts = key.split(":")
    return int(parts[1]) if parts[0] == "fact" and len(parts) > 2 and parts[1].isdigit() \
        else None


def _chosen(pool: Pool, cap: int, level: int, counter: TokenCounter,
            notes: list[ItemNote]) -> list[Piece]:
    """A pool's items within `cap` at `level` (best first, leaner forms as it fills), as
    pieces in layout order."""
    taken, chosen_notes, _ = choose(pool, cap, level, counter.count)
    notes += chosen_notes
    return [Piece(item.key, item.forms[form])
            for item, form in sorted(taken, key=lambda t: t[0].rank)]


def _facts_first(items: Sequence[Item], cap: int, level: int, counter: TokenCounter,
                 notes: list[ItemNote], least: int,
                 section: tuple[str, str] = ("retrieved", RETRIEVED_TITLE)) -> list[Piece]:
    """Retrieved items within `cap`: the facts first (short and exact: what these people
    did and saw, and where), then the scenes in the room left, in layout order; at least
    `least` items whatever the cap."""
    name, title = section
    facts = tuple(i for i in items if i.key.startswith("fact:"))
    taken, fact_notes, used = choose(Pool(name, title, facts, 0, min_items=least),
                                     cap, level, counter.count)
    scenes = tuple(i for i in items if not i.key.startswith("fact:"))
    more, scene_notes, _ = choose(Pool(name, title, scenes, 0,
                                       min_items=int(least > len(taken))),
                                  max(0, cap - used), level, counter.count)
    notes += fact_notes + scene_notes
    return [Piece(item.key, item.forms[form])
            for item, form in sorted(taken + more, key=lambda t: t[0].rank)]


def reach_limit(gen: Any, summaries: int) -> int:
    """How many scenes the recent tiers may reach back past their own: two checkpoint
    intervals and a tier 2 (checkpoints owed beyond that are the summarizer's to make)."""
    return 2 * gen.checkpoint_summary_interval + summaries


def reach_back(recent: RecentSelection, ends: Sequence[int], limit: int) -> RecentSelection:
    """The recent tiers running from just after the last tier-3 end before the newest
    scene to it, so tier 3 and the tiers tell every scene once (by at most `limit` scenes
    past where the hysteresis starts them; the state carried on says where they begin).

    Tier 3 then moves once per checkpoint interval, once the first scene after a
    checkpoint is written -- not whenever tier 2 compacts past a checkpoint -- and the
    recent tiers only grow between its moves: everything before them stays put.

    >>> r = reach_back(RecentSelection([28, 29], [26, 27], {}), [10, 20], 30)
    >>> r.tier3_end, r.summarized, r.full
    (20, [21, 22, 23, 24, 25, 26, 27], [28, 29])
    >>> reach_back(RecentSelection([18, 19, 20], [], {}), [10, 20], 30).summarized
    [11, 12, 13, 14, 15, 16, 17]
    >>> reach_back(RecentSelection([19, 20, 21], [17, 18], {}), [10, 20], 30).full
    [21]
    """
    newest = (recent.full or recent.summarized or [0])[-1]
    if not newest:
        return recent
    first = (recent.summarized or recent.full)[0]
    end = max((e for e in ends if e < newest), default=0)
    start = max(end, min(first, newest) - 1 - limit) + 1
    full = [t for t in recent.full if t >= start] or [newest]
    state = {**recent.state, "tier1_start": full[0], "tier2_start": start} if recent.state \
        else recent.state
    events = [e for e in recent.events if not e.startswith("tier 2")]   # it runs from `end`
    return replace(recent, full=full, summarized=list(range(start, full[0])), state=state,
                   events=events, tier3_end=end)


def recent_form(scene: Scene, lined: Collection[int]) -> str:
    """A tier-2 scene as its summary, or as its title line when compaction asks."""
    return scene_title(scene) if scene.tick in lined else scene_summary(scene)


def _recent_at_level(recent: RecentSelection, level: int, notes: list[ItemNote],
                     ending: bool = False) -> tuple[list[int], list[int], set[int]]:
    """Ticks in full, in tier 2, and those of tier 2 shown as their title only, at
    `level`: level 1 shows older full text as summaries, level 2 the older half of the
    summaries as titles, level 3 all but the newest. No recent scene is left out. With
    `ending`, tier 1 holds the newest scene only (its ending), at every level."""
    full, summarized = list(recent.full), list(recent.summarized)
    if ending and level < 1 and len(full) > 1:
        summarized, full = summarized + full[:-1], full[-1:]
    if level >= 1 and len(full) > 1:
        notes += [ItemNote(scene_key(t), "recent_full", 0, False, LEVEL_NOTES[1])
                  for t in full[:-1]]
        summarized, full = summarized + full[:-1], full[-1:]
    lined: set[int] = set()
    if level >= 2 and summarized:
        keep = 1 if level >= 3 else max(1, len(summarized) // 2)
        lined = set(summarized[:len(summarized) - keep])
    return full, summarized, lined


def _recent_scenes(inputs: WriterInputs, ticks: list[int], section: str,
                   form: Callable[[Scene], str], counter: TokenCounter,
                   notes: list[ItemNote], why: str) -> list[Scene]:
    """The scenes of `ticks` that exist, each noted as included in `section`."""
    scenes = [s for s in (inputs.scene(t) for t in ticks) if s]
    notes += [ItemNote(scene_key(s.tick), section, counter.count(form(s)), True, why)
              for s in scenes]
    return scenes


def _note_older(first_recent: list[int], notes: list[ItemNote]) -> None:
    """Say that the scenes before the recent tiers are left to tier 3 and retrieval."""
    older = first_recent[0] - 1 if first_recent else 0
    if older > 0:
        notes.append(ItemNote(f"scene_001..scene_{older:03d}", "recent_summaries", 0, False,
                              "older than the recent tiers: covered by tier 3 and retrieval"))


def _caps(budget: int, ctx: Any, level: int) -> dict[str, int]:
    """Token caps of tier 3, lore (and the voices), retrieval and the style at `level`
    (none at level 3: the style's lines alone; tier 3 halved at level 2)."""
    if level >= 3:
        return {"tier3": 0, "lore": 0, "retrieved": 0, "style": 0}
    return {"tier3": int(budget * ctx.tier3_share * (0.5 if level >= 2 else 1)),
            "lore": int(budget * ctx.cast_share), "retrieved": int(budget * ctx.retrieved_share),
            "style": int(budget * ctx.style_share)}


def _window(inputs: WriterInputs, recent: RecentSelection, gen: Any) -> list[Scene]:
    """The scenes up to where tier 3 ends (`settled_at`), as many as the recent tiers
    hold for scenes of typical length: whose people and places the cast and the settled
    block are about."""
    last = settled_at(inputs, recent, gen)
    first = last - max(1, gen.summary_scenes_count) - max(1, gen.full_text_scenes_count) + 1
    return [s for s in (inputs.scene(t) for t in range(max(1, first), last + 1)) if s]


def _cast(inputs: WriterInputs, window: Sequence[Scene], level: int) -> Section:
    """Who and where: those of the scenes of the settled window (`_window`), as of its
    last scene, so it changes only with tier 3, once every checkpoint interval, and
    stays a stable prefix; whoever else is in this scene is described in the tail. At
    level 3 only their names, a dead one's marked (the tail then describes everyone in
    the scene)."""
    return cast_section(inputs.memory, ensemble=[n for s in window for n in (s.pov, *s.characters)],
                        places=[s.location for s in window],
                        tick=window[-1].tick if window else 0, bare=level >= 3)


def settled_at(inputs: WriterInputs, recent: RecentSelection, gen: Any) -> int:
    """The tick what stays put before the recent tiers (the cast, the settled facts) is
    chosen for: where tier 3 ends, so all of it moves at once; before the first
    checkpoint (or for a caller giving tier 3 itself), the settled tick."""
    return recent.tier3_end or settled_tick(inputs.tick, gen.checkpoint_summary_interval)


def _sections(inputs: WriterInputs, tier3: list[Piece], cast: Section, retrieved: list[Piece],
              lore: list[Piece], summarized: list[Scene], full: list[Scene],
              described: Sequence[str], lined: Collection[int] = frozenset(),
              settled: Sequence[Piece] = (), around: Sequence[str] = (), *,
              voices: Sequence[Piece] = (), style: Sequence[Piece] = (),
              brief: tuple[int, Callable[[str], int]] | None = None) -> tuple[Section, ...]:
    """The writer's sections in WRITER_ORDER (`described`: who the cast profiles;
    `around`: the names of the scenes the prompt tells; `voices`: the cards of those
    present; `style`: the book's style; `brief`: the room, and how to count it, for what
    the brief tells of the people, None for all of it)."""
    room, count = brief if brief is not None else (None, None)
    return (
        Section("bible", "Story bible", story_bible(inputs.story), pinned=True),
        Section("style", STYLE_TITLE, "\n\n".join(p.text for p in style),
                items=tuple(p.key for p in style)),
        Section("tier3", "The story so far", "\n\n".join(p.text for p in tier3),
                items=tuple(p.key for p in tier3)),
        cast,
        Section("settled", SETTLED_TITLE, _retrieved_text(settled),
                items=tuple(p.key for p in settled)),
        Section("recent_summaries", "Earlier scenes (summaries)",
                "\n\n".join(recent_form(s, lined) for s in summarized),
                items=tuple(scene_key(s.tick) for s in summarized)),
        Section("recent_full", "How the last scene ended" if inputs.ending
                else "The last scenes in full",
                "\n\n".join(inputs.full_form(s) for s in full),
                items=tuple(scene_key(s.tick) for s in full)),
        Section("retrieved", RETRIEVED_TITLE, _retrieved_text(retrieved),
                items=tuple(p.key for p in retrieved)),
        Section("lore", "Lore", "\n".join(p.text for p in lore),
                items=tuple(p.key for p in lore)),
        Section("voices", VOICES_TITLE, "\n".join(p.text for p in voices),
                items=tuple(p.key for p in voices)),
        Section("avoid", "Phrases to avoid", inputs.avoid, pinned=True),
        Section("tools", "Notes from the planner's tools", bullets(inputs.tool_results),
                pinned=True),
        Section("intention", "This scene",
                intention_text(inputs.plan, inputs.memory, described=described, around=around,
                               room=room, count=count),
                pinned=True),
        Section("steer", "Author's note", inputs.steer, pinned=True),
    )


def _retrieved_text(pieces: Sequence[Piece]) -> str:
    """Scenes as blocks with a blank line before each; facts as lines under them."""
    out: list[str] = []
    for piece in pieces:
        if out and not piece.key.startswith("fact:"):
            out.append("")
        out.append(piece.text)
    return "\n".join(out)
