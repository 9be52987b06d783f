"""Memory files: a broken one is named with the line that is wrong."""

from __future__ import annotations

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import plain_copy
from novel_agent.text.names import name_problem


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
    from tests.support.scripted import ScriptedModel
    from tests.support.ticking import run_ticks
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
    from novel_agent.story.memory.store import Memory, add_relationship, upsert_character
    memory = Memory()
    upsert_character(memory, "Mara Voss", tick=1)
    upsert_character(memory, "Tobin Keel", tick=1)
    add_relationship(memory, "Mara Voss", "Tobin Keel", "rivals", tick=2)
    rel, created = add_relationship(memory, "Tobin Keel", "Mara", "allies", tick=5)
    assert not created and memory.relationships == [rel]
    assert (rel["kind"], rel["since"], rel["updated_in"]) == ("allies", 2, 5)


def test_a_loop_copied_back_with_the_prompts_marks_is_the_same_loop():
    from novel_agent.story.memory.store import Memory, open_loop
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


def test_a_loops_id_is_cut_at_a_word_and_an_id_cut_before_still_finds_its_loop():
    # on main the id was the slug's first 40 characters: "…who_vanished_are_r" (issue 51)
    from novel_agent.story.memory.store import Memory, open_loop, resolve_loop
    said = "Where these villagers who vanished are really kept?"
    memory = Memory()
    loop, _ = open_loop(memory, said, tick=2)
    assert loop["id"] == "where_these_villagers_who_vanished_are"
    short, _ = open_loop(memory, "Who drew the map?", tick=2)
    assert short["id"] == "who_drew_the_map"
    older = Memory(loops=[{"id": "where_these_villagers_who_vanished_are_r", "description":
                           said, "status": "open", "opened_in": 1, "scenes": [1]}])
    again, created = open_loop(older, said, tick=3)
    assert not created and again["id"] == "where_these_villagers_who_vanished_are_r"
    assert older.find_loop("where_these_villagers_who_vanished_are_r") is again
    assert resolve_loop(older, "where_these_villagers_who_vanished_are_r", tick=4) is again


# -- bug A: the extractor finds characters as the planner's tools do ----------------------

def test_an_extraction_that_names_mara_updates_mara_voss_and_keeps_her_relationship(project):
    from tests.support.scripted import ScriptedModel
    from tests.support.ticking import run_ticks
    calls = [{"tool": "create_character", "name": n, "target": "", "detail": "a keeper"}
             for n in ("Mara Voss", "Tobin Keel")]
    plan = {"title": "The Map", "intention": "Mara Voss finds the map.", "pov": "Mara Voss",
            "location": "the tower", "characters": ["Mara Voss", "Tobin Keel"],
            "tool_calls": calls}
    extraction = {"summary": ["Mara and Tobin find the map."], "facts": [],
                  "characters": [{"name": "Mara", "state": "soaked to the bone"}],
                  "loops_opened": [], "loops_resolved": [],
                  "relationships": [{"a": "Mara", "b": "Tobin", "kind": "allies"}]}
    model = ScriptedModel().add("planner", plan).add("extractor", extraction)
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    memory = load_memory(project.memory_dir)
    assert memory.characters["mara_voss"]["state"] == "soaked to the bone"
    assert [(r["id"], r["a"], r["b"], r["kind"]) for r in memory.relationships] == \
        [("mara_voss--tobin_keel", "Mara Voss", "Tobin Keel", "allies")]
    assert "relationship: Mara Voss & Tobin Keel" in result.memory_changes
    assert (project.memory_dir / "relationships" / "mara_voss--tobin_keel.yaml").is_file()


def test_an_extraction_about_someone_unknown_or_one_person_twice_changes_nothing():
    from novel_agent.story.decisions import Extraction
    from novel_agent.story.memory.extraction import apply_extraction as apply
    from novel_agent.story.memory.store import Memory, upsert_character
    memory = Memory()
    upsert_character(memory, "Mara Voss", tick=1)
    changes = apply(memory, Extraction(summary=["x"], characters=[{"name": "Ilse", "state": "x"}],
                                       relationships=[{"a": "Mara", "b": "Mara Voss",
                                                       "kind": "self"}]), tick=2)
    assert changes == [] and memory.relationships == [] and list(memory.characters) == \
        ["mara_voss"]


# -- bug B: a resolved loop is not the open one ------------------------------------------

def test_a_question_asked_again_after_its_loop_was_resolved_opens_a_new_loop():
    from novel_agent.story.decisions import ToolCall
    from novel_agent.story.memory.store import Memory, open_loop, resolve_loop
    from novel_agent.tick.stages.tools import run_tool
    memory = Memory()
    first, _ = open_loop(memory, "Who drew the map?", tick=1)
    assert resolve_loop(memory, "who drew the map?", tick=3)["id"] == first["id"]
    said = run_tool(memory, ToolCall("open_loop", "", "", "Who drew the map?"), 9)
    assert said == "Opened loop [who_drew_the_map_2]: Who drew the map?"
    assert [(loop["id"], loop["status"]) for loop in memory.loops] == \
        [("who_drew_the_map", "resolved"), ("who_drew_the_map_2", "open")]
    again, created = open_loop(memory, "who drew the map?", tick=10)   # still open: the same
    assert (again["id"], created) == ("who_drew_the_map_2", False)
    assert resolve_loop(memory, "Who drew the map?", tick=11)["id"] == "who_drew_the_map_2"
    assert memory.find_loop("who_drew_the_map")["resolved_in"] == 3


# -- the layout: one file per loop and per relationship, the file name is the id ---------

def test_each_loop_and_relationship_is_a_file_named_by_its_id(project):
    from tests.support.ticking import run_ticks
    run_ticks(project, 12)
    memory = load_memory(project.memory_dir)
    assert memory.loops and memory.relationships
    for kind in ("loops", "relationships"):
        files = sorted(p.stem for p in (project.memory_dir / kind).glob("*.yaml"))
        assert files == sorted(item["id"] for item in getattr(memory, kind))
    assert not (project.memory_dir / "loops.yaml").exists()
    assert not (project.memory_dir / "relationships.yaml").exists()


@pytest.mark.parametrize("kind, name, text", [
    ("loops", "the_map", "id: a_map\ndescription: who drew it\n"),
    ("relationships", "mara--tobin", "a: Mara\nb: Tobin\nkind: allies\nid: mara--ilse\n"),
])
def test_an_id_that_disagrees_with_its_file_name_is_named(tmp_path, kind, name, text):
    path = tmp_path / kind / f"{name}.yaml"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        load_memory(tmp_path)
    assert str(info.value).startswith(f"{path}:{text[:text.index('id:')].count(chr(10)) + 1}: ")
    assert "disagrees with the file name: the file name is the id" in str(info.value)


def test_a_loop_file_with_a_wrong_type_names_its_line(tmp_path):
    (tmp_path / "loops").mkdir()
    (tmp_path / "loops" / "x.yaml").write_text("description: d\nscenes: x\n")
    with pytest.raises(FileFormatError, match=r"x.yaml:2: 'scenes' must be a list of tick"):
        load_memory(tmp_path)


def test_memory_read_again_parses_only_what_changed_and_never_hands_out_the_cache(tmp_path):
    from novel_agent.story.memory import read as read_module
    from novel_agent.story.memory.read import read_memory
    folder = tmp_path / "memory"
    (folder / "characters").mkdir(parents=True)
    mara, tobin = folder / "characters" / "mara.yaml", folder / "characters" / "tobin.yaml"
    mara.write_text("name: Mara\ntraits: [wary]\n")
    tobin.write_text("name: Tobin\n")
    memory, files = read_memory(folder)
    memory.characters["mara"]["traits"].append("brave")      # a tick changes its copy
    memory.characters["tobin"]["name"] = "Tobias"
    again, files_again = read_memory(folder)
    assert files_again.characters["mara"]["traits"] == ["wary"] == files.characters["mara"]["traits"]
    assert again.characters["tobin"]["name"] == "Tobin"
    parsed = []
    real = read_module._parse_entity
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(read_module, "_parse_entity",
                      lambda folder, path: parsed.append(path.name) or real(folder, path))
        with mara.open("a") as handle:                       # edited in place, by hand
            handle.write("state: asleep\n")
        memory, _ = read_memory(folder)
    assert parsed == ["mara.yaml"] and memory.characters["mara"]["state"] == "asleep"


def test_a_character_or_place_is_found_by_id_name_or_alias_however_it_is_written():
    from novel_agent.story.memory.store import Memory
    memory = Memory(characters={"mara_voss": {"id": "mara_voss", "name": "Mara Voss",
                                              "aliases": ["The Keeper"]},
                                "blank": {"id": "blank", "name": " "}},
                    locations={"harbour": {"id": "harbour", "name": "The Harbour"}})
    assert memory.find_character("mara_voss")["name"] == "Mara Voss"
    assert memory.find_character("  mara VOSS. ")["id"] == "mara_voss"
    assert memory.find_character("the keeper")["id"] == "mara_voss"
    assert memory.find_location("harbour.")["id"] == "harbour"
    assert memory.find_character("Tobin") is None and memory.find_character("...") is None


def test_plain_copy_copies_every_dict_and_list_and_keeps_the_scalars():
    import datetime
    when = datetime.date(2020, 1, 2)
    data = {"name": "Mara", "traits": ["calm", 3, 1.5, None, True],
            "objects": [{"what": "a key", "since": 4, "tags": ["brass"]}], "met": when}
    copied = plain_copy(data)
    assert copied == data
    assert copied["traits"] is not data["traits"] and copied["objects"] is not data["objects"]
    assert copied["objects"][0] is not data["objects"][0]
    assert copied["objects"][0]["tags"] is not data["objects"][0]["tags"]
    copied["objects"][0]["tags"].append("old")
    assert data["objects"][0]["tags"] == ["brass"]


def test_loop_marks_are_kept_for_the_same_loops_and_made_again_for_others():
    from novel_agent.story.memory.store import loop_marks, touches
    loops = [{"id": f"l{n}", "description": f"what the {word} token of Mara Quill means"}
             for n, word in enumerate(["rajunjun", "halurra", "korralor"])]
    first = loop_marks(loops)
    assert first == loop_marks([dict(l) for l in loops]) == {
        "l0": {"rajunjun"}, "l1": {"halurra"}, "l2": {"korralor"}}
    first["l0"] = frozenset()                       # the caller's dict is its own
    assert loop_marks(loops)["l0"] == {"rajunjun"}
    loops[1]["description"] = "who rang the rajunjun bell"
    marks = loop_marks(loops)
    assert marks["l1"] == {"rajunjun"}                # made again: "halurra" is gone
    assert marks["l0"] == {"rajunjun", "token", "quill", "means"}   # now in two loops only
    assert touches("who rang the rajunjun bell", marks["l1"])
    assert not touches("the halurra token", marks["l1"])


# -- one person spelled two ways (issue 50, item 14) -------------------------------------


def holloways():
    from novel_agent.story.memory.store import Memory, upsert_character
    memory = Memory()
    for name in ("Katrin Holloway", "Ansel Holloway", "Mara Voss"):
        upsert_character(memory, name, tick=1)
    return memory


def test_a_full_name_one_letter_off_is_recorded_under_the_first_spelling():
    """Fails on main: "Katryn Holloway" was a new character with a file of its own."""
    from novel_agent.story.memory.store import find_person, upsert_character, variant_lines
    memory = holloways()
    assert variant_lines(memory, ["Katryn Holloway", "Ansel Holloway", "Mira Voss"]) == [
        "“Katryn Holloway” is taken for Katrin Holloway, one letter off: the same person "
        "(recorded as Katrin Holloway, “Katryn Holloway” kept as an alias)"]
    who, created = upsert_character(memory, "Katryn Holloway", tick=4, state="at the weir")
    assert not created and who["id"] == "katrin_holloway" and who["name"] == "Katrin Holloway"
    assert who["aliases"] == ["Katryn Holloway"] and who["state"] == "at the weir"
    assert sorted(memory.characters) == ["ansel_holloway", "katrin_holloway", "mara_voss"]
    assert find_person(memory, "katryn holloway") is who
    assert variant_lines(memory, ["Katryn Holloway"]) == []       # said once: now an alias
    _, created = upsert_character(memory, "Mira Voss", tick=4)     # a sister, not Mara
    assert created and find_person(memory, "Mira Voss")["id"] == "mira_voss"


def test_two_spellings_written_side_by_side_are_two_people():
    from novel_agent.story.decisions import Extraction
    from novel_agent.story.memory.extraction import apply_extraction
    memory = holloways()
    prose = ("Katrin Holloway and her cousin Katryn Holloway came down to the quay together, "
             "and neither would say who had sent for them.")
    extraction = Extraction(summary=["The cousins come to the quay."], facts=[],
                            characters=[{"name": "Katryn Holloway", "state": "on the quay"}])
    changes = apply_extraction(memory, extraction, tick=5, prose=prose)
    assert changes == ["new character Katryn Holloway: on the quay"]
    assert memory.characters["katryn_holloway"]["name"] == "Katryn Holloway"
    assert "aliases" not in memory.characters["katrin_holloway"]


def test_a_spelling_one_letter_off_two_known_people_is_neither():
    from novel_agent.story.memory.store import find_person
    memory = holloways()
    memory.characters["katran_holloway"] = {"id": "katran_holloway",   # recorded by hand
                                            "name": "Katran Holloway"}
    assert find_person(memory, "Katran Holloway")["id"] == "katran_holloway"
    assert find_person(memory, "Katren Holloway") is None   # Katrin's or Katran's: neither
    assert find_person(memory, "Katrinn Holloway")["id"] == "katrin_holloway"
