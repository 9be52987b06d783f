"""`novel audit`: the book as it stands, replayed scene by scene, and its CED.

Each scene's extraction (kept in its plan record, an imported scene's too) is
checked against the knowledge of the scenes before it, then recorded, as the
tick did; so the audit sees each scene as its tick saw it, and a book written
before the audit existed is audited all the same. Characters and places enter
the replay at their `first_seen` (with their voice card as it is now); a
character's `status` set by hand in its file takes effect at its `status_in`. The
CED is ConStory-Bench's: distinct subtypes with a quoted error per 10,000 words of the
audited range.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from novel_agent.audit.clock import advance
from novel_agent.audit.findings import RULES, SUBTYPES, Finding, book_ced
from novel_agent.audit.knowledge import apply_knowledge
from novel_agent.audit.rules import Rules, SceneInput, check
from novel_agent.errors import ModelResponseError
from novel_agent.files import read_yaml
from novel_agent.story.decisions import Extraction, extraction_from_json
from novel_agent.story.memory.records import Character, Entity, Loop
from novel_agent.story.memory.store import Memory, add_fact, find_person, slug
from novel_agent.story.scenes import Scene, load_scene, scene_ticks

Auditor = Callable[[SceneInput], tuple[list[Finding], int]]   # LLM findings, discarded


@dataclass
class BookAudit:
    """The findings of a range of the book, and its CED."""

    first: int
    last: int
    words: int
    findings: list[Finding] = field(default_factory=list)
    discarded: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def subtypes(self) -> dict[str, list[Finding]]:
        """The findings by subtype, in ConStory-Bench's order."""
        out: dict[str, list[Finding]] = {}
        for subtype in SUBTYPES:
            found = [f for f in self.findings if f.subtype == subtype]
            if found:
                out[subtype] = found
        return out

    @property
    def ced(self) -> float:
        return book_ced(self.findings, self.words)

    def to_dict(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last, "words": self.words,
                "ced": round(self.ced, 3), "subtypes": len(self.subtypes),
                "by_subtype": {s: len(f) for s, f in self.subtypes.items()},
                "by_kind": {k: n for k in [*RULES, "llm"]
                            if (n := sum(f.kind == k for f in self.findings))},
                "discarded": self.discarded, "notes": self.notes,
                "findings": [f.to_dict() for f in self.findings]}


def extraction_of(record: Any, title: str) -> Extraction:
    """The extraction a plan record keeps (its title as the summary if it has none)."""
    data = record.get("extraction") if isinstance(record, dict) else None
    try:
        return extraction_from_json(data if isinstance(data, dict) else {})
    except ModelResponseError:
        return Extraction(summary=[title or "a scene"])


def _entering(memory: Memory, final: Memory, tick: int) -> None:
    """Characters and places whose first_seen is `tick` enter the replay (with their names
    and voice cards, not their knowledge); a hand-set status takes effect at its status_in."""
    for cid, c in final.characters.items():
        if int(c.get("first_seen") or 1) == tick and cid not in memory.characters:
            fields: Mapping[str, Any] = c
            memory.characters[cid] = cast(Character, {
                k: fields[k] for k in ("id", "name", "aliases", "first_seen", "voice")
                if k in fields})
        if c.get("status_in") == tick and c.get("status") and cid in memory.characters:
            memory.characters[cid].update({"status": c["status"], "status_in": tick,
                                           "status_how": c.get("status_how", c["status"])})
    for lid, loc in final.locations.items():
        if int(loc.get("first_seen") or 1) == tick and lid not in memory.locations:
            memory.locations[lid] = loc.copy()


def _known(entities: Mapping[str, Entity], record: Any, tick: int,
           tool: str) -> set[str]:
    """The ids known before `tick`, and those its plan introduced with `tool`."""
    calls = record.get("tool_calls") if isinstance(record, dict) else None
    named = {slug(str(c.get("name", ""))) for c in calls or []
             if isinstance(c, dict) and c.get("tool") == tool}
    return {eid for eid, e in entities.items()
            if int(e.get("first_seen") or 1) < tick or eid in named}


def _loops_at(final: Memory, tick: int) -> list[Loop]:
    """The loops as they stood before scene `tick`."""
    out: list[Loop] = []
    for loop in final.loops:
        opened = loop.get("opened_in")
        if not isinstance(opened, int) or opened >= tick:
            continue
        resolved = loop.get("resolved_in")
        open_then = not isinstance(resolved, int) or resolved >= tick
        out.append({**loop, "status": "open" if open_then else "resolved",
                    "scenes": [t for t in loop.get("scenes") or [] if isinstance(t, int)
                               and t <= tick]})
    return out


def audit_book(scenes_dir: Path, plans_dir: Path, final: Memory, *, rules: Rules,
               window: int, first: int = 1, last: int | None = None,
               auditor: Auditor | None = None) -> BookAudit:
    """Replay scenes 1..`last` and audit `first`..`last` (the rules; `auditor` too when
    given)."""
    ticks = [t for t in scene_ticks(scenes_dir) if last is None or t <= last]
    last = ticks[-1] if ticks else (last or 0)
    result = BookAudit(first, last, 0)
    memory, clock, clock_scene = Memory(), None, 0
    recent: list[Scene] = []
    for tick in ticks:
        scene = load_scene(scenes_dir / f"scene_{tick:03d}.md")
        record = read_yaml(plans_dir / f"plan_{tick:03d}.yaml", {})
        extraction = extraction_of(record, scene.title)
        _entering(memory, final, tick)
        memory.loops = _loops_at(final, tick)
        if tick >= first:
            result.words += scene.words
            given = SceneInput(tick=tick, prose=scene.body, extraction=extraction, memory=memory,
                               title=scene.title, pov=scene.pov, location=scene.location,
                               clock=clock, clock_scene=clock_scene,
                               recent=[(s.tick, s.title, s.body) for s in recent[-window:]]
                               if window else [], rules=rules,
                               known_people=_known(memory.characters, record, tick,
                                                   "create_character"),
                               known_places=_known(memory.locations, record, tick,
                                                   "create_location"),
                               cast=list(scene.characters))
            result.findings += check(given)
            if auditor is not None:
                found, dropped = auditor(given)
                result.findings += found
                result.discarded += dropped
        for fact in extraction.facts:
            add_fact(memory, fact, tick=tick)
        apply_knowledge(memory, extraction, tick=tick, location=scene.location,
                        pov=scene.pov if find_person(memory, scene.pov) else "")
        clock, clock_scene = advance(clock, clock_scene, extraction.clock, scene.body, tick)
        recent = [*recent[-(window - 1):], scene] if window > 1 else ([scene] if window else [])
    return result

