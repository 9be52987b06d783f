"""The audit's nomenclature rule and the book's pool of names agree: one rule for both."""

from __future__ import annotations

import random

from novel_agent.audit.rules import SceneInput, nomenclature
from novel_agent.models.offline import FIRST, LAST, PLACES
from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.store import Memory, upsert_character, upsert_location
from novel_agent.story.name_pool import NamePool, fallback_pool, pick_person, pick_place
from novel_agent.tick.stages.newcomers import memory_book

# a pool with names the rule flags beside a book of the offline model's names
TRAPS = NamePool(("Marra", "Tobyn", "Ilse", "Nel", "Wren", "Edda"), ("Quil", "Keel", "Lorn"),
                 ("the harbour archives", "the salt markets", "Gull Reach"))


def book(rng: random.Random) -> Memory:
    memory = Memory()
    for name in rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 12):
        if memory_book(memory).holds(name):
            continue
        upsert_character(memory, name, tick=1)
    for place in rng.sample(PLACES, 6):
        upsert_location(memory, place, tick=1)
    return memory


def scene_with(memory: Memory, person: str, place: str) -> SceneInput:
    known_people, known_places = set(memory.characters), set(memory.locations)
    new = memory.copy()
    upsert_character(new, person, tick=5)          # the scene brings them in, not on purpose
    upsert_location(new, place, tick=5)
    pov = next(iter(memory.characters.values()))["name"]
    return SceneInput(tick=5, prose=f"{person} met {pov} at {place}.",
                      extraction=Extraction(summary=["x"], present=[pov, person]), memory=new,
                      pov=pov, location=place, known_people=known_people,
                      known_places=known_places)


def test_no_name_the_pool_gives_makes_a_nomenclature_finding():
    rng = random.Random(11)
    for n in range(30):
        memory = book(rng)
        known = memory_book(memory)
        for pool in (TRAPS, fallback_pool(n, known)):
            person = pick_person(pool, known, seed=n, words=rng.choice((1, 2)))
            place = pick_place(pool, known, seed=n)
            assert person and place
            assert nomenclature(scene_with(memory, person, place)) == [], (person, place)


def test_a_name_the_rule_flags_is_never_given():
    memory = Memory()
    for name in ("Mara Quill", "Tobin Keel", "Nell Brandt"):
        upsert_character(memory, name, tick=1)
    upsert_location(memory, "the harbour archive", tick=1)
    known = memory_book(memory)
    flagged = [n for n in ("Marra", "Tobyn", "Nel") if nomenclature(scene_with(memory, n, "Gull Reach"))]
    assert flagged == ["Marra", "Tobyn", "Nel"]                # the audit flags the pool's first
    assert nomenclature(scene_with(memory, "Ilse", "the harbour archives")) != []
    assert pick_person(TRAPS, known, words=1) == "Ilse"         # ... so it gives the next
    assert pick_place(TRAPS, known) == "the salt markets"


def test_a_new_person_who_repeats_a_first_name_is_a_finding():
    memory = Memory()
    upsert_character(memory, "Mara Quill", tick=1)
    found = nomenclature(scene_with(memory, "Mara Fenn", "Gull Reach"))
    assert [(f.kind, f.against, f.message) for f in found] == [
        ("nomenclature", "Mara Quill", "'Mara Fenn' repeats the first name of 'Mara Quill'")]
