"""A project folder is shared and downloaded: nothing in it may make the program read
outside it. A link out of the project (a scene, steer.md, a template, memory) stops the
command with one line naming the file, its target never read; a YAML alias bomb in a
memory file is one line naming the file, not a command that runs until killed
(issue 50, items 1 and 2)."""

from __future__ import annotations

import pytest

from novel_agent.errors import DamagedBookError, FileFormatError, OutsideLinkError
from tests.root.test_files import alias_bomb
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

SECRET = "name: THE-SECRET-LINE"   # a line any loader takes: prose, a note, a character


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "passwd"
    path.write_text(SECRET + "\n")
    return path


def logs_of(project) -> str:
    return "".join(p.read_text(errors="replace") for p in project.log_dir.rglob("*")
                   if p.is_file())


def test_a_scene_linked_out_stops_the_tick_and_nothing_reads_it(project, cli, secret):
    """On main the link was read as scene 4 and its text went into the writer's prompt
    (.novel/log/tick_005_writer.json)."""
    run_ticks(project, 3)
    project.scene_path(4).symlink_to(secret)
    out = cli("status", "-p", "harbour", ok=None).output
    assert SECRET not in out
    with pytest.raises(DamagedBookError) as stopped:
        run_ticks(project, 1, model=ScriptedModel())   # asked anything, it fails the test
    assert "scene_004.md: a link to outside the project, not read" in str(stopped.value)
    assert SECRET not in logs_of(project) and SECRET not in str(stopped.value)


@pytest.mark.parametrize("where", ["steer.md", "templates/write.j2",
                                   "memory/characters/secret.yaml"])
def test_an_input_linked_out_stops_the_tick_naming_it(project, secret, where):
    run_ticks(project, 2)
    path = project.root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(secret)
    with pytest.raises(FileFormatError) as stopped:
        run_ticks(project, 1, model=ScriptedModel())
    assert isinstance(stopped.value, OutsideLinkError), stopped.value
    assert stopped.value.file == str(path) and SECRET not in str(stopped.value)
    assert SECRET not in logs_of(project)


def test_a_memory_folder_linked_out_is_refused(project, tmp_path):
    run_ticks(project, 2)
    elsewhere = tmp_path / "elsewhere"
    (project.memory_dir / "locations").rename(elsewhere)
    (project.memory_dir / "locations").symlink_to(elsewhere)
    with pytest.raises(OutsideLinkError):
        run_ticks(project, 1, model=ScriptedModel())


def test_the_alias_bomb_in_a_character_file_is_one_line_naming_it(project, cli):
    """On main `novel status`, `context` and `tick` ran until killed (5.7 GB): the bomb was
    expanded by memory's plain_copy. Now the loader refuses it before anything copies it."""
    run_ticks(project, 2)
    path = project.memory_dir / "characters" / "bomb.yaml"
    path.write_text(alias_bomb())
    for command in (("status",), ("context",), ("tick",)):
        result = cli(*command, "-p", "harbour", ok=False)
        error = [line for line in result.output.splitlines() if line.startswith("Error")]
        assert len(error) == 1 and str(path) in error[0] and "alias bomb" in error[0], \
            result.output
