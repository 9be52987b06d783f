"""The planner's tools: each changes memory (or looks into it) and reports a line.

Tools run on a copy of memory; nothing is written until the tick commits.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..decisions import Plan, ToolCall
from ..memory import (Memory, add_relationship, open_loop, query_memory, resolve_loop,
                      upsert_character, upsert_location)


def _create_character(memory: Memory, name: str, target: str, detail: str, tick: int) -> str:
    if not name:
        return "create_character skipped: no name"
    c, created = upsert_character(memory, name, tick=tick, description=detail)
    return f"{'New character' if created else 'Known character'}: {c['name']}" + (
        f" — {detail}" if detail else "")


def _update_character(memory: Memory, name: str, target: str, detail: str, tick: int) -> str:
    c = memory.find_character(name)
    if c is None:
        return f"update_character skipped: no character named {name!r}"
    upsert_character(memory, name, tick=tick, state=detail)
    return f"{c['name']} now: {detail}"


def _create_location(memory: Memory, name: str, target: str, detail: str, tick: int) -> str:
    if not name:
        return "create_location skipped: no name"
    loc, created = upsert_location(memory, name, tick=tick, description=detail)
    return f"{'New location' if created else 'Location'}: {loc['name']}" + (
        f" — {detail}" if detail else "")


def _add_relationship(memory: Memory, name: str, target: str, detail: str, tick: int) -> str:
    if not name or not target:
        return "add_relationship skipped: it needs two characters"
    rel, _ = add_relationship(memory, name, target, detail or "acquaintance", tick=tick)
    return f"Relationship: {rel['a']} & {rel['b']} — {rel['kind']}"


def _open_loop(memory: Memory, name: str, target: str, detail: str, tick: int) -> str:
    text = detail or name
    if not text:
        return "open_loop skipped: no question"
    loop, created = open_loop(memory, text, tick=tick)
    return f"{'Opened' if created else 'Still open'} loop [{loop['id']}]: {loop['description']}"


def _resolve_loop(memory: Memory, name: str, target: str, detail: str, tick: int) -> str:
    loop = resolve_loop(memory, name or target, tick=tick, resolution=detail)
    if loop is None:
        return f"resolve_loop skipped: no open loop {name!r}"
    return f"Resolved loop [{loop['id']}]: {loop['description']}" + (
        f" — {detail}" if detail else "")


def _query_memory(memory: Memory, name: str, target: str, detail: str, tick: int) -> str:
    hits = query_memory(memory, detail or name)
    return f"Memory on {detail or name!r}: " + ("; ".join(hits) if hits else "nothing found")


Tool = Callable[[Memory, str, str, str, int], str]
TOOL_TABLE: dict[str, Tool] = {
    "create_character": _create_character, "update_character": _update_character,
    "create_location": _create_location, "add_relationship": _add_relationship,
    "open_loop": _open_loop, "resolve_loop": _resolve_loop, "query_memory": _query_memory,
}


def run_tool(memory: Memory, call: ToolCall, tick: int) -> str:
    """Apply one tool call to `memory` (in place); return what it did, for the writer."""
    tool = TOOL_TABLE.get(call.tool)
    if tool is None:
        return f"unknown tool {call.tool!r}"
    return tool(memory, call.name.strip(), call.target.strip(), call.detail.strip(), tick)


def run_tools(memory: Memory, calls: Sequence[ToolCall], tick: int, limit: int) -> list[str]:
    """Run at most `limit` tool calls in order; return their result lines."""
    return [run_tool(memory, call, tick) for call in list(calls)[:limit]]


def ensure_cast(memory: Memory, plan: Plan, tick: int) -> list[str]:
    """Make sure the POV, the characters present and the location exist in memory."""
    notes = []
    for name in [plan.pov, *plan.characters]:
        if name and memory.find_character(name) is None:
            upsert_character(memory, name, tick=tick)
            notes.append(f"New character: {name}")
        elif name:
            upsert_character(memory, name, tick=tick)
    if plan.location and memory.find_location(plan.location) is None:
        upsert_location(memory, plan.location, tick=tick)
        notes.append(f"New location: {plan.location}")
    return notes
