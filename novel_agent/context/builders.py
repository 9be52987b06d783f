"""What each stage's prompt is made of: pure functions of story data.

The planner, extractor and summarizer get a `Briefing` (briefing.py): fixed
sections plus pools of scored items (relevance.py) that the engine fills
best-first within their shares. The planner sees the story so far, the open
loops (overdue ones marked), the characters, places and relationships that
matter to the last scenes, and those scenes' summaries; the extractor the
plan, the names and loops it may match, and the new prose; the summarizer a
range of scenes (or summaries) and the summary so far. The writer's tiered
layout is in writer.py, which uses the scene, cast and intention texts made
here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from novel_agent.context.briefing import Briefing
from novel_agent.context.items import Item, Pool, choose
from novel_agent.context.presence import (
    GONE,
    GONE_SAID,
    called,
    gone,
    gone_forms,
    gone_people,
    gone_said,
    settled_card,
    status_since,
    status_text,
    whereabouts,
)
from novel_agent.context.relevance import (
    Focus,
    character_line,
    died,
    first_seen,
    recency,
    since,
)
from novel_agent.context.scene_pools import scene_loops, scene_names
from novel_agent.context.sections import Section, describe_character, describe_location, story_bible
from novel_agent.context.shortlist import (
    OpenLoops,
    column,
    in_view_at,
    person_then,
    place_then,
    relevant_loops,
    seen_after,
    seen_at,
    settled_pairs,
    settled_people,
    settled_places,
    where,
)
from novel_agent.story.decisions import Plan
from novel_agent.story.memory.records import Character, Entity, Relationship
from novel_agent.story.memory.store import Memory
from novel_agent.story.scenes import Scene, scene_key

# What stays put between ticks comes first (the prompt cache reuses it); what the last
# scenes change (their summaries, the loops, everyone's state now) comes last.
PLANNER_LAYOUT = ("bible", "overall", "characters", "locations", "relationships", "facts",
                  "recent", "loops", "lore", "now", "names", "outline", "steer")
EXTRACTOR_LAYOUT = ("characters", "loops", "plan", "beat", "scene")
SUMMARIZER_LAYOUT = ("bible", "previous", "scenes")
# The sections that change only when the anchor moves (at a checkpoint, or every few
# ticks): the prompt's stable prefix ends after them (context/stable.py).
PLANNER_STABLE = PLANNER_LAYOUT[:6]
PLANNER_GROWING = ("recent",)      # the scenes since the anchor, each appended as written
SUMMARIZER_STABLE = ("bible",)     # the same for every call of a checkpoint
# The most relevant items a planner section holds, whatever the budget: a briefing on
# the scene at hand, not a dump of memory (without these the planner's prompt grows
# with the book). Items neither in focus nor seen in the last ~20 ticks score under
# RELEVANT and are left out unless a section would otherwise be empty.
PLANNER_LIMITS = {"loops": 12, "characters": 12, "relationships": 12, "locations": 8,
                  "now": 12, "facts": 12, "lore": 8}
RELEVANT = 0.25
LOOPS_KEPT = 3       # the planner's loops section holds at least this many
EXTRACTOR_LIMITS = {"loops": 16, "characters": 40}
STATE_WORDS = 10     # of a state now, in the writer's brief when it has little room
PRESENT = 1e6        # the score of the POV in the writer's brief; the others present next
NAMED = 1e4          # what naming a dead or absent one in the intention adds to their score
OVERDUE_HEADER = ("(Loops marked OVERDUE have been open too long: this scene should pay one "
                  "off, or a tool call should resolve it.)")


def scene_summary(scene: Scene) -> str:
    head = f"Scene {scene.tick}" + (f" — {scene.title}" if scene.title else "")
    return f"{head}\n{scene.summary_text() or '(no summary)'}"


def scene_title(scene: Scene) -> str:
    return f"Scene {scene.tick}" + (f" — {scene.title}" if scene.title else "")


def scene_full(scene: Scene) -> str:
    head = f"### Scene {scene.tick}" + (f" — {scene.title}" if scene.title else "")
    return f"{head}\n\n{scene.body.strip()}"


ENDING_WORDS = 100    # the newest scene's ending, for a writer shown no whole scene


def scene_ending(scene: Scene, words: int = ENDING_WORDS) -> str:
    """The scene's last paragraphs, about `words` words of them (whole paragraphs; of a
    last paragraph longer than twice that, its last sentences): where the next scene
    goes on from, without a whole scene a small model would write again."""
    head = f"### Scene {scene.tick}" + (f" — {scene.title}" if scene.title else "")
    paragraphs = [p.strip() for p in scene.body.strip().split("\n\n") if p.strip()]
    kept: list[str] = []
    while paragraphs and sum(len(p.split()) for p in kept) < words:
        kept.insert(0, paragraphs.pop())
    if len(kept) == 1 and len(kept[0].split()) > 2 * words:
        said = re.split(r"(?<=[.!?])\s+", kept[0])
        tail: list[str] = []
        while said and sum(len(t.split()) for t in tail) < words:
            tail.insert(0, said.pop())
        kept = [("… " if said else "") + " ".join(tail)]
    elif paragraphs:
        kept[0] = "… " + kept[0]
    return f"{head}, its ending\n\n" + "\n\n".join(kept)


def shortened(text: str, words: int) -> str:
    """The first and last sentences of `text` within about `words` words."""
    sentences = [t for t in re.split(r"(?<=[.!?])\s+", text.strip()) if t]
    if len(text.split()) <= words or len(sentences) < 3:
        return " ".join(text.split()[:words]) + (" …" if len(text.split()) > words else "")
    return f"{sentences[0]} … {sentences[-1]}"


OPENING_WORDS = 20    # a summary in short: its heading and its first words


def tight_forms(text: str, words: int = OPENING_WORDS) -> tuple[str, ...]:
    """A summary's forms for a prompt squeezed into what its pinned parts leave: its
    first `words` words (its heading among them), then its heading alone (the scenes it
    tells: told, if not said)."""
    said = text.split()
    short = " ".join(said[:words]) + (" …" if len(said) > words else "")
    heading = text.strip().splitlines()[0] if text.strip() else ""
    return tuple(f for f in dict.fromkeys((short, heading)) if f and f != text)


def planner_focus(memory: Memory, recent: Sequence[Scene], tick: int,
                  overdue_after: int) -> Focus:
    """The planner's focus: who and where the last scenes were, the loops they touched."""
    ticks = {s.tick for s in recent}
    loops = [str(l.get("id")) for l in memory.open_loops()     # (isdisjoint: no set made)
             if not ticks.isdisjoint(l.get("scenes") or ())
             and ticks & {t for t in l.get("scenes") or [] if isinstance(t, int)}]
    return Focus.of(tick, [n for s in recent for n in (s.pov, *s.characters)],
                    [s.location for s in recent], loops, overdue_after)


def planner_briefing(story: Any, memory: Memory, recent: Sequence[Scene], *, tick: int,
                     shares: Mapping[str, float], overall_summary: str = "", steer: str = "",
                     max_tools: int = 3, overdue_after: int = 30, focus_count: int = 0,
                     anchor_tick: int | None = None, history: Sequence[Scene] = (),
                     facts: Sequence[Item] = (), lore: Sequence[Item] = (),
                     story_so_far: Sequence[tuple[str, str]] | None = None,
                     remember: Callable[[Any, Callable[[], Any]], Any] | None = None,
                     names: str = "") -> Briefing:
    """What the planner sees before it decides the next scene.

    The characters, places and relationships sections are chosen as of `anchor_tick`
    (a tick that moves every few ticks; `history` is the scenes up to it): what existed
    then, for the last `focus_count` scenes before it, without anyone's state. They stay
    the same from tick to tick, so a prompt cache can reuse them. `recent` (the scenes
    since the anchor's, each appended as it is written) follows them, then the open
    loops and "where things stand": who is in the last `focus_count` scenes with their
    state now, and who and what is new since the anchor. Without an anchor, it is the
    last tick. `facts` (about who and what the scenes up to the anchor are about, chosen
    as of it, laid out with the settled sections) and `lore` (entries that fire) are
    scored by the caller (retrieve.py). `story_so_far`, (name, text) of the summaries
    that tell the story up to the first of `recent` (the caller's cut through the
    summary tree), stands for `overall_summary` when given: every scene is then told
    once, by a summary or by its own, and never left out (titles at the least).
    `remember` (Session.remembered): the characters and places chosen for an anchor are
    kept until it moves, not chosen again each tick from every one of them: what a tick
    adds to someone already known (a trait, a fuller name) shows when the anchor next
    moves, with the rest of the settled part; an edit by hand at once (the session
    forgets what it kept). `names`: the book's names offered for newcomers (names.yaml),
    pinned before the author's note."""
    if anchor_tick is None:
        history, anchor_tick = recent, tick - 1
    count = focus_count or len(recent)
    last, before = recent[len(recent) - count:], history[len(history) - count:]
    # the open loops read once: the ones the last scenes and those before the settled
    # tick played in (planner_focus's), and for the loops section (relevant_loops)
    opened = OpenLoops(memory, Focus(tick, overdue_after=overdue_after),
                       {s.tick for s in last}, {s.tick for s in before})
    focus = Focus.of(tick, [n for s in last for n in (s.pov, *s.characters)],
                     [s.location for s in last], opened.touched[0], overdue_after)
    settled = Focus.of(anchor_tick + 1, [n for s in before for n in (s.pov, *s.characters)],
                       [s.location for s in before], opened.touched[1], overdue_after)
    told = story_so_far is not None
    scenes = [Item(scene_key(s.tick), (scene_summary(s), scene_title(s)), float(s.tick),
                   (s.tick,), keep=told, why="recent scene") for s in recent]
    overall = [Item("overall", (overall_summary, shortened(overall_summary, 80)), 10.0,
                    keep=True, why="the story so far")] if overall_summary.strip() else []
    if story_so_far is not None:
        # laid out in story order, taken newest first: when the share runs out, the
        # oldest are told in short (detail never grows going back in time)
        overall = [Item(name, (text, shortened(text, 80)), 10.0 + n / 1000, (n,), keep=True,
                        why="the story so far", tight=tight_forms(text))
                   for n, (name, text) in enumerate(story_so_far)]
    # Filled in this order, each with its share and what the ones before it left unused:
    # what is chosen as of the settled tick first, then the recent scenes, so the room
    # each of these gets does not move with the loops and the states of the last scenes
    # (which change every tick) and their text stays put for the prompt cache.
    # (each as bounded(...) of all of memory would choose, memory read once: shortlist.py)
    def cast() -> tuple[tuple[tuple[Item, ...], int], tuple[tuple[Item, ...], int]]:
        return (settled_people(memory, history, anchor_tick, settled, RELEVANT),
                settled_places(memory, history, anchor_tick, settled, RELEVANT))

    key = ("planner_cast", anchor_tick, settled,
           tuple((s.tick, s.pov, tuple(s.characters), s.location) for s in history))
    (people, people_unlisted), (places, places_unlisted) = \
        remember(key, cast) if remember is not None else cast()
    pairs, pairs_unlisted = settled_pairs(memory, anchor_tick, settled, RELEVANT)
    loops = relevant_loops(memory, focus, RELEVANT, LOOPS_KEPT, opened=opened)
    pools = (
        Pool("overall", "The story so far", tuple(overall), shares["overall"]),
        Pool("characters", "Characters", people, shares["characters"],
             limit=PLANNER_LIMITS["characters"], min_score=RELEVANT, unlisted=people_unlisted),
        Pool("relationships", "Relationships", pairs, shares["relationships"],
             limit=PLANNER_LIMITS["relationships"], min_score=RELEVANT,
             unlisted=pairs_unlisted),
        Pool("locations", "Known locations", places, shares["locations"],
             limit=PLANNER_LIMITS["locations"], min_score=RELEVANT, unlisted=places_unlisted),
        Pool("facts", "What is known", tuple(facts), shares["facts"],
             limit=PLANNER_LIMITS["facts"]),
        Pool("recent", "Recent scenes", tuple(scenes), shares["recent"], joiner="\n\n"),
        Pool("loops", "Open plot loops", loops.items, shares["loops"],
             min_items=LOOPS_KEPT, header=OVERDUE_HEADER if loops.any_overdue else "",
             limit=PLANNER_LIMITS["loops"], min_score=RELEVANT, unlisted=loops.unlisted),
        Pool("lore", "Lore", tuple(lore), shares["lore"], limit=PLANNER_LIMITS["lore"]),
        Pool("now", "Where things stand", tuple(now_items(memory, focus, anchor_tick)),
             shares["now"], limit=PLANNER_LIMITS["now"]),
    )
    fixed = (Section("bible", "Story bible", story_bible(story), pinned=True),
             Section("names", "Names for newcomers", names, pinned=True),
             Section("steer", "Author's note", steer, pinned=True))
    # every pool fills its share whatever the compaction thresholds say: the shares, not
    # the thresholds (which steer the writer's recent tiers), bound the planner's prompt
    return Briefing("planner", fixed, pools, PLANNER_LAYOUT,
                    {"tick": tick, "max_tools": max_tools, "first_scene": tick == 1,
                     "anyone_gone": any(map(gone, memory.characters.values()))},
                    truncatable=("overall",), elastic=tuple(p.name for p in pools))


def as_of(memory: Memory, scenes: Sequence[Scene], tick: int) -> Memory:
    """Memory as the planner's settled sections see it at `tick`: the characters, places
    and relationships that existed then, without states, each last seen when `scenes`
    (those up to `tick`) last show it; so what later scenes do cannot move them."""
    seen = seen_at(scenes)
    people = {key: person_then(c, seen, tick) for key, c in memory.characters.items()
              if first_seen(c) <= tick}
    places = {key: place_then(loc, seen) for key, loc in memory.locations.items()
              if first_seen(loc) <= tick}
    pairs: list[Relationship] = [{**rel, "updated_in": since(rel)} for rel in memory.relationships
                                 if since(rel) <= tick]
    return Memory(characters=people, locations=places, relationships=pairs)


def now_items(memory: Memory, focus: Focus, anchor_tick: int) -> list[Item]:
    """Who is in the last scenes, with their state now (where they were last, what they
    hold), then who died or left since `anchor_tick` and the characters and places new
    since then (the settled sections do not have them yet). The recently dead score
    higher (relevance.died): chosen like the rest, never kept whatever the room."""
    items = []
    people = list(memory.characters.values())    # (each asked by a pass over a column)
    in_view = in_view_at(people, focus.names)
    news = gone_since(people, anchor_tick)
    new = set(seen_after(people, anchor_tick))
    for n in sorted(in_view.union(new, news)):
        c, seen = people[n], n in in_view
        if n not in news and n not in new and not says_now(c):
            continue      # their line would be their settled card again, word for word
        if n not in news and "status_how" in c:    # (the settled card says how)
            c = cast(Character, {k: v for k, v in c.items() if k != "status_how"})
        items.append(Item(f"now:{c.get('id')}", (character_line(c, 0), character_line(c),
                                                 called(c)),
                          (3.0 if seen else 2.0 if n in news else 1.0)
                          + recency(focus.tick, c.get("last_seen")) + died(c, focus.tick),
                          (first_seen(c), str(c.get("id"))),
                          why="in the last scenes" if seen else
                          f"{gone(c)} since tick {anchor_tick}" if n in news else
                          f"new since tick {anchor_tick}"))
    places = list(memory.locations.values())
    for loc in map(places.__getitem__, seen_after(places, anchor_tick)):
        items.append(Item(f"now:{loc.get('id')}", ("Place: " + describe_location(loc),
                                                   str(loc.get("name"))),
                          1.0, (first_seen(loc), str(loc.get("id"))),
                          why=f"new since tick {anchor_tick}"))
    return items


def says_now(c: Character) -> bool:
    """Whether a character's line in "Where things stand" says more than their settled
    card: a state, a death or an absence, where they were last or what they hold."""
    return bool(c.get("state") or gone(c) or whereabouts(c))


def gone_since(people: Sequence[Character], tick: int) -> set[int]:
    """The positions of the `people` dead or absent since after `tick` (the planner's
    settled cards, as of `tick`, do not say so)."""
    return {n for n in where(GONE.__contains__, column(people, "status"))
            if status_since(people[n]) > tick}


def _first_seen(entity: Entity) -> tuple[int, str]:
    return (int(entity.get("first_seen") or 0), str(entity.get("id", "")))


def cast_section(memory: Memory, ensemble: Sequence[str] = (),
                 places: Sequence[str] = (), tick: int = 0, bare: bool = False) -> Section:
    """Profiles of the characters and places of the given (anchor) scenes, up to `tick`
    (with `bare`, their names alone, "(dead)" or "(absent)" after a name when so).

    Stable on purpose, for prefix caching: profiles without current states, where
    each is or what each holds, dead or absent only if so by `tick`; ordered by first
    appearance. Who is POV, where the scene is, everyone's state now, and anyone not
    profiled here go in the volatile tail (`intention_text`).
    """
    people = {}
    for name in ensemble:
        c = memory.find_character(name)
        if c is not None:
            people[c.get("id")] = c
    locations = {}
    for name in places:
        loc = memory.find_location(name)
        if loc is not None:
            locations[loc.get("id")] = loc
    ordered = sorted(people.values(), key=_first_seen)
    # (how one died or left is the brief's to say: intention_text, gone_sentences)
    cards = [settled_card(cast(Character, {k: v for k, v in c.items()
                                           if k not in ("state", "status_how")}), tick)
             for c in ordered]
    names = tuple(str(c.get("name")) for c in ordered) \
        + tuple(str(l.get("name")) for l in locations.values())
    if bare:
        return Section("cast", "Who and where", ", ".join(
            [*map(called, cards), *names[len(cards):]]), items=names)
    lines = [*map(describe_character, cards)]
    lines += [f"Place: {describe_location(l)}" for l in sorted(locations.values(), key=_first_seen)]
    return Section("cast", "Who and where", "\n".join(lines), items=names)


def intention_text(plan: Plan, memory: Memory | None = None, described: Sequence[str] = (),
                   around: Sequence[str] = (), *, room: int | None = None,
                   count: Callable[[str], int] | None = None) -> str:
    """The scene to write: title, intention, POV, place, who is present and their state now
    (where each was last, what each holds), then who of them and of `around` (the
    people of the scenes the prompt tells) is dead or away (presence.gone_sentences).

    Characters and the place not already profiled in `described` get their profile here.
    With `room` (tokens, counted by `count`), what it tells of the people is chosen as
    items within it (`brief_items`), best first, each in the richest form that still
    fits: the brief does not grow with the cast. Without it, all of it in full.
    """
    known = {d.lower() for d in described}
    others = [n for n in plan.characters if n.lower() != plan.pov.lower()]
    people = [memory.find_character(n) for n in dict.fromkeys(
        [plan.pov, *plan.characters, *around])] if memory is not None else []
    gone_ones = gone_people([c for c in people if c is not None], [plan.pov, *plan.characters])
    items = brief_items(plan, memory, known, gone_ones)
    chosen = {item.key: 0 for item in items}
    if room is not None and count is not None:
        frame = sum(count(f" are {word} {rest}.") for status, (word, rest) in GONE_SAID.items()
                    if any(gone(c) == status for c in gone_ones))
        taken, _, _ = choose(Pool("brief", "", tuple(items), 0, min_items=0),
                             max(0, room - frame), 0, count)
        chosen = {item.key: form for item, form in taken}

    def who(key: str, name: str) -> str:
        item = next((i for i in items if i.key == key), None)
        return item.forms[chosen.get(key, -1)] if item is not None else name

    lines = [f"Scene intention: {plan.intention}", f"POV: {who('who:0', plan.pov)}"]
    loc = memory.find_location(plan.location) if memory is not None else None
    lines.append("Location: " + (describe_location(loc) if loc and str(loc.get("name", "")).lower()
                                 not in known else plan.location))
    if others:
        lines.append("Also present: " + "; ".join(who(f"who:{n + 1}", name)
                                                  for n, name in enumerate(others)))
    lines += gone_said([(gone(c), *gone_forms(c)[chosen[f"gone:{c.get('id')}"]])
                        for c in gone_ones if f"gone:{c.get('id')}" in chosen])
    if plan.title:
        lines.insert(0, f"Title: {plan.title}")
    return "\n".join(lines)


def brief_items(plan: Plan, memory: Memory | None, known: Collection[str],
                gone_ones: Sequence[Character]) -> list[Item]:
    """What the brief tells of the people, as items: the POV and each other one present
    (kept: their barest form is the name, which the brief must say), a card (or their
    state and whereabouts, when the cast profiles them) -> their state in short -> the
    name; then each dead or absent one (`gone_ones`), how and since when -> since when
    -> the name, one the intention names first, then the most recently gone (the best
    of them kept: the brief names one whatever its room)."""
    others = [n for n in plan.characters if n.lower() != plan.pov.lower()]
    items = []
    for n, name in enumerate([plan.pov, *others]):
        c = memory.find_character(name) if memory is not None else None
        forms = person_forms(c, name.lower() in known) if c is not None else (name,)
        items.append(Item(f"who:{n}", forms, PRESENT - n, (0, n), keep=True))
    named = set(re.findall(r"[\w'’-]+", plan.intention))
    gone_items = [Item(f"gone:{c.get('id')}", tuple(a + b for a, b in gone_forms(c)),
                       float(bool(named.intersection(str(c.get("name")).split()))) * NAMED
                       + status_since(c), (1, n)) for n, c in enumerate(gone_ones)]
    best = max(gone_items, key=lambda i: i.score, default=None)   # said whatever the room
    return items + [replace(i, keep=True) if i is best else i for i in gone_items]


def person_forms(c: Character, described: bool) -> tuple[str, ...]:
    """One present in the scene, rich to bare: their card (or, `described` by the cast
    section already, their state now and whereabouts), their state in short, the name."""
    name = str(c.get("name"))
    marks = [status_text(c, how=False)] if gone(c) else []
    state = str(c.get("state") or "") if gone(c) != "dead" else ""
    full = describe_character(c) if not described else name + (
        f" ({'; '.join([*marks, *([f'now: {state}'] if state else []), *whereabouts(c)])})"
        if marks or state or whereabouts(c) else "")
    words = state.split()
    short = [*marks, *([f"now: {' '.join(words[:STATE_WORDS])}"
                        + (" …" if len(words) > STATE_WORDS else "")] if state else [])]
    lean = name + (f" ({'; '.join(short)})" if short else "")
    return tuple(dict.fromkeys((full, lean, name)))


def extractor_briefing(story: Any, memory: Memory, plan: Plan, prose: str, *, tick: int,
                       shares: Mapping[str, float], knowledge: bool = True) -> Briefing:
    """What the extractor sees: the plan, the known names and open loops it may match
    (those of the scene first), and the prose; `knowledge`: whether it is asked for the
    continuity audit's keys too."""
    words = set(re.findall(r"[a-z]{5,}", prose.lower()))
    focus = Focus.of(tick, [plan.pov, *plan.characters], [plan.location])
    # every open loop and character scored, the best made into entries (shortlist.py)
    loops, more_loops = scene_loops(memory, focus, words, 2 * EXTRACTOR_LIMITS["loops"])
    names, more_names = scene_names(memory, focus, 2 * EXTRACTOR_LIMITS["characters"])
    pools = (
        Pool("plan", "What the scene was meant to do",
             (Item("plan", (intention_text(plan), plan.intention), 10.0, keep=True,
                   why="the plan"),), shares["plan"]),
        Pool("loops", "Open plot loops", (), shares["loops"], min_items=3,
             limit=EXTRACTOR_LIMITS["loops"], entries=loops, tail=more_loops),
        Pool("characters", "Known characters", (), shares["characters"],
             joiner=", ", limit=EXTRACTOR_LIMITS["characters"], entries=names,
             tail=more_names),
    )
    fixed = (Section("scene", f"Scene {tick}", prose.strip(), pinned=True),)
    return Briefing("extractor", fixed, pools, EXTRACTOR_LAYOUT,
                    {"tick": tick, "knowledge": knowledge}, truncatable=("scene",))


def summarizer_briefing(story: Any, scenes: Sequence[Scene], *, first: int, last: int,
                        shares: Mapping[str, float], previous: str = "",
                        kind: str = "checkpoint") -> Briefing:
    """What the summarizer sees: the scenes of a range, each in full text if the share
    allows, else as its bullets, else its title; and the summary so far."""
    items = tuple(Item(scene_key(s.tick), (scene_full(s), scene_summary(s), scene_title(s)),
                       1.0, (s.tick,), keep=True, why="in the range") for s in scenes)
    return _summary_briefing(story, items, first, last, shares, previous, kind)


def summaries_briefing(story: Any, docs: Sequence[Any], *, first: int, last: int,
                       shares: Mapping[str, float], previous: str = "",
                       kind: str = "arc") -> Briefing:
    """What the summarizer sees to condense summaries (arcs, the overall summary)."""
    items = tuple(Item(d.name, (d.block(), d.block().splitlines()[0]), 1.0, (d.first,),
                       keep=True, why="in the range") for d in docs)
    return _summary_briefing(story, items, first, last, shares, previous, kind)


def _summary_briefing(story: Any, items: tuple[Item, ...], first: int, last: int,
                      shares: Mapping[str, float], previous: str, kind: str) -> Briefing:
    before = (Item("previous", (previous, shortened(previous, 80)), 1.0, keep=True,
                   why="the summary so far"),) if previous.strip() else ()
    pools = (Pool("scenes", f"Scenes {first}–{last}", items, shares["scenes"],
                  joiner="\n\n"),
             Pool("previous", "Summary so far", before, shares["previous"]))
    fixed = (Section("bible", "Story bible", story_bible(story), pinned=True),)
    return Briefing("summarizer", fixed, pools, SUMMARIZER_LAYOUT,
                    {"first": first, "last": last, "kind": kind},
                    truncatable=("scenes", "previous"), elastic=("scenes", "previous"))
