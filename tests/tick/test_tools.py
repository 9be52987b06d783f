"""The planner's tools: one entry per tool the schema offers, each changing memory."""

from __future__ import annotations

from novel_agent.story.decisions import TOOLS, ToolCall
from novel_agent.story.memory.store import Memory
from novel_agent.tick.stages.tools import TOOL_TABLE, run_tool


def test_every_tool_the_schema_offers_has_an_entry():
    assert sorted(TOOL_TABLE) == sorted(TOOLS)


def test_tools_change_memory_and_say_what_they_did():
    memory = Memory()
    assert run_tool(memory, ToolCall("create_character", "Mara Quill", "", "a keeper"), 1) == \
        "New character: Mara Quill — a keeper"
    assert run_tool(memory, ToolCall("create_character", "mara quill"), 2) == \
        "Known character: Mara Quill"
    assert run_tool(memory, ToolCall("update_character", "Mara Quill", "", "soaked"), 2) == \
        "Mara Quill now: soaked"
    assert memory.find_character("Mara Quill")["state"] == "soaked"
    assert run_tool(memory, ToolCall("update_character", "Nobody"), 2) == \
        "update_character skipped: no character named 'Nobody'"
    opened = run_tool(memory, ToolCall("open_loop", "", "", "who drew the map"), 2)
    assert opened.startswith("Opened loop [who_drew_the_map]")
    assert run_tool(memory, ToolCall("resolve_loop", "who_drew_the_map", "", "Tobin did"), 3) == \
        "Resolved loop [who_drew_the_map]: who drew the map — Tobin did"
    assert memory.loops[0]["status"] == "resolved" and memory.loops[0]["resolved_in"] == 3
    assert run_tool(memory, ToolCall("add_relationship", "Mara Quill"), 3) == \
        "add_relationship skipped: it needs two characters"
    assert run_tool(memory, ToolCall("teleport", "x"), 3) == "unknown tool 'teleport'"


def test_update_character_finds_mara_voss_by_her_first_name():
    from novel_agent.story.decisions import ToolCall
    from novel_agent.story.memory.store import Memory, upsert_character
    from novel_agent.tick.stages.tools import run_tool
    memory = Memory()
    upsert_character(memory, "Mara Voss", tick=1)
    said = run_tool(memory, ToolCall("update_character", "Mara", "", "soaked"), 2)
    assert said == "Mara Voss now: soaked"
    assert memory.characters["mara_voss"]["state"] == "soaked" and len(memory.characters) == 1
