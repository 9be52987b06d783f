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


def dead_book() -> Memory:
    """Mara Quill alive; Ydris Brannock drowned in scene 30; a loop open."""
    from novel_agent.story.memory.store import open_loop, upsert_character
    memory = Memory()
    upsert_character(memory, "Mara Quill", tick=1)
    ydris, _ = upsert_character(memory, "Ydris Brannock", tick=2)
    ydris.update(status="dead", status_in=30, status_how="drowned at the weir")
    open_loop(memory, "who drew the map", tick=3)
    return memory


def test_a_tool_call_that_makes_the_dead_act_is_refused_saying_why():
    # issue 50, item 10: on main a relationship was made with Ydris Brannock at tick 36,
    # six scenes after he drowned, and his state could be set as if he were alive
    from novel_agent.tick.stages.tools import REJECTED
    memory = dead_book()
    calls = [ToolCall("add_relationship", "Mara Quill", "Ydris Brannock", "rivals"),
             ToolCall("add_relationship", "Ydris", "Mara Quill", "lovers"),
             ToolCall("update_character", "Ydris Brannock", "", "walks to the harbour"),
             ToolCall("create_character", "Ydris Brannock", "", "a ferryman")]
    said = [run_tool(memory, call, 36) for call in calls]
    assert all(line.startswith(REJECTED) for line in said), said
    assert said[0] == ("rejected name 'Ydris Brannock': Ydris Brannock is dead since scene "
                       "30: the dead cannot begin a relationship, only be remembered")
    assert "Ydris Brannock is dead since scene 30: the dead cannot have a new state" in said[2]
    assert "the dead cannot come into a scene" in said[3]
    ydris = memory.find_character("Ydris Brannock")
    assert memory.relationships == [] and not ydris.get("state")
    assert ydris["last_seen"] == 2 and not ydris.get("description")
    # the living still may: and a relationship of the living is no act of the dead
    assert run_tool(memory, ToolCall("create_character", "Tobin Keel"), 36) == \
        "New character: Tobin Keel"
    assert run_tool(memory, ToolCall("add_relationship", "Mara Quill", "Tobin Keel",
                                     "siblings"), 36).startswith("Relationship:")


def test_a_loop_the_dead_would_resolve_is_given_to_the_pov_or_left_open():
    from novel_agent.tick.stages.tools import REJECTED
    memory = dead_book()
    said = run_tool(memory, ToolCall("resolve_loop", "who_drew_the_map", "",
                                     "Ydris Brannock finds the answer"), 40, pov="Mara Quill")
    assert said == ("Resolved loop [who_drew_the_map]: who drew the map — Mara Quill finds "
                    "the answer (given to Mara Quill: Ydris Brannock is dead since scene 30)")
    assert memory.loops[0]["resolution"] == "Mara Quill finds the answer"
    memory = dead_book()
    said = run_tool(memory, ToolCall("resolve_loop", "who_drew_the_map", "",
                                     "At dawn, Ydris finds it in the chapel"), 40,
                    pov="Ydris Brannock")           # no living POV to give it to
    assert said.startswith(REJECTED) and "the loop stays open" in said
    assert memory.loops[0]["status"] == "open"
    # the dead named, not acting: resolved as written
    for how in ("Mara finds Ydris Brannock's letter", "Ydris Brannock lies in the chapel"):
        memory = dead_book()
        assert run_tool(memory, ToolCall("resolve_loop", "who_drew_the_map", "", how), 40,
                        pov="Mara Quill").endswith(f"— {how}")
