"""What the project's files say, as search documents: pure functions of their data.

A `Doc` is one searchable thing with a stable key: a scene (`scene:12`), a
fact (`fact:12:<hash>`), a character, a place, a loop, a relationship, a lore
entry (`lore:<file stem>` or `lore:<stem>#2`), a summary (`summary:checkpoint_010`).
Its `title`, `summary`, `body` and `names` are what BM25 matches; `meta` is
what retrieval scores (who is in it, where, whether it is pinned). index_sync.py
turns files into docs with these functions and stores them; nothing here reads
a file.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from novel_agent.story.lore import LoreEntry
from novel_agent.story.memory.records import Entity, Fact, Loop, Relationship
from novel_agent.story.memory.store import Memory
from novel_agent.story.scenes import Scene

KINDS = ("scene", "fact", "character", "location", "loop", "relationship", "lore", "summary")


@dataclass(frozen=True)
class Doc:
    """One row of the search index."""

    key: str
    kind: str
    source: str                      # the file it comes from, relative to the project
    title: str = ""
    body: str = ""
    summary: str = ""
    names: str = ""                  # who and where, for BM25
    tick: int | None = None          # the scene it points to
    meta: dict[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def sha(self) -> str:
        """The hash of everything stored, so an unchanged doc is never rewritten."""
        text = json.dumps([self.kind, self.source, self.title, self.body, self.summary,
                           self.names, self.tick, self.meta], sort_keys=True, default=str)
        return hashlib.sha1(text.encode("utf-8")).hexdigest()


def short_hash(text: str) -> str:
    return hashlib.sha1(text.strip().lower().encode("utf-8")).hexdigest()[:10]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def scene_doc(scene: Scene, source: str, *, pinned: bool = False) -> Doc:
    """A scene: its title, summary bullets, prose, and who and where."""
    names = [scene.pov, *scene.characters, scene.location]
    return Doc(f"scene:{scene.tick}", "scene", source, title=scene.title, body=scene.body,
               summary="\n".join(scene.summary), names=" | ".join(n for n in names if n),
               tick=scene.tick,
               meta={"pov": scene.pov, "location": scene.location,
                     "characters": list(scene.characters), "summary": list(scene.summary),
                     "pinned": pinned, "words": scene.words})


def fact_docs(facts: Iterable[Fact], source: str) -> list[Doc]:
    """Facts, each keyed by the scene that established it and its text."""
    docs, seen = [], set()
    for fact in facts:
        text = str(fact.get("text") or "").strip()
        doc = _fact_doc(text, _int(fact.get("scene")), fact.get("pinned") is True, source)
        if not text or doc.key in seen:
            continue
        seen.add(doc.key)
        docs.append(doc)
    return docs


@functools.lru_cache(maxsize=1 << 16)
def _fact_doc(text: str, scene: int | None, pinned: bool, source: str) -> Doc:
    """One fact's doc, made once (facts.yaml holds every fact, and grows each tick: its
    docs are asked for again each time)."""
    return Doc(f"fact:{scene or 0}:{short_hash(text)}", "fact", source, body=text, tick=scene,
               meta={"text": text, "scene": scene, "pinned": pinned})


def _join(values: Any) -> str:
    if isinstance(values, list):
        return ", ".join(str(v) for v in values if v is not None)
    return str(values or "")


def entity_doc(kind: str, entity: Entity, source: str) -> Doc:
    """A character or a place: name and aliases, description, traits, goals, state."""
    name = str(entity.get("name") or entity.get("id") or "")
    parts = [str(entity.get("description") or ""), _join(entity.get("traits")),
             _join(entity.get("goals")), str(entity.get("state") or "")]
    return Doc(f"{kind}:{entity.get('id')}", kind, source, title=name,
               body="\n".join(p for p in parts if p),
               names=" | ".join([name, *[str(a) for a in entity.get("aliases") or []]]),
               tick=_int(entity.get("last_seen")),
               meta={"id": entity.get("id"), "pinned": entity.get("pinned") is True})


def memory_docs(memory: Memory, sources: dict[str, str]) -> dict[str, list[Doc]]:
    """Every memory doc, grouped by the file it comes from (`sources` maps `facts` and
    each `<folder>/<id>` (characters, locations, loops, relationships) to its file)."""
    out: dict[str, list[Doc]] = {}
    for kind, folder in (("character", "characters"), ("location", "locations")):
        for entity_id, entity in getattr(memory, folder).items():
            source = sources[f"{folder}/{entity_id}"]
            out[source] = [entity_doc(kind, entity, source)]
    for folder, docs_of in (("loops", loop_docs), ("relationships", relationship_docs)):
        for item in getattr(memory, folder):
            source = sources[f"{folder}/{item.get('id')}"]
            out[source] = docs_of([item], source)
    out[sources["facts"]] = fact_docs(memory.facts, sources["facts"])
    return out


def loop_docs(loops: Iterable[Loop], source: str) -> list[Doc]:
    """Plot loops: the question, its status, the scenes involved."""
    docs = []
    for loop in loops:
        scenes = [t for t in loop.get("scenes") or [] if _int(t) is not None]
        docs.append(Doc(f"loop:{loop.get('id')}", "loop", source,
                        title=str(loop.get("id") or ""),
                        body=str(loop.get("description") or ""),
                        summary=str(loop.get("resolution") or ""),
                        tick=_int(loop.get("opened_in")),
                        meta={"status": loop.get("status", "open"), "scenes": scenes,
                              "pinned": loop.get("pinned") is True}))
    return docs


def relationship_docs(rels: Iterable[Relationship], source: str) -> list[Doc]:
    """Relationships: "A — kind — B" and what is said of it."""
    docs, seen = [], set()
    for rel in rels:
        key = f"relationship:{rel.get('a')}|{rel.get('b')}"
        if key in seen:
            continue
        seen.add(key)
        docs.append(Doc(key, "relationship", source,
                        title=f"{rel.get('a')} — {rel.get('kind')} — {rel.get('b')}",
                        body=str(rel.get("description") or ""),
                        names=f"{rel.get('a')} | {rel.get('b')}",
                        tick=_int(rel.get("updated_in", rel.get("since")))))
    return docs


def summary_doc(name: str, kind: str, first: int, last: int, body: str, source: str) -> Doc:
    """A checkpoint, an arc or the overall summary, pointing to its last scene."""
    return Doc(f"summary:{name}", "summary", source, title=f"{name} (scenes {first}–{last})",
               body=body, tick=last, meta={"kind": kind, "first": first, "last": last})


def lore_doc(entry: LoreEntry, source: str) -> Doc:
    """A lorebook entry: its name, keys and content."""
    return Doc(f"lore:{entry.key}", "lore", source, title=entry.name, body=entry.content,
               names=" | ".join(entry.keys),
               meta={"priority": entry.priority, "always": entry.always, "keys": list(entry.keys)})
