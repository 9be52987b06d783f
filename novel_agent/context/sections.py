"""Sections of a prompt and how story data reads inside one.

A Context is an ordered list of Sections. Order is the layout: stable parts
first (so providers' prefix caches hit), volatile parts last. The templates
print the sections in this order; the builders decide what is in them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from novel_agent.context.presence import gone, status_text, whereabouts
from novel_agent.story.memory.records import Character, Location, Loop, Relationship


@dataclass(frozen=True)
class Section:
    """One titled block of a prompt."""

    name: str          # stable key: "bible", "cast", "recent_full", ...
    title: str         # heading shown to the model
    text: str
    pinned: bool = False
    items: tuple[str, ...] = ()   # what the section holds (scene ids, names), for reports


@dataclass(frozen=True)
class Context:
    """The sections of one stage's prompt, plus values the template may use."""

    stage: str
    sections: tuple[Section, ...]
    values: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> Section | None:
        for section in self.sections:
            if section.name == name:
                return section
        return None

    def text(self, name: str) -> str:
        section = self.section(name)
        return section.text if section else ""

    def nonempty(self) -> list[Section]:
        return [s for s in self.sections if s.text.strip()]


def bullets(lines: Iterable[str]) -> str:
    return "\n".join(f"- {line}" for line in lines if str(line).strip())


def describe_character(c: Character) -> str:
    """One paragraph about a character, from its memory file: who, whether dead or absent
    (a dead one's last state is not told), traits, goals, state now, where last, what
    they hold (context/presence.py)."""
    parts = [str(c.get("name", c.get("id", "?")))]
    if c.get("description"):
        parts.append(f"— {c['description']}")
    line = " ".join(parts)
    extra = [status_text(c)] if gone(c) else []
    if c.get("traits"):
        extra.append("traits: " + ", ".join(map(str, c["traits"])))
    if c.get("goals"):
        extra.append("goals: " + ", ".join(map(str, c["goals"])))
    if c.get("state") and gone(c) != "dead":
        extra.append(f"now: {c['state']}")
    extra += whereabouts(c)
    if not extra and not c.get("description") and c.get("first_seen"):
        extra.append(f"first seen in scene {c['first_seen']}")   # not a bare name
    return line + (f" ({'; '.join(extra)})" if extra else "")


def describe_location(loc: Location) -> str:
    desc = loc.get("description")
    return f"{loc.get('name', loc.get('id', '?'))}" + (f" — {desc}" if desc else "")


def describe_loop(loop: Loop) -> str:
    return f"[{loop.get('id')}] {loop.get('description')} (opened in scene {loop.get('opened_in')})"


def describe_relationship(rel: Relationship) -> str:
    text = f"{rel.get('a')} & {rel.get('b')}: {rel.get('kind')}"
    return text + (f" — {rel['description']}" if rel.get("description") else "")


def story_bible(story: Any) -> str:
    """Premise, genre, tone, setting, protagonist and style guide, as set in project.yaml."""
    lines = []
    for label, value in (("Title", story.title or story.name), ("Premise", story.premise),
                         ("Genre", story.genre), ("Tone", story.tone),
                         ("Setting", story.setting), ("Protagonist", story.protagonist),
                         ("Style guide", story.style_guide)):
        if value:
            lines.append(f"{label}: {value}")
    return "\n".join(lines)
