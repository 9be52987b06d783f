"""`novel doctor --fix` for later scenes deleted by hand (novel_agent.revision.repair): the
orphan plans and summaries go into history, memory follows the scenes left."""

from __future__ import annotations

import shutil

from novel_agent.history.store import History
from novel_agent.story.memory.files import memory_files
from novel_agent.story.memory.read import load_memory
from tests.support.projects import fresh, story_files
from tests.support.ticking import run_ticks


def delete_scenes(project, ticks):
    for tick in ticks:
        project.scene_path(tick).unlink()


def test_deleting_later_scenes_then_doctor_fix_is_a_fresh_run_stopped_there(project, cli,
                                                                           tmp_path):
    run_ticks(project, 10)
    delete_scenes(project, (8, 9, 10))
    tick = cli("tick", "-p", "harbour", ok=False)
    assert tick.exit_code == 1
    assert "tick 8 cannot start: plans/plan_008.yaml is there without its scene" in tick.output
    assert "novel doctor --fix" in tick.output
    revise = cli("revise", "3", "-p", "harbour", ok=False).output
    assert "reach past the last scene (tick 7), deleted by hand?: run `novel doctor --fix` " \
           "first" in revise
    doctor = cli("doctor", "-p", "harbour", ok=False).output
    assert "plans/plan_008.yaml has no scene after it" in doctor
    assert "summaries cover ticks up to 10, the scenes end at 7" in doctor
    assert "bring plans, memory, summaries and state back to tick 7" in doctor
    fixed = cli("doctor", "--fix", "-p", "harbour")
    assert "fixed    plans/plan_008.yaml has no scene after it" in fixed.output
    assert "harbour: clean" in fixed.output
    other = fresh(tmp_path / "fresh")
    run_ticks(other, 7)
    assert story_files(project) == story_files(other)
    subjects = [e.subject for e in History(project).entries()[:2]]
    assert subjects[0] == "doctor: back to tick 7 after scenes were deleted by hand"
    assert subjects[1].startswith("edited by hand: scenes/scene_008.md, scenes/scene_009.md")
    cli("tick", "-p", "harbour")
    run_ticks(other, 1)
    assert story_files(project) == story_files(other)
    # what went is still in the history
    assert History(project).entries(rev="HEAD~2")[0].tick == 7


def test_without_history_memory_is_re_derived_from_the_records(project, cli, tmp_path):
    run_ticks(project, 10)
    shutil.rmtree(project.novel_dir / "history.git")
    delete_scenes(project, (9, 10))
    cli("doctor", "--fix", "-p", "harbour")
    other = fresh(tmp_path / "fresh")
    run_ticks(other, 8)
    assert memory_files(load_memory(project.memory_dir), project.memory_dir).values() and \
        list(memory_files(load_memory(project.memory_dir), project.memory_dir).values()) == \
        list(memory_files(load_memory(other.memory_dir), other.memory_dir).values())
    assert sorted(p.name for p in project.plans_dir.iterdir()) == \
        sorted(p.name for p in other.plans_dir.iterdir())
    assert not list(project.summaries_dir.glob("*.md"))
    assert cli("doctor", "-p", "harbour").exit_code == 0
    cli("tick", "-p", "harbour")
    assert project.tick() == 9


def test_a_revision_made_after_the_deleted_ticks_stays(project, cli):
    run_ticks(project, 10)
    scene = project.scene_path(5)
    scene.write_text(scene.read_text() + "\nMara left the map on the table, unread.\n")
    cli("revise", "5", "-p", "harbour")
    revised = {p: p.read_text() for p in (project.scene_path(5), project.plan_path(5))}
    delete_scenes(project, (9, 10))
    cli("doctor", "--fix", "-p", "harbour")
    assert {p: p.read_text() for p in revised} == revised
    assert project.tick() == 8 and not project.plan_path(9).exists()
    assert not list(project.log_dir.glob("tick_009_*")) and cli("doctor", "-p", "harbour")


def test_the_daemon_trips_on_it_and_says_doctor_fix(project, cli):
    run_ticks(project, 3)
    delete_scenes(project, (3,))
    run = cli("run", "--ticks", "1", "-p", "harbour", ok=False).output
    assert "plans/plan_003.yaml is there without its scene" in run and "novel doctor --fix" in run
