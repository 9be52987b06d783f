"""What the LLM auditor sees: the draft, and where its people stand (dead or absent, where
last, what they hold), the facts and earlier scenes about its names.

The draft is pinned (cut middle-out if it must be); the people, facts and scenes
are pools filled best first, like every stage's memory, so the prompt fits any window.
"""

from __future__ import annotations

from collections.abc import Sequence

from novel_agent.context.briefing import Briefing
from novel_agent.context.items import Item, Pool
from novel_agent.context.presence import called, gone, whereabouts
from novel_agent.context.relevance import character_line
from novel_agent.context.sections import Section
from novel_agent.story.memory.records import Character, Fact
from novel_agent.story.scenes import scene_key

AUDITOR_LAYOUT = ("people", "facts", "scenes", "scene")
AUDITOR_SHARES = {"people": 0.05, "facts": 0.15, "scenes": 0.25}


def auditor_briefing(draft: str, facts: Sequence[Fact],
                     scenes: Sequence[tuple[int, str]], *, tick: int,
                     people: Sequence[Character] = ()) -> Briefing:
    """The auditor's briefing: `people` (characters of the scene, from memory: those
    whose presence is known are shown), `facts` ({text, scene, witnesses?}) and `scenes`
    ((tick, summary)) most relevant first, the draft of scene `tick` pinned."""
    known = list({str(c.get("id")): c for c in people if gone(c) or whereabouts(c)}.values())
    people_items = tuple(
        Item(f"character:{c.get('id')}", (character_line(c, 0), called(c)),
             float(len(known) - i) + 10.0 * (gone(c) == "dead"), (gone(c) != "dead", i),
             why="in the scene")
        for i, c in enumerate(known))
    fact_items = tuple(
        Item(f"fact:{i}", (_fact_line(f),), float(len(facts) - i), (i,), why="names the scene's")
        for i, f in enumerate(facts))
    scene_items = tuple(Item(scene_key(t), (f"Scene {t}: {text}",), float(len(scenes) - i),
                             (t,), why="shares the scene's names")
                        for i, (t, text) in enumerate(scenes))
    pools = (Pool("people", "Where the scene's people stand", people_items,
                  AUDITOR_SHARES["people"], min_items=0),
             Pool("facts", "What the story has established", fact_items,
                  AUDITOR_SHARES["facts"], min_items=0),
             Pool("scenes", "Earlier scenes with these names", scene_items,
                  AUDITOR_SHARES["scenes"], min_items=0))
    fixed = (Section("scene", f"Scene {tick} (the draft to audit)", draft.strip(), pinned=True),)
    return Briefing("auditor", fixed, pools, AUDITOR_LAYOUT, {"tick": tick},
                    truncatable=("scene",))


def _fact_line(fact: Fact) -> str:
    who = fact.get("witnesses")
    known = f" (known to {', '.join(map(str, who))})" if isinstance(who, list) and who else ""
    return f"- Scene {fact.get('scene')}: {fact.get('text')}{known}"
