"""`novel doctor` and what it did not see (issue 50, items 1, 2, 7 and 8): links (each
named; one out of the project fixed, a scene linked over brought back from the history),
the YAML alias bomb, a steer.md that is not UTF-8, a scene that lost its front matter,
and a stale lock, which is a note, not damage."""

from __future__ import annotations

import fcntl

from novel_agent.story.scenes import load_scene
from tests.root.test_files import alias_bomb
from tests.story.project.test_links import SECRET, logs_of, secret  # noqa: F401 - a fixture
from tests.support.clirunner import invoke
from tests.support.ticking import run_ticks


def doctor(project, *flags):
    return invoke("doctor", "-p", str(project.root), *flags)


def test_a_scene_linked_over_comes_back_from_the_history(project, cli, secret):  # noqa: F811
    """On main doctor said only "34 words" of such a scene and --fix left the link."""
    run_ticks(project, 4)
    before = project.scene_path(3).read_bytes()
    project.scene_path(3).unlink()
    project.scene_path(3).symlink_to(secret)
    cli("status", "-p", "harbour", ok=None)      # the link gets its entry in the history
    out = doctor(project)
    assert out.exit_code == 1
    assert (f"problem  scenes/scene_003.md is a link to {str(secret)!r}, outside the project: "
            "nothing is read through it\n         fix: bring back its last good copy from "
            "the history, entry ") in out.output, out.output
    assert SECRET not in out.output and "words" not in out.output
    fixed = doctor(project, "--fix")
    assert fixed.exit_code == 0 and fixed.output.endswith("harbour: clean\n"), fixed.output
    assert not project.scene_path(3).is_symlink()
    assert project.scene_path(3).read_bytes() == before
    assert secret.read_text() == SECRET + "\n"     # what it named is left alone


def test_a_new_scene_linked_out_is_removed_not_adopted(project, cli, secret):  # noqa: F811
    """On main `doctor --fix` adopted the link as tick 4 and the next tick put the password
    file into the writer's prompt."""
    run_ticks(project, 3)
    project.scene_path(4).symlink_to(secret)
    fixed = doctor(project, "--fix")
    assert "fixed    scenes/scene_004.md is a link to" in fixed.output
    assert fixed.exit_code == 0, fixed.output
    assert not project.scene_path(4).exists() and not project.scene_path(4).is_symlink()
    cli("tick", "-p", "harbour")
    assert load_scene(project.scene_path(4)).tick == 4
    assert SECRET not in logs_of(project) and SECRET not in project.scene_path(4).read_text()


def test_every_link_is_named_and_one_inside_is_a_note(project, secret):  # noqa: F811
    run_ticks(project, 2)
    (project.root / "steer.md").symlink_to(secret)
    (project.root / "notes").mkdir()
    (project.root / "notes" / "scene_one.md").symlink_to(project.scene_path(1))
    out = doctor(project).output
    assert f"problem  steer.md is a link to {str(secret)!r}, outside the project" in out
    assert ("note     notes/scene_one.md is a link to "
            f"{str(project.scene_path(1))!r}, inside the project") in out
    (project.root / "steer.md").unlink()
    clean = doctor(project)
    assert clean.exit_code == 0 and clean.output.endswith("harbour: clean (1 note)\n")


def test_the_alias_bomb_is_a_problem(project):
    """On main doctor said the book was clean while every other command hung."""
    run_ticks(project, 2)
    path = project.memory_dir / "characters" / "bomb.yaml"
    path.write_text(alias_bomb())
    out = doctor(project)
    assert out.exit_code == 1 and f"problem  {path}:1: its aliases expand to " in out.output


def test_a_steer_md_that_is_not_utf8_is_a_problem(project, cli):
    """On main doctor said clean while `novel tick` stopped on it."""
    run_ticks(project, 2)
    project.steer_file.write_bytes(b"Make it rain.\nCaf\xe9 scene next.\n")
    assert cli("tick", "-p", "harbour", ok=False).exit_code != 0
    out = doctor(project)
    assert out.exit_code == 1
    assert (f"problem  {project.steer_file}:2: not UTF-8 text (byte 0xe9): re-save the file "
            "as UTF-8\n         fix: fix steer.md") in out.output, out.output


def test_a_scene_that_lost_its_front_matter_gets_it_back_its_prose_kept(project):
    """On main doctor said clean of a scene with no title and no POV."""
    run_ticks(project, 3)
    scene = load_scene(project.scene_path(2))
    prose = scene.body + "\n\nA line of my own."
    project.scene_path(2).write_text(prose + "\n")
    out = doctor(project)
    assert out.exit_code == 1
    assert "problem  scenes/scene_002.md has lost its front matter (no title, no POV)" \
        in out.output
    assert "fix: put back its front matter from the history, entry " in out.output
    fixed = doctor(project, "--fix")
    assert fixed.exit_code == 0, fixed.output
    back = load_scene(project.scene_path(2))
    assert (back.title, back.pov, back.body) == (scene.title, scene.pov, prose)


def test_a_stale_lock_is_a_note_and_doctor_exits_0(project):
    """On main the stale lock a kill -9 leaves made doctor exit 1."""
    run_ticks(project, 2)
    project.lock_file.write_text("4242 2025-01-01T00:00:00\n")
    out = doctor(project)
    assert out.exit_code == 0, out.output
    assert out.output == ("note     .novel/lock names process 4242 2025-01-01T00:00:00, which "
                          "no longer holds it (killed?): the next command takes the lock "
                          "over (--fix empties the file)\nharbour: clean (1 note)\n")
    with open(project.lock_file) as held:          # a live holder: nothing to say
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert doctor(project).output == "harbour: clean\n"
