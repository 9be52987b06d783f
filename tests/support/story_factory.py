"""Synthetic stories for context tests and benchmarks: realistic shapes, no LLM."""

from __future__ import annotations

import random
from functools import cache

from novel_agent.story.decisions import Plan
from novel_agent.story.memory.store import Memory
from novel_agent.story.project.folder import Story
from novel_agent.story.scenes import Scene

WORDS = ("the lamp rain harbour keeper letter map door stair salt wind tide bell rope iron "
         "glass she he they said watched turned quietly again under over before after night "
         "morning light dark water stone ledger silver key island north promised lied waited "
         "remembered Mara Tobin Ilse archive chapel tower ferry").split()


def prose(words: int, seed: int) -> str:
    rng = random.Random(seed)
    out, sentence = [], []
    for i in range(words):
        sentence.append(rng.choice(WORDS))
        if len(sentence) >= rng.randint(8, 18) or i == words - 1:
            out.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    paragraphs = [" ".join(out[i:i + 5]) for i in range(0, len(out), 5)]
    return "\n\n".join(paragraphs)


class SyntheticScenes:
    """Scenes 1..count with lengths from `length(tick)` words, made on demand."""

    def __init__(self, count: int, length, seed: int = 0):
        self.count, self.length, self.seed = count, length, seed
        self.loaded = 0

    @cache  # noqa: B019 - one factory per test
    def __call__(self, tick: int) -> Scene | None:
        if not 1 <= tick <= self.count:
            return None
        self.loaded += 1
        body = prose(self.length(tick), self.seed * 100_003 + tick)
        summary = [f"Scene {tick}: Mara {WORDS[tick % len(WORDS)]} at the harbour.",
                   f"Tobin hides the {WORDS[(tick * 7) % len(WORDS)]}.",
                   f"A bell rings {tick % 5 + 1} times."]
        return Scene(tick=tick, body=body, title=f"Scene {tick}", pov="Mara Quill",
                     location="The harbour", characters=["Mara Quill", "Tobin Keel"],
                     summary=summary, words=len(body.split()))


def story() -> Story:
    return Story(name="synthetic", premise="A lighthouse keeper finds a drowned man's map.",
                 genre="mystery", style_guide="Close third person, past tense.")


def memory() -> Memory:
    m = Memory()
    m.characters["mara_quill"] = {"id": "mara_quill", "name": "Mara Quill",
                                  "description": "the keeper", "traits": ["stubborn"],
                                  "goals": ["find the door"], "state": "uneasy"}
    m.characters["tobin_keel"] = {"id": "tobin_keel", "name": "Tobin Keel",
                                  "description": "the ferryman", "traits": [], "goals": []}
    m.locations["the_harbour"] = {"id": "the_harbour", "name": "The harbour",
                                  "description": "salt and tar"}
    return m


def plan(tick: int = 1) -> Plan:
    return Plan(intention=f"Mara confronts Tobin about the map (scene {tick}).",
                pov="Mara Quill", location="The harbour",
                title=f"Scene {tick}", characters=["Mara Quill", "Tobin Keel"])


def big_memory(characters: int, loops: int, relationships: int, facts: int,
               seed: int = 0) -> Memory:
    """A memory of the given sizes, every entry with text of realistic length."""
    rng = random.Random(seed)
    m = memory()
    for i in range(characters):
        cid = f"person_{i}"
        m.characters[cid] = {"id": cid, "name": f"Person {i} {rng.choice(WORDS).title()}",
                             "description": prose(rng.randint(4, 20), seed + i),
                             "traits": [rng.choice(WORDS)], "goals": [prose(6, i)],
                             "state": prose(5, i + 1), "first_seen": i % 50 + 1,
                             "last_seen": i % 90 + 1}
    names = [c["name"] for c in m.characters.values()]
    m.loops = [{"id": f"loop_{i}", "description": prose(rng.randint(6, 18), seed + 7 * i),
                "status": "open" if i % 4 else "resolved", "opened_in": i % 80 + 1,
                "resolved_in": None, "scenes": [i % 80 + 1]} for i in range(loops)]
    m.relationships = [{"a": rng.choice(names), "b": rng.choice(names),
                        "kind": rng.choice(["rivals", "siblings", "old friends"]),
                        "description": prose(rng.randint(0, 12), i), "since": i % 70 + 1}
                       for i in range(relationships)]
    m.facts = [{"text": prose(rng.randint(5, 15), seed + 11 * i), "scene": i % 90 + 1}
               for i in range(facts)]
    return m
