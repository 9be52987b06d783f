"""Retrieval: which older scenes and facts matter to the scene at hand, and how much.

A `Need` says what the scene is about (who, where, which loops, its words); a
`Candidate` is an older scene or a fact the index found (by BM25, by the
loops, by being pinned, by being near). `score` adds weighted signals, each
between 0 and 1:

    bm25        how well its words match the words of the intention, the title and
                the steer note, less the names of the scene's people and place
                (scaled by the best match, damped when even that is weak)
    pov         a scene told from the same point of view (a fact: names it)
    character   the people of the scene it shares (a fact: names)
    location    the same place (a fact: names it)

pov, character and location count each name by how much it tells: a name in
one document in a thousand counts nearly 1, the protagonist's name, in half of
them, little (see search.information). So a place or a minor character named
again brings back what happened there, and the point of view, in every other
scene, does not crowd the rest out.
    loop        it opened a loop the plan touches (1), or played in one (less)
    recency     halving every 50 ticks
    pin         `pinned: true` by hand
    embedding   cosine similarity with the scene at hand, when embeddings are on

The weights are `context.relevance`. `retrieval_items` turns candidates into
Items for the writer's `retrieved` section: a scene as its summary (its full
text only when pinned), then one line, then its title; a fact as a line with
the scene that established it. Pure functions of their arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from novel_agent.context.items import Item
from novel_agent.text.names import normalize_name

# The best this many older scenes come back as their summaries; the rest as one line
# each, so the room goes to the facts (short and exact) before broad summaries.
SUMMARIZED_SCENES = 4
RELEVANT = 0.6          # a candidate scoring under this is not brought back
NEAR_BEST = 0.2         # ... nor one scoring under this share of the best candidate's score
RECENCY_HALF_LIFE = 50
# BM25 is scaled by the best match plus this, so the best of a weak lot (common words
# only) does not count as a strong match: a match on a word in one document in a
# thousand scores ~20, one on a word in every tenth ~3.
BM25_DAMPING = 8.0


@dataclass(frozen=True)
class Need:
    """What the scene at hand is about."""

    tick: int
    pov: str = ""                                  # normalized
    names: frozenset[str] = frozenset()            # normalized names of who is in it
    first_names: frozenset[str] = frozenset()      # their first words, where no one else
                                                   # known has it ("mara")
    location: str = ""                             # normalized
    # Scenes of the loops the plan touches: 1 for one that opened a loop, less for the rest.
    loop_scenes: Mapping[int, float] = field(default_factory=dict)
    # How much each (normalized) name tells, 0..1 (search.information); 1 when unknown.
    weight: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, tick: int, pov: str = "", characters: Iterable[str] = (), location: str = "",
           loop_scenes: Mapping[int, float] | Iterable[int] = (),
           weight: Mapping[str, float] | None = None,
           shared_first: Iterable[str] = ()) -> Need:
        """`shared_first`: first names more than one known character has (a text saying
        only "Bram" is then about none of them in particular)."""
        names = {normalize_name(n) for n in [pov, *characters] if n and normalize_name(n)}
        common = {normalize_name(f) for f in shared_first}
        return cls(tick, normalize_name(pov or ""), frozenset(names),
                   frozenset(n.split()[0] for n in names if n.split()[0] not in common),
                   normalize_name(location or ""),
                   dict(loop_scenes) if isinstance(loop_scenes, Mapping)
                   else dict.fromkeys(loop_scenes, 1.0),
                   {normalize_name(k): v for k, v in (weight or {}).items()})

    def tells(self, name: str) -> float:
        return self.weight.get(name, 1.0)


@dataclass(frozen=True)
class Candidate:
    """An older scene or a fact, with what scoring needs."""

    key: str                 # "scene_012" or "fact:12:<hash>"
    kind: str                # "scene" or "fact"
    tick: int                # the scene (a fact: the scene that established it)
    title: str = ""
    text: str = ""           # a scene's prose, a fact's text
    summary: tuple[str, ...] = ()
    pov: str = ""
    location: str = ""
    characters: tuple[str, ...] = ()
    pinned: bool = False
    bm25: float = 0.0        # raw BM25 (positive), 0 when not matched
    similarity: float | None = None


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    score: float
    signals: Mapping[str, float] = field(default_factory=dict)

    @property
    def why(self) -> str:
        shown = [f"{k} {v:.2f}" for k, v in sorted(self.signals.items(), key=lambda kv: -kv[1])
                 if v > 0]
        return "; ".join(shown[:4]) or "recent"


def named(text: str, need: Need) -> set[str]:
    """The scene's people a text names (by full name, or by a first name no one else
    known has)."""
    said = f" {normalize_name(text)} "
    return {n for n in need.names
            if f" {n} " in said or (n.split()[0] in need.first_names and f" {n.split()[0]} " in said)}


def signals(c: Candidate, need: Need, best_bm25: float) -> dict[str, float]:
    """The signals of one candidate, each in [0, 1]."""
    if c.kind == "scene":
        people = {normalize_name(n) for n in [c.pov, *c.characters] if n} & need.names
        same_pov = bool(need.pov) and normalize_name(c.pov) == need.pov
        here = bool(need.location) and normalize_name(c.location) == need.location
    else:
        people = named(c.text, need)
        same_pov = need.pov in people
        here = bool(need.location) and f" {need.location} " in f" {normalize_name(c.text)} "
    shared = min(1.0, sum(need.tells(n) for n in people))
    pov = need.tells(need.pov) if same_pov else 0.0
    place = need.tells(need.location) if here else 0.0
    age = max(0, need.tick - 1 - c.tick)
    return {"bm25": c.bm25 / (best_bm25 + BM25_DAMPING) if best_bm25 > 0 else 0.0, "pov": pov,
            "character": shared, "location": place,
            "loop": need.loop_scenes.get(c.tick, 0.0),
            "recency": 0.5 ** (age / RECENCY_HALF_LIFE), "pin": float(c.pinned),
            "embedding": max(0.0, c.similarity or 0.0)}


def score(candidates: Iterable[Candidate], need: Need,
          weights: Mapping[str, float]) -> list[Scored]:
    """Every candidate scored, best first."""
    pool = list(candidates)
    best = max((c.bm25 for c in pool), default=0.0)
    out = []
    for c in pool:
        sig = signals(c, need, best)
        weighted = {k: v * weights.get(k, 0.0) for k, v in sig.items()}
        out.append(Scored(c, sum(weighted.values()), weighted))
    return sorted(out, key=lambda s: (-s.score, -s.candidate.tick, s.candidate.key))


def scene_forms(c: Candidate) -> tuple[str, ...]:
    """Summary (full text first when pinned) -> one line -> title."""
    head = f"Scene {c.tick}" + (f" — {c.title}" if c.title else "")
    bullets = "\n".join(f"- {b}" for b in c.summary) or "- (no summary)"
    forms = [f"{head}\n{bullets}", f"{head}: {c.summary[0]}" if c.summary else head, head]
    if c.pinned and c.text.strip():
        forms.insert(0, f"{head} (pinned)\n\n{c.text.strip()}")
    return tuple(forms)


def fact_form(c: Candidate) -> str:
    return f"- Fact (scene {c.tick}): {c.text}"


def retrieval_items(scored: Iterable[Scored], *, exclude_scenes: Iterable[int] = (),
                    exclude_facts: Iterable[int] = (), threshold: float = RELEVANT,
                    limits: Mapping[str, int] | None = None,
                    near_best: float = NEAR_BEST) -> list[Item]:
    """Items for the writer's `retrieved` section: candidates scoring at least
    `threshold` and NEAR_BEST of the best one's score (what merely shares the cast is
    not brought back when something matches the scene), less the scenes the recent
    tiers already hold and the facts of the scenes they hold in full (the prose is
    there): as many as the section's room takes, best first (`limits`, per kind, for a
    caller that wants fewer; `near_best` the share of the best score below which a
    candidate is left out). Laid out in story order, a scene's facts after its summary."""
    skip_scenes, skip_facts = set(exclude_scenes), set(exclude_facts)
    kept = [s for s in scored
            if s.candidate.tick not in (skip_scenes if s.candidate.kind == "scene" else skip_facts)]
    best = max((s.score for s in kept), default=0.0)
    room = dict(limits) if limits is not None else {}
    items, scenes = [], 0
    for s in kept:
        c = s.candidate
        if s.score < max(threshold, near_best * best) or room.get(c.kind, 1) <= 0:
            continue
        if c.kind in room:
            room[c.kind] -= 1
        forms = scene_forms(c) if c.kind == "scene" else (fact_form(c),)
        if c.kind == "scene":
            scenes += 1
            forms = forms if scenes <= SUMMARIZED_SCENES or c.pinned else forms[-2:]
        items.append(Item(c.key, forms, round(s.score, 3), (c.tick, c.kind != "scene", c.key),
                          why=s.why))
    return items
