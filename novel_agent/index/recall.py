"""Gathering what retrieval, the lorebook and the recall probe score: the index's edge.

For the writer, `WriterRecall` asks the index for older scenes and facts that
may matter to the planned scene (a BM25 match with the intention, the title,
the steer note and the plan's names; the scenes of the loops the plan touches
and their facts; the scenes just before the recent tiers; anything pinned),
adds embedding similarity when embeddings are on, and scores them with
context/retrieval.py. For the planner, `planner_facts` does the same for the
facts about who and what the last scenes are about. `lore_items` turns the
lorebook entries that fire into Items. `recall_probe` lists the known facts
relevant to the scene and says how many reached the writer's prompt.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import Any, cast

from novel_agent.audit.knowledge import knows
from novel_agent.context.items import Item
from novel_agent.context.retrieval import RELEVANT, Candidate, Need, Scored, fact_form, retrieval_items, score
from novel_agent.context.retrieval import named as named_in
from novel_agent.context.shortlist import all_of, where
from novel_agent.errors import ModelError
from novel_agent.index.db import Index
from novel_agent.index.embeddings import Embedder
from novel_agent.index.search import (
    Row,
    any_of,
    bm25,
    by_spread,
    fact_rows_of_scenes,
    information,
    information_upto,
    newest,
    pinned_rows,
    scene_rows,
    told_by,
    words,
)
from novel_agent.story.decisions import Plan
from novel_agent.story.lore import Lorebook, entry_text
from novel_agent.story.memory.records import Loop
from novel_agent.story.memory.store import Memory, touched_loops
from novel_agent.story.scenes import scene_key
from novel_agent.text.names import normalize_name

NEAR = 30            # scenes just before the recent tiers that are always candidates
BM25_LIMIT = 200
NEWEST = 120         # documents naming the main cast, newest first
NEWEST_EACH = 40     # ... and naming each of the scene's people and its place
TOGETHER = 120       # ... and naming one of them with its place or a word of its intention
LOOP_SCENES = 40     # at most this many scenes of the touched loops (the newest)
TOUCHED = 0.3        # what a scene that played a loop (not opened it) says of it
# The settled block keeps what scores this share of its best or more: its best are the
# scenes of the settled window themselves, and the room is there to fill.
SETTLED_NEAR_BEST = 0.05


def plan_loops(plan: Plan, memory: Memory) -> list[Loop]:
    """The open loops the plan touches: named by its tool calls, or by words of its
    intention and title that tell the loop apart from the others (story/memory/store.touches)."""
    found: dict[str, Loop] = {}
    for call in plan.tool_calls:
        if call.tool in ("resolve_loop", "open_loop"):
            loop = memory.find_loop(call.name) or memory.find_loop(call.target)
            if loop is not None:
                found[str(loop.get("id"))] = loop
    for loop in touched_loops(memory, f"{plan.title} {plan.intention}"):
        found.setdefault(str(loop.get("id")), loop)
    return list(found.values())


def loop_scenes(loops: Iterable[Loop]) -> dict[int, float]:
    """The scenes of `loops` with how much each says of them: 1 for the scene that opened
    a loop (where the question arose), TOUCHED for the others (the newest LOOP_SCENES)."""
    strength: dict[int, float] = {}
    for loop in loops:
        for t in loop.get("scenes") or []:
            if isinstance(t, int) and not isinstance(t, bool):
                strength[t] = max(strength.get(t, 0.0), TOUCHED)
        if isinstance(loop.get("opened_in"), int):
            strength[loop["opened_in"]] = 1.0
    kept = sorted(strength)[-LOOP_SCENES:]
    return {t: strength[t] for t in kept}


def shared_first_names(memory: Memory) -> set[str]:
    """First names more than one known character has (counted without a Python step a
    character: every one is asked each tick)."""
    people = memory.characters.values()
    seen = Counter(map(_first_name, map(str, map(dict.get, cast(Iterable[dict[str, Any]], people),
                                                   repeat("name"), repeat("")))))
    return {first for first, n in seen.items() if n > 1 and first is not None}


@functools.lru_cache(maxsize=1 << 16)
def _first_name(name: str) -> str | None:
    """The first word of a name of two words or more (normalized), else None: every
    character's name is asked each tick."""
    words_ = normalize_name(name).split()
    return words_[0] if len(words_) > 1 else None


def names_of(memory: Memory, names: Iterable[str]) -> list[str]:
    """Names as the index may hold them: each name, the known full name and aliases."""
    out: dict[str, None] = {}
    for name in names:
        if not name:
            continue
        out.setdefault(name, None)
        known = memory.find_character(name) or memory.find_location(name)
        for other in [known.get("name"), *(known.get("aliases") or [])] if known else []:
            out.setdefault(str(other), None)
    return list(out)


def candidate(row: Row, score: float = 0.0) -> Candidate:
    """A scene or fact row as a retrieval candidate."""
    meta = row.meta
    if row.kind == "scene":
        return Candidate(scene_key(row.tick or 0), "scene", row.tick or 0, row.title, row.body,
                         tuple(meta.get("summary") or ()), meta.get("pov") or "",
                         meta.get("location") or "", tuple(meta.get("characters") or ()),
                         meta.get("pinned") is True, score)
    return Candidate(row.key, "fact", row.tick or 0, text=meta.get("text") or row.body,
                     pinned=meta.get("pinned") is True, bm25=score)


def gather(index: Index, terms: Sequence[str], *, names: Sequence[str] = (),
           scenes_before: int, facts_before: int,
           extra_ticks: Iterable[int] = (), together: str = "",
           rare: Sequence[str] | None = None) -> list[Candidate]:
    """Candidates: the BM25 matches of the `terms` that tell documents apart (in at most
    a tenth of them: see search.by_spread), the newest
    documents naming any of `names` (the scene's people and place), the scenes in
    `extra_ticks` and their facts, the NEAR scenes before `scenes_before`, and what is
    pinned (deduplicated, best BM25); and the newest matching `together` (the scene's
    people and its place in one document: however many newer documents name the place
    or the protagonist alone, what happened to them there stays a candidate). `rare`:
    by_spread's rare terms of `terms`, when the caller has them."""
    found: dict[str, Candidate] = {}

    def add(rows: Iterable[Row]) -> None:
        for row in rows:
            limit = scenes_before if row.kind == "scene" else facts_before
            if row.tick is None or row.tick >= limit:
                continue
            c = candidate(row, row.score)
            if c.key not in found or found[c.key].bm25 < c.bm25:
                found[c.key] = c

    if rare is None:
        rare, _ = by_spread(index, list(dict.fromkeys(t for t in terms if t)))
    add(bm25(index, any_of(rare), ("scene", "fact"), BM25_LIMIT, before=facts_before,
             snippets=False))
    add(newest(index, any_of(names), ("scene", "fact"), NEWEST, before=facts_before))
    for name in names:       # the protagonist's many documents do not crowd out the others'
        add(newest(index, any_of([name]), ("scene", "fact"), NEWEST_EACH, before=facts_before))
    add(newest(index, together, ("scene", "fact"), TOGETHER, before=facts_before))
    extra = sorted(set(extra_ticks))
    add(r for t in extra for r in scene_rows(index, t, t))
    add(fact_rows_of_scenes(index, extra))
    add(scene_rows(index, max(1, scenes_before - NEAR), scenes_before - 1))
    add(pinned_rows(index))
    return list(found.values())


def with_similarity(candidates: list[Candidate], query: str, embedder: Embedder | None,
                    warnings: list[str]) -> list[Candidate]:
    """The candidates with their embedding similarity to `query` (unchanged when
    embeddings are off or fail: the failure becomes a warning)."""
    if embedder is None or not candidates:
        return candidates
    texts = [c.text if c.kind == "fact" else "\n".join([c.title, *c.summary]) or c.text[:2000]
             for c in candidates]
    try:
        sims = embedder.similarities(query, texts)
    except ModelError as exc:
        warnings.append(f"{exc}; retrieval went on without embeddings")
        return candidates
    return [Candidate(**{**c.__dict__, "similarity": s}) for c, s in zip(candidates, sims)]


def topic_words(text: str, names: Sequence[str]) -> list[str]:
    """The content words of `text`, less the words of `names` (who and where are scored
    on their own, by how much each name tells)."""
    skip = {w for name in names for w in words(name)}
    return [w for w in words(text) if w not in skip]


def who_where(memory: Memory, plan: Plan, said: Sequence[str] = ()) -> str:
    """An FTS query for documents naming one of the scene's people and its place or one of
    the words `said` (what the scene is about); "" when there is neither."""
    people = names_of(memory, [plan.pov, *plan.characters])
    place = [*names_of(memory, [plan.location]), *said]
    return f"({any_of(people)}) AND ({any_of(place)})" if people and place else ""


def plan_need(index: Index, plan: Plan, memory: Memory, tick: int, *,
              loops: Sequence[Loop] | None = None,
              shared: set[str] | None = None) -> tuple[Need, list[str]]:
    """What the planned scene is about, each name weighted by how much it tells, and the
    names as the index may hold them (aliases too). `loops` and `shared`: plan_loops and
    shared_first_names, when the caller has them."""
    people = [n for n in [plan.pov, *plan.characters] if n]
    names = names_of(memory, [*people, plan.location])
    tells = information(index, [*people, plan.location] if plan.location else people)
    need = Need.of(tick, plan.pov, people, plan.location,
                   loop_scenes(plan_loops(plan, memory) if loops is None else loops), tells,
                   shared_first_names(memory) if shared is None else shared)
    return need, names


@dataclass
class WriterRecall:
    """Retrieval for one writer prompt: candidates gathered once the recent tiers are known."""

    index: Index
    plan: Plan
    memory: Memory
    steer: str
    tick: int
    weights: Mapping[str, float]
    embedder: Embedder | None = None
    warnings: list[str] = field(default_factory=list)
    scored: list[Scored] = field(default_factory=list)
    loops: Sequence[Loop] | None = None   # plan_loops, when the caller has them
    shared: set[str] | None = None                  # shared_first_names, likewise

    def __call__(self, in_tiers: set[int], full: set[int]) -> list[Item]:
        """Items for the `retrieved` section, given the ticks the recent tiers hold (and
        those in full text)."""
        need, names = plan_need(self.index, self.plan, self.memory, self.tick,
                                loops=self.loops, shared=self.shared)
        terms = topic_words(f"{self.plan.title} {self.plan.intention} {self.steer}", names)
        first = min(in_tiers, default=self.tick)
        rare, _ = by_spread(self.index, list(dict.fromkeys(t for t in terms if t)))
        found = gather(self.index, terms, names=names, scenes_before=first,
                       facts_before=self.tick, extra_ticks=need.loop_scenes,
                       together=who_where(self.memory, self.plan, rare), rare=rare)
        found = with_similarity(found, f"{self.plan.title}\n{self.plan.intention}\n{self.steer}",
                                self.embedder, self.warnings)
        self.scored = score(found, need, self.weights)
        items = retrieval_items(self.scored, exclude_scenes=in_tiers, exclude_facts=full)
        return pov_knowledge(items, self.scored, self.memory, self.plan.pov)


def pov_knowledge(items: list[Item], scored: Sequence[Scored], memory: Memory,
                  pov: str) -> list[Item]:
    """The facts the POV character never witnessed nor was told (audit/knowledge.py: a
    fact's `witnesses`), marked as such ("Mara does not know (scene 12): ..."), so the
    writer uses them without leaking them into the POV's thoughts; the rest as they are."""
    if not pov:
        return items
    texts = {s.candidate.key: s.candidate for s in scored if s.candidate.kind == "fact"}
    wanted = {texts[i.key].text.strip().lower() for i in items if i.key in texts}
    # the facts of those texts (the last of a text, as a dict of every fact's would have
    # it), each text lowered by a pass over the column: no call of ours for each fact
    facts = memory.facts if wanted else []
    told = list(map(dict.get, cast(list[dict[str, Any]], facts), repeat("text"), repeat("")))
    said = list(map(_lowered_text if all_of(str, told) else _lowered, told))
    by_text = {said[n]: facts[n] for n in where(wanted.__contains__, said)}
    who = pov.split()[0]
    out = []
    for item in items:
        c = texts.get(item.key)
        fact = by_text.get(c.text.strip().lower()) if c is not None else None
        if c is not None and fact is not None and not knows(memory, pov, fact):
            item = replace(item, forms=(f"- {who} does not know (scene {c.tick}): {c.text}",),
                           why=f"{item.why}; unknown to {who}".lstrip("; "))
        out.append(item)
    return out


def _lowered(text: Any) -> str:
    """str(text).strip().lower(), kept for the texts last asked (every fact, each tick)."""
    return _lowered_text(text) if type(text) is str else str(text).strip().lower()


@functools.lru_cache(maxsize=1 << 15)
def _lowered_text(text: str) -> str:
    return text.strip().lower()


def settled_items(index: Index, memory: Memory, window: Sequence[Any], upto: int,
                  weights: Mapping[str, float]) -> list[Item]:
    """The older scenes and facts about who and where the scenes of `window` (those just
    before `upto`, the tick tier 3 ends at) are, and the loops they played in: scored as
    retrieval scores them, from what the index holds up to `upto` only. So they are the
    same at every tick until `upto` moves, whatever the scenes after it bring: the
    writer's settled block, laid out before the recent tiers and kept byte for byte."""
    if upto < 1 or not window:
        return []
    people = list(dict.fromkeys(n for s in window for n in (s.pov, *s.characters) if n))
    places = list(dict.fromkeys(s.location for s in window if s.location))
    strength = {t: v for t, v in loop_scenes(settled_loops(memory, window, upto)).items()
                if t <= upto}
    found: dict[str, Candidate] = {}
    rows = [r for name in [*people, *places]
            for r in told_by(index, any_of([name]), ("scene", "fact"), NEWEST_EACH, upto)]
    rows += fact_rows_of_scenes(index, strength) + [r for t in sorted(strength)
                                                     for r in scene_rows(index, t, t)]
    for row in rows:
        found.setdefault(row.key, candidate(row))
    firsts = [normalize_name(n).split()[0] for n in people if normalize_name(n)]
    need = Need.of(upto + 1, window[-1].pov, [*people, *places], window[-1].location,
                   strength, information_upto(index, [*people, *places], upto),
                   {f for f in firsts if firsts.count(f) > 1})
    return retrieval_items(score(found.values(), need, weights), near_best=SETTLED_NEAR_BEST)


def settled_loops(memory: Memory, window: Sequence[Any], upto: int) -> list[Loop]:
    """The loops the scenes of `window` played in, as `settled_items` reads them: each
    its scenes up to `upto` and the scene it opened in (what a cache of the settled
    block is keyed by, with `upto` and the window's scenes)."""
    ticks = {s.tick for s in window}
    return [cast(Loop, {"scenes": [t for t in l.get("scenes") or [] if isinstance(t, int) and t <= upto],
                        "opened_in": l.get("opened_in")})
            for l in memory.loops if not ticks.isdisjoint(l.get("scenes") or [])]


def planner_facts(index: Index, memory: Memory, *, tick: int, names: Sequence[str],
                  places: Sequence[str], loops: Sequence[Loop], steer: str,
                  weights: Mapping[str, float]) -> list[Item]:
    """Facts about who and where the last scenes are, and the loops they touch, scored
    for the planner (best first; the pool takes what fits)."""
    ticks = loop_scenes(loops)
    known = names_of(memory, [*names, *places])
    terms = topic_words(" ".join([steer, *(str(l.get("description", "")) for l in loops)]),
                        known)
    found = [c for c in gather(index, terms, names=known, scenes_before=0, facts_before=tick,
                               extra_ticks=ticks) if c.kind == "fact"]
    people = list(dict.fromkeys(n for n in names if n))
    place = places[-1] if places else ""
    need = Need.of(tick, "", people, place, ticks,
                   information(index, [*people, *([place] if place else [])]),
                   shared_first_names(memory))
    return [Item(s.candidate.key, (fact_form(s.candidate),), round(s.score, 3),
                 (s.candidate.tick, s.candidate.key), why=s.why)
            for s in score(found, need, weights) if s.score >= RELEVANT]


def lore_items(book: Lorebook, texts: Sequence[str]) -> list[Item]:
    """The entries that fire for `texts`: full content, then its first sentence; scored by
    priority (laid out by priority too)."""
    items = []
    for entry, why in book.fired(texts):
        text = entry_text(entry)
        first = text.split(". ")[0].rstrip(".") + "." if ". " in text else text
        forms = (text, first) if first != text else (text,)
        items.append(Item(f"lore:{entry.key}", forms, float(entry.priority),
                          (-entry.priority, entry.key), keep=entry.always, why=why))
    return items


@dataclass(frozen=True)
class Recall:
    """The live recall probe of one writer prompt."""

    relevant: int
    reached: int
    missed: tuple[str, ...] = ()

    @property
    def share(self) -> float | None:
        return self.reached / self.relevant if self.relevant else None

    def to_dict(self) -> dict[str, Any]:
        return {"relevant": self.relevant, "reached": self.reached,
                "share": None if self.share is None else round(self.share, 4),
                "missed": list(self.missed[:5])}


def relevant_facts(index: Index, plan: Plan, memory: Memory, tick: int, *,
                   loops: Sequence[Loop] | None = None,
                   shared: set[str] | None = None) -> list[Candidate]:
    """The known facts relevant to the planned scene: those naming someone in it and
    either its place or a word of its intention that tells documents apart (not a name,
    not a word in more than a tenth of them: the words retrieval ranks by); those
    established in the scene that opened a loop the plan touches; and those pinned.
    `loops` and `shared`: plan_loops and shared_first_names, when the caller has them."""
    people = names_of(memory, [plan.pov, *plan.characters])
    place = names_of(memory, [plan.location])
    said, _ = by_spread(index, topic_words(f"{plan.title} {plan.intention}", [*people, *place]))
    need = Need.of(tick, plan.pov, [plan.pov, *plan.characters], plan.location,
                   loop_scenes(plan_loops(plan, memory) if loops is None else loops),
                   shared_first=shared_first_names(memory) if shared is None else shared)
    query = f"({any_of(people)}) AND ({any_of([*place, *said])})" if people and (place or said) \
        else ""
    rows = newest(index, f"kind : fact AND {query}", ("fact",), 1000, before=tick) \
        if query else []
    rows += fact_rows_of_scenes(index, [t for t, s in need.loop_scenes.items() if s == 1.0 and t < tick])
    rows += [r for r in pinned_rows(index, ("fact",)) if (r.tick or 0) < tick]
    out: dict[str, Candidate] = {}
    for row in rows:
        c = candidate(row)
        text = f" {normalize_name(c.text)} "
        named = bool(named_in(c.text, need))
        where = bool(need.location) and f" {need.location} " in text
        about = any(f" {w} " in text for w in said)
        if c.pinned or need.loop_scenes.get(c.tick) == 1.0 or (named and (where or about)):
            out[c.key] = c
    return list(out.values())


def recall_probe(facts: Sequence[Candidate], prompt: str, full_ticks: Iterable[int]) -> Recall:
    """How many of `facts` reached the prompt: their text is in it, or the scene that
    established them is there in full."""
    full = set(full_ticks)
    missed = [c.text for c in facts if c.text not in prompt and c.tick not in full]
    return Recall(len(facts), len(facts) - len(missed), tuple(missed))
