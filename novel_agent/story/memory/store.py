"""The story's memory: characters, locations, loops, relationships and facts.

Memory is plain data (dicts that map one-to-one onto the YAML files under
`memory/`, read by story/memory/read.py). `Memory` finds an item by name or id;
the functions here change it in memory (a character created or updated, a loop
opened or resolved, a relationship, a fact), and what a tick changed is written
back by story/memory/files.stage_memory.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from novel_agent.story.memory.lookup import (
    LOOP_WORD,
    entity_index,
    fact_index,
    learned,
    loop_index,
    names_of,
    surname,
)
from novel_agent.story.memory.lookup import loop_words as _loop_words
from novel_agent.story.memory.records import (
    Character,
    Fact,
    Location,
    Loop,
    Named,
    Relationship,
    is_open,
)
from novel_agent.text.names import (
    name_problem,
    normalize_name,
    strip_markers,
    variant_spelling,
    written_name,
)

_ATOMS = frozenset({str, int, float, bool, type(None)})


def plain_copy(value: Any) -> Any:
    """A deep copy of YAML-shaped data (dicts, lists, immutable scalars), several times
    faster than copy.deepcopy: memory is copied every tick (a scalar inside a dict or a
    list is taken as it is, without a call)."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _ATOMS else plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _ATOMS else plain_copy(v) for v in value]
    if kind in _ATOMS:
        return value
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    return copy.deepcopy(value)


def slug(text: str) -> str:
    """A file-safe id from a name: "Mara Quill" -> "mara_quill"."""
    s = re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")
    return s[:60] or "unnamed"


LOOP_ID_CHARS = 40      # a new loop's id: its description's slug, cut at a word within these


def slug_cut(key: str, chars: int) -> str:
    """`key` (a slug) cut to at most `chars` characters at a word's end, not inside one
    ("what_the_villagers_who_vanished_are_r" was a loop's id); a first word longer than
    `chars` is cut where it must be.

    >>> slug_cut("what_the_glass_apples_of_the_villagers_who_vanished_are", 40)
    'what_the_glass_apples_of_the_villagers'
    """
    if len(key) <= chars:
        return key
    head = key[:chars + 1].rsplit("_", 1)[0]
    return head if head and len(head) <= chars else key[:chars]


@dataclass
class Memory:
    """Everything the story has established so far."""

    characters: dict[str, Character] = field(default_factory=dict)
    locations: dict[str, Location] = field(default_factory=dict)
    loops: list[Loop] = field(default_factory=list)
    relationships: list[Relationship] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)

    def copy(self) -> Memory:
        return Memory(plain_copy(self.characters), plain_copy(self.locations),
                      plain_copy(self.loops), plain_copy(self.relationships),
                      plain_copy(self.facts))

    def open_loops(self) -> list[Loop]:
        """The loops not resolved: open, progressing or deferred."""
        return [loop for loop in self.loops if is_open(loop)]

    def find_character(self, name_or_id: str) -> Character | None:
        """A character by id or by name (case-insensitive)."""
        return _find(self.characters, name_or_id)

    def find_location(self, name_or_id: str) -> Location | None:
        """A location by id or by name (case-insensitive)."""
        return _find(self.locations, name_or_id)

    def find_loop(self, ref: str) -> Loop | None:
        """A loop by id, or by its description: an open one before a resolved one (the
        prompt's "[id]" and "(opened in scene N)" marks, copied back by a model, are
        looked through)."""
        marked = re.match(r"\s*\[([a-z0-9_]+)\]", str(ref))
        if marked and loop_index(self.loops).with_id(marked.group(1)):
            ref = marked.group(1)
        ref = strip_markers(ref) or ref
        return _match_loop(self.loops, ref, open_only=True) or _match_loop(self.loops, ref)


SHARED_BY = 2      # a word more open loops than this share does not tell them apart


def loop_marks(loops: Sequence[Loop]) -> dict[str, frozenset[str]]:
    """Each loop's words (5+ letters) that at most SHARED_BY of `loops` have: what a text
    must say to touch that loop and not any other ("token", "Quill" and "means" in
    half the loops touch none of them)."""
    return dict(_marks(tuple((str(l.get("id")), str(l.get("description", "")))
                             for l in loops)))


@functools.lru_cache(maxsize=8)
def _marks(loops: tuple[tuple[str, str], ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    """loop_marks of (id, description) pairs, kept for the loops last asked (the same
    open loops are asked of several times a tick, and again the next tick)."""
    said = [(key, _loop_words(description)) for key, description in loops]
    seen: dict[str, int] = {}
    for _, words in said:
        for word in words:
            seen[word] = seen.get(word, 0) + 1
    return tuple((key, frozenset(w for w in words if seen[w] <= SHARED_BY))
                 for key, words in said)


def touched_loops(memory: Memory, text: str) -> list[Loop]:
    """The open loops `text` touches (touches, with loop_marks of the open loops), in
    order: only the loops that say a word of `text` that marks a loop (one at most
    SHARED_BY open loops say) are looked at, not every loop sharing "token" or "means"
    with it (half the open loops of a long book); a word's share of the open loops is
    counted only as far as telling whether it marks one."""
    said = _text_words(text)
    index = loop_index(memory.loops)
    rare = frozenset(w for w in said if index.open_with(w, SHARED_BY + 1) <= SHARED_BY)
    out = []
    for loop in index.open_saying_any(rare):
        words = _loop_words(str(loop.get("description", "")))
        marks = {w for w in words if index.open_with(w, SHARED_BY + 1) <= SHARED_BY}
        if marks and len(marks & said) >= min(2, len(marks)):
            out.append(loop)
    return out


def touches(text: str, marks: frozenset[str] | set[str]) -> bool:
    """Whether `text` touches a loop of these marks (two of them, or its only one)."""
    if not marks:
        return False
    found = marks & _text_words(text)
    return len(found) >= min(2, len(marks))


@functools.lru_cache(maxsize=64)
def _text_words(text: str) -> frozenset[str]:
    """The loop words of a text asked of every open loop in turn."""
    return frozenset(LOOP_WORD.findall(text.lower()))


def _match_loop(loops: list[Loop], ref: str, open_only: bool = False) -> Loop | None:
    """The first of `loops` (the open ones, with `open_only`) whose id is `ref` (or its
    slug), else whose description is (looked up in the list's index: story/memory/lookup.py)."""
    index = loop_index(loops)
    wanted: Callable[[Loop], bool] = is_open if open_only else (lambda l: True)
    for found in (index.with_id(str(ref), slug(ref)), index.saying(str(ref).strip().lower())):
        for loop in found:
            if wanted(loop):
                return loop
    return None


def _find(entities: dict[str, Named], name_or_id: str) -> Named | None:
    """By id, else by normalized name or alias ("The Harbour." finds "harbour"): the
    first in the dict's order (looked up in its index: story/memory/lookup.py)."""
    if not name_or_id or not str(name_or_id).strip():
        return None
    key = slug(name_or_id)
    if key in entities:
        return entities[key]
    return entity_index(entities).named(normalize_name(str(name_or_id)))


def same_person(memory: Memory, name: str) -> Character | None:
    """The one character `name` is a shorter or fuller form of ("Mara" and "Mara Voss"):
    a first name alone matching exactly one character's first name, or a full name
    whose first word is exactly one single-word character. None when no one or several
    match (two Maras: "Mara" alone names neither)."""
    words = normalize_name(name).split()
    if not words:
        return None
    found = [c for c in entity_index(memory.characters).first_named(words[0])
             if len(words) == 1 or len(normalize_name(str(c["name"])).split()) == 1]
    return found[0] if len(found) == 1 else None


def variant_of(memory: Memory, name: str, beside: str = "") -> Character | None:
    """The one character whose full name `name` spells another way, one letter off
    ("Katryn Holloway" for Katrin Holloway: names.variant_spelling says when, and why
    so narrowly), or None: when no one or several match, and when `beside` (what the
    name was said with: the scene's prose, the plan's cast) writes both spellings, two
    people side by side ("Francis and Frances Holloway" are two whatever the rules say).
    Asked only of a name memory does not know (find_person)."""
    rest = surname(name)
    if not rest:
        return None
    found = [c for c in entity_index(memory.characters).with_surname(rest)
             if any(variant_spelling(name, str(n)) for n in [c["name"], *(c.get("aliases") or [])])]
    if len(found) != 1:
        return None
    if beside and written_name(name, beside) and \
            any(written_name(str(n), beside) for n in [found[0]["name"], *(found[0].get("aliases") or [])]):
        return None
    return found[0]


def find_person(memory: Memory, name: str, beside: str = "") -> Character | None:
    """The character `name` names: by id, name or alias, else as the shorter or fuller
    form of one character's name (same_person: "Mara" for "Mara Voss"), else as one
    character's full name spelled one letter off (variant_of: "Katryn Holloway" for
    Katrin Holloway, unless `beside` writes both)."""
    return memory.find_character(name) or same_person(memory, name) or \
        variant_of(memory, name, beside)


def cast_text(names: Iterable[str]) -> str:
    """A list of names as a text variant_of reads for both spellings (one a sentence)."""
    return "".join(f"{' '.join(str(n).split())}.\n" for n in names if n and str(n).strip())


def variant_lines(memory: Memory, names: Iterable[str], beside: str = "") -> list[str]:
    """What the tick says of each of `names` taken for a known character spelled another
    way (variant_of), one line each: the name is recorded under the first spelling,
    this one kept as an alias."""
    lines = []
    for name in dict.fromkeys(" ".join(str(n).split()) for n in names if n and str(n).strip()):
        if memory.find_character(name) or same_person(memory, name):
            continue
        known = variant_of(memory, name, beside)
        if known is not None:
            lines.append(f"“{name}” is taken for {known['name']}, one letter off: the same "
                         f"person (recorded as {known['name']}, “{name}” kept as an alias)")
    return lines


def unique_id(base: str, taken: set[str]) -> str:
    """`base`, or `base_2`, `base_3`, ... whichever is not taken (case-insensitively)."""
    wanted, n = base, 2
    while wanted.lower() in taken:
        wanted, n = f"{base}_{n}", n + 1
    return wanted


def relationship_id(a: str, b: str) -> str:
    """The id (and file name) of a relationship: its two people, in order ("mara--tobin")."""
    first, second = sorted([slug(a), slug(b)])
    return f"{first}--{second}"


def _clean_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v for v in re.split(r"[;,]\s*", value) if v]
    return [str(v).strip() for v in value if str(v).strip()]


def upsert_character(memory: Memory, name: str, *, tick: int, traits: Any = None,
                     goals: Any = None, state: str = "", description: str = "",
                     beside: str = "") -> tuple[Character, bool]:
    """Create a character or update the one of that name (or alias, or shorter or fuller
    form: see same_person, or spelling one letter off: see variant_of, with `beside`);
    returns (character, created). A fuller name becomes the name and the shorter one an
    alias, a variant spelling an alias; the id, and so the file, stay."""
    found = find_person(memory, name, beside)
    created = found is None
    if found is not None:
        _learn_name(found, str(name).strip())
        learned(memory.characters, found["id"])
        existing = found
    else:
        existing = {"id": slug(name), "name": str(name).strip(), "description": "",
                    "traits": [], "goals": [], "state": "", "first_seen": tick, "last_seen": tick}
        memory.characters[existing["id"]] = existing
    for trait in _clean_list(traits):
        if trait not in existing.setdefault("traits", []):
            existing["traits"].append(trait)
    for goal in _clean_list(goals):
        if goal not in existing.setdefault("goals", []):
            existing["goals"].append(goal)
    if state:
        existing["state"] = str(state).strip()
    if description and not existing.get("description"):
        existing["description"] = str(description).strip()
    existing["last_seen"] = max(int(existing.get("last_seen") or 0), tick)
    return existing, created


def _learn_name(entity: Character, name: str) -> None:
    """A new form of an entity's name: a fuller one becomes the name (the old one an
    alias); a shorter or other one becomes an alias."""
    current = str(entity.get("name", ""))
    if not name or normalize_name(name) in names_of(entity) or name_problem(name):
        return          # (a description is no form of a name: "Edda (the keeper)")
    aliases = list(entity.get("aliases") or [])
    if len(name.split()) > len(current.split()):
        entity["name"], name = name, current
    if normalize_name(name) not in {normalize_name(a) for a in aliases}:
        aliases.append(name)
    entity["aliases"] = aliases


def upsert_location(memory: Memory, name: str, *, tick: int,
                    description: str = "") -> tuple[Location, bool]:
    """Create a location or update the one of that name; returns (location, created)."""
    found = memory.find_location(name)
    created = found is None
    existing: Location = found if found is not None else {
        "id": slug(name), "name": str(name).strip(), "description": "", "first_seen": tick}
    if created:
        memory.locations[existing["id"]] = existing
    if description and not existing.get("description"):
        existing["description"] = str(description).strip()
    existing["last_seen"] = max(int(existing.get("last_seen") or 0), tick)
    return existing, created


def open_loop(memory: Memory, description: str, *, tick: int) -> tuple[Loop, bool]:
    """Open a plot loop, or return the open one with the same description (a resolved
    one with the same words stays resolved: the question is asked again, a new loop);
    the prompt's marks copied back are stripped."""
    description = strip_markers(description) or description
    existing = _match_loop(memory.loops, description, open_only=True)
    if existing is not None:
        return existing, False
    loop_id = unique_id(slug_cut(slug(description), LOOP_ID_CHARS),
                        {str(loop.get("id")).lower() for loop in memory.loops})
    loop: Loop = {"id": loop_id, "description": str(description).strip(), "status": "open",
            "opened_in": tick, "resolved_in": None, "scenes": [tick]}
    memory.loops.append(loop)
    return loop, True


def resolve_loop(memory: Memory, ref: str, *, tick: int, resolution: str = "") -> Loop | None:
    """Mark an open loop resolved; None when no open loop matches `ref`."""
    loop = _match_loop(memory.loops, ref, open_only=True)
    if loop is None:
        return None
    loop["status"] = "resolved"
    loop["resolved_in"] = tick
    if resolution:
        loop["resolution"] = str(resolution).strip()
    if tick not in loop.setdefault("scenes", []):
        loop["scenes"].append(tick)
    return loop


def _person_key(memory: Memory, name: str) -> str:
    """Who `name` is, for pairing: the character's id when known, else the name."""
    c = find_person(memory, name)
    return c["id"] if c is not None else normalize_name(str(name))


def add_relationship(memory: Memory, a: str, b: str, kind: str, *, tick: int,
                     description: str = "") -> tuple[Relationship, bool]:
    """Record or update the relationship between two characters: one entry per pair of
    people (by id, so "Mara" and "Mara Voss" are one), updated in place."""
    pair = sorted([str(a).strip(), str(b).strip()], key=str.lower)
    people = {_person_key(memory, a), _person_key(memory, b)}
    for rel in memory.relationships:
        if {_person_key(memory, rel.get("a", "")), _person_key(memory, rel.get("b", ""))} == people:
            rel["a"], rel["b"] = pair
            rel["kind"] = str(kind).strip() or rel.get("kind", "")
            if description:
                rel["description"] = str(description).strip()
            rel["updated_in"] = tick
            return rel, False
    taken = {str(r.get("id")).lower() for r in memory.relationships}
    rel = {"id": unique_id(relationship_id(*pair), taken), "a": pair[0], "b": pair[1],
           "kind": str(kind).strip(), "description": str(description).strip(), "since": tick,
           "updated_in": tick}
    memory.relationships.append(rel)
    return rel, True


def add_fact(memory: Memory, text: str, *, tick: int) -> bool:
    """Record a fact with the scene that established it; duplicates are ignored (looked
    up in the facts' index: story/memory/lookup.py)."""
    text = str(text).strip()
    if not text:
        return False
    said = fact_index(memory.facts).says(text.lower())
    if said is None:
        said = any(f.get("text", "").lower() == text.lower() for f in memory.facts)
    if said:
        return False
    memory.facts.append({"text": text, "scene": tick})
    return True


def query_memory(memory: Memory, query: str, limit: int = 5) -> list[str]:
    """Lines of memory that mention every word of `query` (a simple lookup for the planner)."""
    words = [w for w in re.findall(r"\w+", query.lower()) if len(w) > 2]
    lines = []
    for c in memory.characters.values():
        lines.append(f"character {c.get('name')}: {c.get('description', '')} "
                     f"traits={', '.join(c.get('traits', []))} state={c.get('state', '')}")
    for loc in memory.locations.values():
        lines.append(f"location {loc.get('name')}: {loc.get('description', '')}")
    for loop in memory.loops:
        lines.append(f"loop [{loop.get('status')}] {loop.get('description')}")
    for rel in memory.relationships:
        lines.append(f"relationship {rel.get('a')} & {rel.get('b')}: {rel.get('kind')}")
    for fact in memory.facts:
        lines.append(f"fact (scene {fact.get('scene')}): {fact.get('text')}")
    scored = [(sum(w in line.lower() for w in words), i, line) for i, line in enumerate(lines)]
    hits = [line for score, _, line in sorted(scored, key=lambda t: (-t[0], t[1])) if score]
    return hits[:limit]
