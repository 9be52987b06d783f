"""The sections of each stage's prompt, as text: pure functions of story data.

The planner sees the overall summary, the last `recent_scenes_count` scene
summaries, open loops, characters, places and relationships; the extractor
the known names, open loops, the plan and the new prose; the summarizer a
range of scenes. The writer's tiered layout is in writer.py, which uses the
scene, cast and intention texts made here.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..decisions import Plan
from ..memory import Memory
from ..scenes import Scene
from .sections import (Context, Section, describe_character, describe_location,
                       describe_loop, describe_relationship, story_bible)



def scene_summary(scene: Scene) -> str:
    head = f"Scene {scene.tick}" + (f" — {scene.title}" if scene.title else "")
    return f"{head}\n{scene.summary_text() or '(no summary)'}"


def scene_full(scene: Scene) -> str:
    head = f"### Scene {scene.tick}" + (f" — {scene.title}" if scene.title else "")
    return f"{head}\n\n{scene.body.strip()}"


def planner_context(story: Any, memory: Memory, recent: Sequence[Scene], *, tick: int,
                    overall_summary: str = "", steer: str = "", max_tools: int = 3) -> Context:
    """What the planner sees before it decides the next scene."""
    active = sorted(memory.characters.values(), key=lambda c: -int(c.get("last_seen") or 0))
    scenes = list(recent)
    sections = (
        Section("bible", "Story bible", story_bible(story), pinned=True),
        Section("overall", "The story so far", overall_summary),
        Section("characters", "Characters", "\n".join(describe_character(c) for c in active),
                items=tuple(c.get("id", "") for c in active)),
        Section("locations", "Known locations",
                "\n".join(describe_location(l) for l in memory.locations.values())),
        Section("relationships", "Relationships",
                "\n".join(describe_relationship(r) for r in memory.relationships)),
        Section("loops", "Open plot loops", "\n".join(describe_loop(l) for l in memory.open_loops())),
        Section("recent", "Recent scenes", "\n\n".join(scene_summary(s) for s in scenes),
                items=tuple(f"scene_{s.tick:03d}" for s in scenes)),
        Section("steer", "Author's note", steer, pinned=True),
    )
    return Context("planner", sections, {"tick": tick, "max_tools": max_tools,
                                         "first_scene": tick == 1})


def _first_seen(entity: dict) -> tuple[int, str]:
    return (int(entity.get("first_seen") or 0), str(entity.get("id", "")))


def cast_section(memory: Memory, ensemble: Sequence[str] = (),
                 places: Sequence[str] = ()) -> Section:
    """Profiles of the characters and places of the given (anchor) scenes.

    Stable on purpose, for prefix caching: profiles without current states,
    ordered by first appearance. Who is POV, where the scene is, everyone's
    state now, and anyone not profiled here go in the volatile tail
    (`intention_text`).
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
    lines = [describe_character({k: v for k, v in c.items() if k != "state"}) for c in ordered]
    lines += [f"Place: {describe_location(l)}" for l in sorted(locations.values(), key=_first_seen)]
    return Section("cast", "Who and where", "\n".join(lines),
                   items=tuple(str(c.get("name")) for c in ordered)
                   + tuple(str(l.get("name")) for l in locations.values()))


def intention_text(plan: Plan, memory: Memory | None = None, described: Sequence[str] = ()) -> str:
    """The scene to write: title, intention, POV, place, who is present and their state now.

    Characters and the place not already profiled in `described` get their profile here.
    """
    known = {d.lower() for d in described}

    def who(name: str) -> str:
        c = memory.find_character(name) if memory is not None else None
        if c is None:
            return name
        text = describe_character({k: v for k, v in c.items() if k != "state"}) \
            if str(c.get("name", "")).lower() not in known else str(c.get("name"))
        return text + (f" (now: {c['state']})" if c.get("state") else "")

    lines = [f"Scene intention: {plan.intention}", f"POV: {who(plan.pov)}"]
    loc = memory.find_location(plan.location) if memory is not None else None
    lines.append("Location: " + (describe_location(loc) if loc and str(loc.get("name", "")).lower()
                                 not in known else plan.location))
    others = [n for n in plan.characters if n.lower() != plan.pov.lower()]
    if others:
        lines.append("Also present: " + "; ".join(who(n) for n in others))
    if plan.title:
        lines.insert(0, f"Title: {plan.title}")
    return "\n".join(lines)


def extractor_context(story: Any, memory: Memory, plan: Plan, prose: str, *, tick: int) -> Context:
    """What the extractor sees: known names and open loops (to match against) and the prose."""
    sections = (
        Section("characters", "Known characters",
                ", ".join(str(c.get("name")) for c in memory.characters.values())),
        Section("loops", "Open plot loops", "\n".join(describe_loop(l) for l in memory.open_loops())),
        Section("plan", "What the scene was meant to do", intention_text(plan)),
        Section("scene", f"Scene {tick}", prose.strip(), pinned=True),
    )
    return Context("extractor", sections, {"tick": tick})


def summarizer_context(story: Any, scenes: Sequence[Scene], *, first: int, last: int,
                       previous: str = "", full_text: bool = False) -> Context:
    """What the summarizer sees: the scenes of a range, as bullets or in full."""
    body = "\n\n".join(scene_full(s) if full_text else scene_summary(s) for s in scenes)
    sections = (
        Section("bible", "Story bible", story_bible(story), pinned=True),
        Section("previous", "Summary so far", previous),
        Section("scenes", f"Scenes {first}–{last}", body, pinned=True,
                items=tuple(f"scene_{s.tick:03d}" for s in scenes)),
    )
    return Context("summarizer", sections, {"first": first, "last": last})
