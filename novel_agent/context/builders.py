"""Context builders for each stage (the seed strategy's Phase 1).

Pure functions of story data: no files, no clock. The writer sees the last
`full_text_scenes_count` scenes in full and the `summary_scenes_count` before
them as bullets; the planner sees the overall summary, the last 3 scene
summaries, open loops, active characters and relationships.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..answers import Plan
from ..memory import Memory
from ..scenes import Scene
from .sections import (Context, Section, bullets, describe_character, describe_location,
                       describe_loop, describe_relationship, story_bible)

PLANNER_RECENT = 3


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
    scenes = list(recent)[-PLANNER_RECENT:]
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


def cast_section(memory: Memory, plan: Plan) -> Section:
    """POV character, location and the characters present."""
    lines = []
    pov = memory.find_character(plan.pov)
    lines.append("POV: " + (describe_character(pov) if pov else plan.pov))
    location = memory.find_location(plan.location)
    lines.append("Location: " + (describe_location(location) if location else plan.location))
    others = [n for n in plan.characters if n.lower() != plan.pov.lower()]
    for name in others:
        c = memory.find_character(name)
        lines.append("Present: " + (describe_character(c) if c else name))
    return Section("cast", "Who and where", "\n".join(lines), items=tuple(plan.characters))


def writer_context(story: Any, memory: Memory, plan: Plan, scenes: Sequence[Scene], *,
                   tick: int, full_text_count: int, summary_count: int,
                   tool_results: Sequence[str] = (), steer: str = "",
                   min_words: int = 200, max_words: int = 400,
                   tier3: str = "") -> Context:
    """What the writer sees: bible, cast, recent summaries, last scenes in full, the plan."""
    ordered = list(scenes)
    full = ordered[-full_text_count:] if full_text_count else []
    before = ordered[: len(ordered) - len(full)]
    summarized = before[-summary_count:] if summary_count else []
    sections = (
        Section("bible", "Story bible", story_bible(story), pinned=True),
        Section("tier3", "The story so far", tier3),
        cast_section(memory, plan),
        Section("recent_summaries", "Earlier scenes (summaries)",
                "\n\n".join(scene_summary(s) for s in summarized),
                items=tuple(f"scene_{s.tick:03d}" for s in summarized)),
        Section("recent_full", "The last scenes in full", "\n\n".join(scene_full(s) for s in full),
                items=tuple(f"scene_{s.tick:03d}" for s in full)),
        Section("tools", "Notes from the planner's tools", bullets(tool_results), pinned=True),
        Section("intention", "This scene", intention_text(plan), pinned=True),
        Section("steer", "Author's note", steer, pinned=True),
    )
    return Context("writer", sections, {"tick": tick, "min_words": min_words,
                                        "max_words": max_words, "title": plan.title})


def intention_text(plan: Plan) -> str:
    lines = [f"Scene intention: {plan.intention}", f"POV: {plan.pov}",
             f"Location: {plan.location}"]
    if plan.characters:
        lines.append("Characters present: " + ", ".join(plan.characters))
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
