"""The planner's tools: each changes memory (or looks into it) and reports a line.

Tools run on a copy of memory; nothing is written until the tick commits. A
name that is not a plausible name (a sentence, a prompt marker, the book's
title: see names.py) is never written to memory: its tool reports a line
starting with REJECTED, which the tick turns into a warning. So is a call that
makes one memory has as dead act (`DEAD_ACT`: a relationship with them, their
state, bringing them into the scene); a loop's resolution whose finder is one of
the dead is given to the scene's POV (refused when there is no living one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from novel_agent.context.presence import gone, status_text
from novel_agent.story.decisions import Plan, ToolCall
from novel_agent.story.memory.records import Character, Entity, is_open
from novel_agent.story.memory.store import (
    Memory,
    add_relationship,
    find_person,
    open_loop,
    query_memory,
    resolve_loop,
    upsert_character,
    upsert_location,
)
from novel_agent.text.names import loop_problem, person_problem

REJECTED = "rejected name"
NameCheck = Callable[[str], "str | None"]


def rejected(name: str, why: str) -> str:
    """The line a tool reports for a name it will not write to memory."""
    return f"{REJECTED} {name[:80]!r}: {why}"


def _creator(kind: str, upsert: Callable[..., tuple[Entity, bool]], new: str,
             known: str) -> Tool:
    """create_character / create_location: make it (or find it) and say which."""
    def create(memory: Memory, name: str, target: str, detail: str, tick: int,
               beside: str) -> str:
        if not name:
            return f"create_{kind} skipped: no name"
        entity, created = upsert(memory, name, tick=tick, description=detail,
                                 **({"beside": beside} if kind == "character" else {}))
        return f"{new if created else known}: {entity['name']}" + (
            f" — {detail}" if detail else "")
    return create


def _update_character(memory: Memory, name: str, target: str, detail: str, tick: int,
                      beside: str) -> str:
    c = find_person(memory, name, beside)
    if c is None:
        return f"update_character skipped: no character named {name!r}"
    upsert_character(memory, str(c["name"]), tick=tick, state=detail)
    return f"{c['name']} now: {detail}"


def _add_relationship(memory: Memory, name: str, target: str, detail: str, tick: int,
                      beside: str) -> str:
    if not name or not target:
        return "add_relationship skipped: it needs two characters"
    rel, _ = add_relationship(memory, name, target, detail or "acquaintance", tick=tick)
    return f"Relationship: {rel['a']} & {rel['b']} — {rel['kind']}"


def _open_loop(memory: Memory, name: str, target: str, detail: str, tick: int,
               beside: str) -> str:
    text = detail or name
    if not text:
        return "open_loop skipped: no question"
    same = memory.find_loop(name) if name else None
    if same is not None and is_open(same):   # its id, asked again
        return f"Still open loop [{same['id']}]: {same['description']}"
    why = loop_problem(text)
    if why:
        return f"open_loop skipped: {text[:80]!r} is {why}"
    loop, created = open_loop(memory, text, tick=tick)
    return f"{'Opened' if created else 'Still open'} loop [{loop['id']}]: {loop['description']}"


def _resolve_loop(memory: Memory, name: str, target: str, detail: str, tick: int,
                  beside: str) -> str:
    loop = resolve_loop(memory, name or target, tick=tick, resolution=detail)
    if loop is None:
        return f"resolve_loop skipped: no open loop {name!r}"
    return f"Resolved loop [{loop['id']}]: {loop['description']}" + (
        f" — {detail}" if detail else "")


def _query_memory(memory: Memory, name: str, target: str, detail: str, tick: int,
                  beside: str) -> str:
    hits = query_memory(memory, detail or name)
    return f"Memory on {detail or name!r}: " + ("; ".join(hits) if hits else "nothing found")


Tool = Callable[[Memory, str, str, str, int, str], str]   # ..., tick, beside
TOOL_TABLE: dict[str, Tool] = {
    "create_character": _creator("character", upsert_character, "New character",
                                 "Known character"),
    "update_character": _update_character,
    "create_location": _creator("location", upsert_location, "New location", "Location"),
    "add_relationship": _add_relationship,
    "open_loop": _open_loop, "resolve_loop": _resolve_loop, "query_memory": _query_memory,
}


NAMING = {"create_character": ("name",), "create_location": ("name",),
          "add_relationship": ("name", "target")}
PEOPLE = {"create_character": ("name",), "add_relationship": ("name", "target")}
# The calls that make the people they name act, and what the dead cannot do.
DEAD_ACT = {"create_character": (("name",), "come into a scene"),
            "update_character": (("name",), "have a new state"),
            "add_relationship": (("name", "target"), "begin a relationship")}
# What the dead are said to do that is no act: "Ydris Brannock lies in the churchyard".
STILL = {"is", "was", "were", "lies", "lay", "remains", "remained", "rests", "rested", "had",
         "has", "died", "drowned", "fell", "lived", "dead"}
_CLAUSES = re.compile(r"[.;:!?,]|\b(?:and then|then)\b")
_SUBJECT = re.compile(r"(?:(?:and|so|but|finally|at last)\s+)?((?:[A-Z][\w’-]*)(?:\s+[A-Z][\w’-]*)*)"
                      r"\s+([a-z]+)")


def dead(memory: Memory, name: str) -> Character | None:
    """The character `name` names when memory has them as dead (else None)."""
    who = find_person(memory, name) if name else None
    return who if who is not None and gone(who) == "dead" else None


def dead_finder(memory: Memory, resolution: str) -> tuple[str, Character] | None:
    """The name, as written, and the character of one of the dead a loop's `resolution`
    makes its finder: the subject of one of its clauses, doing something ("Ydris
    Brannock finds the answer"; not "Ydris Brannock lies in the churchyard", nor "Mara
    finds Ydris Brannock's letter"). None when no dead one acts in it."""
    for clause in _CLAUSES.split(resolution):
        found = _SUBJECT.match(clause.strip(" ,"))
        if found and found.group(2) not in STILL:
            who = dead(memory, found.group(1))
            if who is not None:
                return found.group(1), who
    return None


def refused_for_the_dead(memory: Memory, call: ToolCall) -> str:
    """The REJECTED line of a call that makes one of the dead act ("" when it makes none)."""
    fields, what = DEAD_ACT.get(call.tool, ((), ""))
    for field in fields:
        value = getattr(call, field).strip()
        who = dead(memory, value)
        if who is not None:
            return rejected(value, f"{who['name']} is {status_text(who, how=False)}: the dead "
                                   f"cannot {what}, only be remembered")
    return ""


def run_tool(memory: Memory, call: ToolCall, tick: int, check: NameCheck | None = None,
             pov: str = "", beside: str = "") -> str:
    """Apply one tool call to `memory` (in place); return what it did, for the writer.
    `check(name)` says why a name is not one (None if it is); `pov`: the scene's POV, who
    finds the answer of a loop the planner gave one of the dead to find; `beside`: the
    names the plan says with it (store.cast_text: a spelling one letter off a known
    character's is that character, unless both are said: store.variant_of)."""
    tool = TOOL_TABLE.get(call.tool)
    if tool is None:
        return f"unknown tool {call.tool!r}"
    for field in NAMING.get(call.tool, ()):
        value = getattr(call, field).strip()
        unknown = value and find_person(memory, value, beside) is None
        why = check(value) if check and unknown else None
        if not why and unknown and field in PEOPLE.get(call.tool, ()):
            why = person_problem(value)
        if why:
            return rejected(value, why)
    refused = refused_for_the_dead(memory, call)
    if refused:
        return refused
    detail, given = call.detail.strip(), ""
    finder = dead_finder(memory, detail) if call.tool == "resolve_loop" else None
    if finder is not None:
        said, who = finder
        heir = find_person(memory, pov) if pov else None
        dead_since = f"{who['name']} is {status_text(who, how=False)}"
        if heir is None or gone(heir):
            return rejected(said, f"{dead_since}: the dead cannot find the answer, and no "
                                  "living POV can instead; the loop stays open")
        detail = detail.replace(said, str(heir["name"]), 1)
        given = f" (given to {heir['name']}: {dead_since})"
    return tool(memory, call.name.strip(), call.target.strip(), detail, tick, beside) + given


def run_tools(memory: Memory, calls: Sequence[ToolCall], tick: int, limit: int,
              check: NameCheck | None = None, pov: str = "", beside: str = "") -> list[str]:
    """Run at most `limit` tool calls in order; return their result lines (`pov`, `beside`:
    see run_tool)."""
    return [run_tool(memory, call, tick, check, pov, beside) for call in list(calls)[:limit]]


def plan_names(plan: Plan, limit: int) -> list[str]:
    """The people and places a plan names: its POV, its cast, and the names its tool calls
    (the first `limit`) give."""
    return [plan.pov, *plan.characters,
            *(getattr(call, field) for call in list(plan.tool_calls)[:limit]
              for field in NAMING.get(call.tool, ()))]


def ensure_cast(memory: Memory, plan: Plan, tick: int, check: NameCheck | None = None,
                beside: str = "") -> list[str]:
    """Make sure the POV, the characters present and the location exist in memory
    (a name that is not one is reported, not created; one of the dead is reported, not
    brought into the scene: among_the_living keeps a dead POV only when no one living
    can tell it; `beside`: see run_tool)."""
    notes = []
    for name in [plan.pov, *plan.characters]:
        known = find_person(memory, name, beside) is not None if name else True
        why = (check(name) if check else None) or person_problem(name) if not known else None
        who = dead(memory, name)
        if who is not None:
            why = f"{who['name']} is {status_text(who, how=False)}: the dead cannot come " \
                  "into a scene, only be remembered"
        if why:
            notes.append(rejected(name, why))
        elif name:
            _, created = upsert_character(memory, name, tick=tick, beside=beside)
            if created:
                notes.append(f"New character: {name}")
    if plan.location and memory.find_location(plan.location) is None:
        why = check(plan.location) if check else None
        if why:
            notes.append(rejected(plan.location, why))
        else:
            upsert_location(memory, plan.location, tick=tick)
            notes.append(f"New location: {plan.location}")
    elif plan.location:
        upsert_location(memory, plan.location, tick=tick)
    return notes
