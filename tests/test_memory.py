"""Memory files: a broken one is named with the line that is wrong."""

from __future__ import annotations

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.memory import load_memory
from novel_agent.names import name_problem


@pytest.mark.parametrize("name, text, line, says", [
    ("loops.yaml", "loops:\n- id: a\n  description: x\n- just a string\n", 4,
     "item 2 of 'loops' is 'just a string'"),
    ("facts.yaml", "# facts\n\nfacts: 12\n", 3, "expected 'facts:' followed by a list"),
    ("relationships.yaml", "relationships:\n- {a: A, b: B, kind: k}\n- {a: C, b: D, kind: k}\n"
     "- [C, D]\n", 4, "item 3 of 'relationships'"),
])
def test_a_broken_memory_list_names_its_file_and_line(tmp_path, name, text, line, says):
    (tmp_path / name).write_text(text)
    with pytest.raises(FileFormatError) as info:
        load_memory(tmp_path)
    assert info.value.file == str(tmp_path / name) and info.value.line == line
    assert says in str(info.value)
    assert str(info.value).startswith(f"{tmp_path / name}:{line}: ")


def test_names_are_deduplicated_and_junk_is_rejected_through_a_tick(project):
    from novel_agent.testing import ScriptedModel
    from ticking import run_ticks
    project.project_file.write_text(project.project_file.read_text()
                                    + "generation:\n  max_tools_per_tick: 5\n")
    calls = [{"tool": "create_character", "name": n, "target": "", "detail": "a keeper"}
             for n in ("Mara", "mara", "Mara Voss")]
    calls += [{"tool": "create_character", "name": "They didn't know what to do",
               "target": "", "detail": "x"},
              {"tool": "add_relationship", "name": "Mara", "target": "Tobin Keel",
               "detail": "rivals"}]
    plan = {"title": "The Map", "intention": "Mara Voss finds the map in the tower.",
            "pov": "Mara Voss", "location": "the tower", "characters": ["Mara", "Tobin Keel"],
            "tool_calls": calls}
    model = ScriptedModel().add("planner", plan)
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    memory = load_memory(project.memory_dir)
    maras = [c for c in memory.characters.values() if c["name"].lower().startswith("mara")]
    assert [(c["id"], c["name"], c["aliases"]) for c in maras] == [("mara", "Mara Voss", ["Mara"])]
    assert sorted(p.name for p in (project.memory_dir / "characters").glob("*.yaml")) == \
        ["mara.yaml", "tobin_keel.yaml"]
    [warning] = result.warnings
    assert warning.startswith("rejected name \"They didn't know what to do\": ")
    assert warning.endswith(name_problem("They didn't know what to do"))
    assert len(memory.relationships) == 1


def test_a_relationship_is_stored_once_per_pair_and_updated_in_place():
    from novel_agent.memory import Memory, add_relationship, upsert_character
    memory = Memory()
    upsert_character(memory, "Mara Voss", tick=1)
    upsert_character(memory, "Tobin Keel", tick=1)
    add_relationship(memory, "Mara Voss", "Tobin Keel", "rivals", tick=2)
    rel, created = add_relationship(memory, "Tobin Keel", "Mara", "allies", tick=5)
    assert not created and memory.relationships == [rel]
    assert (rel["kind"], rel["since"], rel["updated_in"]) == ("allies", 2, 5)


def test_a_loop_copied_back_with_the_prompts_marks_is_the_same_loop():
    from novel_agent.memory import Memory, open_loop
    memory = Memory()
    loop, created = open_loop(memory, "Edda feels lost, as if missing a piece of her past.",
                              tick=2)
    again, created_again = open_loop(
        memory, "Edda feels lost, as if missing a piece of her past. (opened in scene 2)",
        tick=3)
    assert created and not created_again and again is loop and len(memory.loops) == 1
    marked, _ = open_loop(memory, "[lamp_out] The lamp went out. (opened in scene 3)", tick=3)
    assert marked["description"] == "The lamp went out."
    assert memory.find_loop(f"[{loop['id']}] something else entirely") is loop
