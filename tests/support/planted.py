"""A long synthetic story on disk with facts planted early and needed again much later.

For the retrieval tests and bench/continuity.py: `write_planted(project, scenes, probes)`
writes `scenes` scene files (a cast of twelve, twenty-five places, realistic
summaries), memory files (the cast, the places, facts: one or two ordinary
facts per scene, like the extractor's, plus the planted ones), and state.yaml.
Each `Probe` is a fact planted in the story's first half and needed by the plan of
the next scene (`scenes + 1`), whose intention names the fact's place and person;
`plan_answer(plan)` is a planner's answer for it, and `writer_prompt(project, plan)` the
writer's prompt the next tick would send.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from novel_agent.files import atomic_write, dump_yaml
from novel_agent.story.decisions import Plan
from novel_agent.story.memory.store import slug
from novel_agent.story.scenes import Scene
from novel_agent.tick.pipeline import preview
from novel_agent.tick.session import Session
from tests.support.scripted import ScriptedModel
from tests.support.story_factory import prose

CAST = ("Mara Quill", "Tobin Keel", "Ilse Varga", "Corin Lisle", "Petra Quell", "Anselm Thorne",
        "Nell Brandt", "Oskar Fenn", "Hedda Vale", "Jonah Reed", "Signe Holm", "Bram Ostrow")
PLACES = ("the north quay", "the bell tower", "the salt cellar", "the chapel ruins",
          "the ferry landing", "the old observatory", "the rope walk", "the customs house",
          "the widow's walk", "the boathouse", "the smokehouse", "the tide mill",
          "the signal station", "the granary", "the sea cave", "the lamp room", "the net loft",
          "the cooperage", "the cemetery gate", "the harbour archive", "the shipwright's yard",
          "the fever hospital", "the coal staithe", "the weir", "the pilot's cottage")
THINGS = ("a whalebone comb", "a cracked sextant", "a bundle of letters", "a child's shoe",
          "a brass locket", "a tin of photographs", "a ledger in cipher", "a pistol wrapped in oilcloth",
          "a wedding ring", "a map of the reef", "a jar of gold teeth", "a torn flag",
          "a key on a green ribbon", "a diary with no name", "a lens from the great lamp",
          "a bottle of laudanum", "a drawing of the keeper", "a lock of red hair",
          "a sailor's knife", "a ship's bell clapper", "a deed to the island", "a glass eye",
          "a rosary of black beads", "a silver whistle", "a stopped pocket watch")
HIDING = ("under the third floorboard", "behind a loose stone", "inside a flour sack",
          "beneath the altar cloth", "in a crab pot", "under the stove", "inside the wall clock",
          "in a nest of rope")
SEEN = ("a lantern", "a torn map", "a sealed letter", "an unsigned contract", "a silver compass",
        "a child's drawing", "a brass key", "a ledger with missing pages")


@dataclass(frozen=True)
class Probe:
    """A planted fact and the later plan that needs it."""

    fact: str
    planted_at: int
    plan: Plan


def _scene(tick: int, rng: random.Random, bullets: list[str]) -> Scene:
    pov, other = rng.sample(CAST, 2)
    place = rng.choice(PLACES)
    body = prose(rng.randint(250, 380), tick)
    summary = [f"{pov} and {other} meet at {place}.", *bullets,
               f"{pov} keeps watch until the tide turns."]
    return Scene(tick=tick, body=body, title=f"Scene {tick} at {place.removeprefix('the ')}",
                 pov=pov, location=place, characters=[other], summary=summary,
                 words=len(body.split()))


def plant(scenes: int, count: int, seed: int = 7) -> list[Probe]:
    """`count` probes over a story of `scenes` scenes (planted in its first half), every
    one a distinct person-place pair and thing."""
    rng = random.Random(seed)
    pairs = rng.sample([(p, q) for p in CAST for q in PLACES], count)
    things = [THINGS[i % len(THINGS)] for i in range(count)]
    planted = sorted(rng.sample(range(3, max(4, scenes // 2)), count))
    probes = []
    for (person, place), thing, at in zip(pairs, things, planted):
        fact = f"{person} hid {thing} {rng.choice(HIDING)} at {place}"
        other = rng.choice([c for c in CAST if c != person])
        plan = Plan(title=f"Back to {place.removeprefix('the ')}",
                    intention=f"{person} returns alone to {place} at night to look for what "
                              f"{person.split()[0]} hid there, while {other} keeps the lamp.",
                    pov=person, location=place, characters=[person, other])
        probes.append(Probe(fact, at, plan))
    return probes


def write_planted(project, scenes: int, probes: list[Probe], seed: int = 11) -> None:
    """Write the story's scenes, memory and state into `project` (an empty project)."""
    rng = random.Random(seed)
    by_tick = {p.planted_at: p for p in probes}
    facts = []
    for tick in range(1, scenes + 1):
        probe = by_tick.get(tick)
        noise = [f"{rng.choice(CAST)} has seen {rng.choice(SEEN)} at {rng.choice(PLACES)}"
                 for _ in range(rng.randint(1, 2))]
        scene = _scene(tick, rng, [probe.fact + "."] if probe else [])
        atomic_write(project.scene_path(tick), scene.render())
        facts += [{"text": text, "scene": tick} for text in noise]
        if probe:
            facts.append({"text": probe.fact, "scene": tick})
    memory = project.memory_dir
    for i, name in enumerate(CAST):
        atomic_write(memory / "characters" / f"{slug(name)}.yaml", dump_yaml(
            {"id": slug(name), "name": name, "description": f"islander, {SEEN[i % 8]}",
             "first_seen": 1, "last_seen": scenes}))
    for place in PLACES:
        atomic_write(memory / "locations" / f"{slug(place)}.yaml", dump_yaml(
            {"id": slug(place), "name": place, "description": "on the island", "first_seen": 1}))
    atomic_write(memory / "facts.yaml", dump_yaml({"facts": facts}))
    atomic_write(project.state_file, dump_yaml({"tick": scenes}))


def plan_answer(plan: Plan) -> dict:
    """The planner's JSON answer for `plan` (for a ScriptedModel)."""
    return {"title": plan.title, "intention": plan.intention, "pov": plan.pov,
            "location": plan.location, "characters": list(plan.characters), "tool_calls": []}


def writer_prompt(project, plan: Plan, config=None, *, make=None) -> tuple[str, dict]:
    """The writer's prompt (as one string) and report for the next tick, planned as `plan`."""
    model = ScriptedModel().add("planner", plan_answer(plan))
    config = config or project.config()
    with Session.open(project, config, make_model=make or (lambda: model)) as session:
        built = preview(session, "writer")
    return "\n".join(m["content"] for m in built.messages), built.report
