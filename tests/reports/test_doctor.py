"""`novel doctor`: every problem listed with its fix; --fix applies the safe ones."""

from __future__ import annotations

import os
import re
import shutil
import stat

import pytest

from novel_agent.history.store import History
from novel_agent.reports.doctor import diagnose
from novel_agent.story.project.folder import create_project
from novel_agent.story.scenes import load_scene
from tests.support.clirunner import invoke
from tests.support.projects import files_of
from tests.support.ticking import run_ticks


def doctor(project, *flags):
    return invoke("doctor", "-p", str(project.root), *flags)


def test_a_clean_project_is_clean(project):
    run_ticks(project, 3)
    result = doctor(project)
    assert result.exit_code == 0 and result.output == "harbour: clean\n"


def test_every_problem_is_listed_with_its_fix(project):
    run_ticks(project, 4)
    project.scene_path(2).rename(project.scenes_dir / "scene_9.md")   # a gap, a stray
    (project.scenes_dir / "scene_04.md").write_text("---\ntick: 4\n---\nA copy.\n")
    project.index_db.write_bytes(b"garbage" * 1000)
    project.state_file.write_text("tick: 1\n")
    (project.summaries_dir / ".checkpoint_010.md.ab12.tmp").write_text("half")
    char = next((project.memory_dir / "characters").glob("*.yaml"))
    char.write_text(char.read_text().replace(f"id: {char.stem}", "id: other"))
    out = doctor(project).output
    for expected in ("tick 4 has more than one scene file",
                     "scenes/scene_002.md is missing (the scenes go on to tick 9)\n"
                     "         fix: bring back its last good copy from the history, entry ",
                     "scenes missing for ticks 5–8\n         fix: the history holds none of "
                     "them: restore them from a copy of your own, or renumber the scenes after "
                     "them",
                     "scene_9.md:2: front matter says tick 2 but the file name says 9",
                     ".novel/state.yaml says tick 1, the scenes end at tick 9",
                     "summaries/.checkpoint_010.md.ab12.tmp: a temp file of a killed write",
                     f"{char}:1: id 'other' disagrees with the file name",
                     ".novel/index.db is damaged"):
        assert expected in out, out
    assert out.count("fix: ") == len(diagnose(project))
    fixed = doctor(project, "--fix")
    assert fixed.exit_code == 1
    assert "fixed    .novel/index.db is damaged" in fixed.output
    assert "fixed    .novel/state.yaml says tick 1" in fixed.output
    assert "left     tick 4 has more than one scene file" in fixed.output
    assert "fixed    scenes/scene_002.md is missing (the scenes go on to tick 9): brought " \
           "back from the history, entry " in fixed.output
    assert load_scene(project.scene_path(2)).tick == 2
    assert not (project.summaries_dir / ".checkpoint_010.md.ab12.tmp").exists()
    assert project.scene_path(4).is_file() and (project.scenes_dir / "scene_04.md").is_file()


def test_a_plan_without_its_scene_is_found(project):
    run_ticks(project, 2)
    project.scene_path(2).unlink()
    assert "plans/plan_002.yaml has no scene after it" in doctor(project).output


@pytest.mark.parametrize("umask", [0o022, 0o027], ids=oct)
def test_files_follow_the_umask(projects_dir, umask):
    """Under 027 a mode hard-coded to 0644 (or mkstemp's 0600) fails; under 022 too."""
    old = os.umask(umask)
    try:
        project = create_project(projects_dir / "harbour", {"name": "harbour",
                                                            "premise": "A keeper."},
                                 config={"llm": {"provider": "offline"}})
        run_ticks(project, 12)
    finally:
        os.umask(old)
    memory = project.memory_dir
    files = [project.project_file, project.scene_path(12), project.plan_path(12),
             project.state_file, memory / "facts.yaml",
             next((memory / "characters").glob("*.yaml")), next((memory / "loops").glob("*.yaml")),
             next((memory / "relationships").glob("*.yaml")),
             next(project.summaries_dir.glob("*.md")), next(project.log_dir.glob("*.json"))]
    modes = {str(f.relative_to(project.root)): oct(stat.S_IMODE(f.stat().st_mode)) for f in files}
    assert modes == {name: oct(0o666 & ~umask) for name in modes}
    assert stat.S_IMODE(memory.stat().st_mode) == 0o777 & ~umask


def test_stray_files_in_scenes_and_broken_lore_are_listed_with_their_fix(project):
    run_ticks(project, 2)
    (project.scenes_dir / "chapter1.md").write_text("# Chapter 1\n\nMara woke.\n")
    (project.scenes_dir / "scene_2.txt").write_text("not markdown")
    (project.lore_dir / "locket.yaml").write_text("keys: [locket]\ncontent: brass\n"
                                                  "priority: high\n")
    (project.lore_dir / "broken.yaml").write_text("keys: [a\n")
    result = doctor(project)
    assert result.exit_code == 1
    assert result.output == (
        "problem  scenes/chapter1.md is not a scene file (only scene_NNN.md are read): it is "
        "not part of the story\n"
        "         fix: move it out of scenes/ and bring it in with `novel import chapter1.md`\n"
        "problem  scenes/scene_2.txt is not a scene file (only scene_NNN.md are read): it is "
        "not part of the story\n"
        "         fix: move it out of scenes/ and bring it in with `novel import scene_2.txt`\n"
        f"problem  {project.lore_dir / 'broken.yaml'}:1: invalid YAML: the '[' opened here is "
        "never closed: add the ']' (or quote the value if the bracket is part of it); the file "
        "is skipped\n"
        "         fix: fix the file (`novel lore check` shows what is read)\n"
        f"problem  {project.lore_dir / 'locket.yaml'}:3: 'priority' must be a whole number, "
        "not 'high'; the entry is skipped\n"
        "         fix: fix the file (`novel lore check` shows what is read)\n")
    assert doctor(project, "--fix").exit_code == 1      # nothing here is fixed for you
    assert (project.scenes_dir / "chapter1.md").is_file()


def test_a_project_yaml_that_does_not_load_is_a_problem(project):
    run_ticks(project, 1)
    text = project.project_file.read_text()
    project.project_file.write_text(text + "llm: {temperature: 0.5\n")
    result = doctor(project)
    assert result.exit_code == 1
    line = len(text.splitlines()) + 1
    assert (f"problem  {project.project_file}:{line}: invalid YAML: the '{{' opened here is never "
            "closed") in result.output
    assert "fix: bring back its last good copy from the history, entry " in result.output
    shutil.rmtree(project.novel_dir / "history.git")
    result = doctor(project)
    assert "fix: the history holds no good copy of it: fix project.yaml (tick, run and status " \
           "stop on it)" in result.output


def test_committed_scaffolding_and_a_short_scene_are_problems(project):
    run_ticks(project, 2)
    one = project.scene_path(1)
    one.write_text(one.read_text() + "\n- Open loop [the_stranger_cries]: who is he?\n"
                   "Title: The Stranger's Descent\n")
    two = project.scene_path(2)
    head, _, _ = two.read_text().rpartition("---\n")
    two.write_text(head + "---\nShe waited by the lamp.\n")
    out = doctor(project).output
    assert ("problem  scenes/scene_001.md holds 2 lines of the prompt's scaffolding, not prose "
            "(first: '- Open loop [the_stranger_cries]: who is he?')") in out
    assert "problem  scenes/scene_002.md has 5 words, under half of generation.scene_min_words" in out


def damage_the_book(project):
    """The issue's damage: a scene made binary, one emptied, one deleted mid-book, a plan
    deleted, a summary made binary, three memory files of broken YAML, project.yaml too."""
    project.scene_path(5).write_bytes(bytes(range(256)) * 2)
    project.scene_path(7).write_text("")
    project.scene_path(10).unlink()
    project.plan_path(3).unlink()
    (project.summaries_dir / "checkpoint_010.md").write_bytes(b"\xff\xfe" * 40)
    (project.memory_dir / "facts.yaml").write_text("facts: [\n")
    characters = sorted((project.memory_dir / "characters").glob("*.yaml"))[:2]
    for path in characters:
        path.write_text("name: {\n")
    project.project_file.write_text(project.project_file.read_text() + "premise: [\n")
    return characters


def test_doctor_fix_brings_back_each_damaged_or_deleted_file_from_the_history(project, cli):
    run_ticks(project, 12)
    before = files_of(project.root)
    titles = {t: load_scene(project.scene_path(t)).title for t in (5, 7, 10)}
    characters = damage_the_book(project)
    assert "history: edited by hand" not in cli("log", "-p", str(project.root)).output
    cli("scenes", "list", "-p", str(project.root), ok=None)   # the damage gets its entry
    out = doctor(project).output
    for path in (project.memory_dir / "facts.yaml", *characters):
        assert f"problem  {path}:2: invalid YAML" in out, out
    facts = out.split(f"{project.memory_dir / 'facts.yaml'}:2:")[1].split("\n")[1]
    assert "the file name is the id" not in facts and "bring back its last good copy" in facts
    fixed = doctor(project, "--fix")
    assert fixed.exit_code == 0 and fixed.output.endswith("harbour: clean\n"), fixed.output
    for tick, what in ((5, "scene_005.md:2: not UTF-8 text"), (7, "scenes/scene_007.md is empty"),
                       (10, "scenes/scene_010.md is missing (the scenes go on to tick 12)")):
        assert re.search(re.escape(what) + r".*: brought back from the history, entry "
                         rf"[0-9a-f]{{8}} \(tick {tick}: {re.escape(titles[tick])}\)\n",
                         fixed.output), fixed.output
    for what in ("plans/plan_003.yaml is missing (scene 3 is there): brought back",
                 "checkpoint_010.md:1: not UTF-8 text", "project.yaml:", "facts.yaml:2:"):
        assert what in fixed.output
    assert files_of(project.root) == before
    last, damaged = History(project).entries(limit=2)
    assert last.subject.startswith("doctor: brought back ") and last.kind == "repair"
    assert "scenes/scene_010.md (from " in last.subject
    assert damaged.subject.startswith("edited by hand: ")        # nothing is lost
    kept = History(project).git.contents([f"{damaged.sha}:scenes/scene_005.md"])[0]
    assert kept == bytes(range(256)) * 2
    assert cli("tick", "-p", str(project.root)).exit_code == 0


def test_what_the_history_cannot_give_back_is_said(project, cli, monkeypatch):
    run_ticks(project, 3)
    (project.memory_dir / "characters" / "newcomer.yaml").write_text("name: {\n")
    cli("status", "-p", str(project.root), ok=None)     # recorded broken: never good
    (project.memory_dir / "facts.yaml").write_text("facts: [\n")
    out = doctor(project).output
    assert (f"{project.memory_dir / 'characters' / 'newcomer.yaml'}:2: invalid YAML"
            in out), out
    assert "fix: the history holds no good copy of it: fix the file by hand (the file name " \
           "is the id)\n" in out
    monkeypatch.setattr("novel_agent.history.git.git_executable", lambda: None)
    project.scene_path(2).unlink()
    out = doctor(project, "--fix").output
    assert "left     scenes missing for ticks 2\n         fix: the history is off (git is not " \
           "on PATH): restore them from a copy of your own" in out
    assert (f"left     {project.memory_dir / 'facts.yaml'}:2: invalid YAML") in out
    assert "fix: the history is off (git is not on PATH) and cannot bring it back: fix the " \
           "file by hand\n" in out
    assert (project.memory_dir / "facts.yaml").read_text() == "facts: [\n"


def test_a_deleted_project_yaml_is_found_by_the_history_and_brought_back(project):
    run_ticks(project, 2)
    before = project.project_file.read_bytes()
    project.project_file.unlink()
    out = doctor(project).output
    assert out.startswith("problem  project.yaml is missing: the story bible and the project's "
                          "settings are gone\n         fix: bring back its last good copy from "
                          "the history, entry "), out
    fixed = doctor(project, "--fix")
    assert fixed.exit_code == 0 and project.project_file.read_bytes() == before


def test_a_command_that_meets_a_damaged_file_of_the_book_says_where_the_remedy_is(project, cli):
    run_ticks(project, 3)
    project.scene_path(2).write_bytes(b"\xff\xfe\x00 binary")
    out = cli("status", "-p", "harbour", ok=False).output
    assert out == (f"Error: {project.scene_path(2)}:1: not UTF-8 text (byte 0xff): re-save the "
                   "file as UTF-8 (`novel doctor` lists what is damaged; `--fix` brings back a "
                   "good copy)\n")
    cli("doctor", "--fix", "-p", "harbour")
    assert "binary" not in project.scene_path(2).read_text()
    assert cli("status", "-p", "harbour").exit_code == 0


def test_a_scene_of_a_book_with_an_outline_is_clean_and_a_bad_field_is_named(project):
    from tests.support.projects import outline_project
    outline_project(project)
    run_ticks(project, 2)
    assert doctor(project).output == "harbour: clean\n"
    path = project.scene_path(2)
    path.write_text(path.read_text().replace("beat_status: done", "beat_status: maybe"))
    result = doctor(project)
    assert result.exit_code == 1
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if text.startswith("beat_status:"))
    assert f"problem  {path}:{line}: 'beat_status' must be \"done\" or \"partly\" or \"not\", " \
           "not 'maybe'\n" in result.output


def test_an_index_garbled_in_some_pages_or_in_its_search_blocks_is_flagged_and_fixed(project):
    from tests.index.test_search_index import garble_pages, garble_search_blocks

    run_ticks(project, 3)
    good = project.index_db.read_bytes()
    garble_pages(project.index_db)
    assert "problem  .novel/index.db is damaged" in doctor(project).output
    project.index_db.write_bytes(good)
    garble_search_blocks(project.index_db)
    out = doctor(project).output
    assert "problem  .novel/index.db: its search table is damaged (database disk image is " \
           "malformed)\n         fix: delete it: it is a cache, rebuilt from the files" in out, out
    fixed = doctor(project, "--fix")
    assert fixed.exit_code == 0 and "fixed    .novel/index.db: its search table" in fixed.output
    assert not project.index_db.exists() and doctor(project).output == "harbour: clean\n"


def test_a_broken_state_yaml_comes_back_from_the_history_whole(project):
    run_ticks(project, 4)
    good = project.state_file.read_bytes()
    assert b"writer_tiers" in good and b"recall" in good
    project.state_file.write_bytes(b"tick: [\x00")
    out = doctor(project).output
    assert "fix: bring back its copy from the history, entry " in out, out
    fixed = doctor(project, "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert ": brought back from the history, entry " in fixed.output
    assert project.state_file.read_bytes() == good
    assert History(project).head().subject.startswith("doctor: brought back .novel/state.yaml")


def test_a_broken_state_yaml_the_history_has_no_copy_of_for_this_book_is_rebuilt(project):
    run_ticks(project, 3)
    for path in (project.scene_path(3), project.plan_path(3)):
        path.unlink()
    project.state_file.write_bytes(b"tick: [\x00")
    fixed = doctor(project, "--fix")
    assert "rebuild state.yaml from the scenes (the history's last copy says tick 3, the " \
           "scenes end at tick 2): the counter follows the scenes" in fixed.output, fixed.output
    assert project.state() == {"tick": 2}
