"""The crash matrix: `novel tick` killed by SIGKILL at every stage boundary and inside the
commit (NOVEL_TEST_CRASH_AT), then every command reports or recovers, `novel doctor` is
clean, and kill/resume cycles leave contiguous scenes with no duplicate and no gap.

The ticks run in a forked child (the import cost is paid once, so the matrix stays
fast); one test runs the real `novel` entry point in a fresh interpreter.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from ticking import run_ticks

from novel_agent.cli import cli
from novel_agent.crashpoints import POINTS
from novel_agent.story.scenes import scene_ticks

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = {"mid_commit", "after_commit"}     # killed after the journal: the tick lands


def forked_tick(project, point: str | None) -> int:
    """Run `novel tick -p <project>` in a forked child; its exit status (-9 when killed)."""
    pid = os.fork()
    if pid == 0:   # the child: never returns to pytest
        code = 0
        try:
            if point:
                os.environ["NOVEL_TEST_CRASH_AT"] = point
            cli.main(["tick", "-p", str(project.root)], standalone_mode=False)
        except BaseException:
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def novel(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def assert_sound(project, ticks: int) -> None:
    """Contiguous scenes 1..ticks, each with its plan; the commands agree; doctor is clean."""
    status = novel("status", "-p", str(project.root))    # recovers what a kill left
    assert status.exit_code == 0, status.output
    assert f"ticks       {ticks}  ({ticks} scenes" in status.stdout
    assert scene_ticks(project.scenes_dir) == list(range(1, ticks + 1))
    assert all(project.plan_path(t).is_file() for t in range(1, ticks + 1))
    listed = novel("scenes", "list", "-p", str(project.root))
    assert listed.exit_code == 0 and listed.stdout.count("\n") >= ticks
    doctor = novel("doctor", "-p", str(project.root))
    assert doctor.exit_code == 0, doctor.output
    txn = project.novel_dir / "txn"
    assert not txn.is_dir() or not list(txn.iterdir())


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_each_point_the_project_is_before_or_after(project, point):
    run_ticks(project, 2)
    assert forked_tick(project, point) == -signal.SIGKILL
    landed = 3 if point in COMMITTED else 2
    first = novel("status", "-p", str(project.root))   # the first command to see it
    assert first.exit_code == 0, first.output
    if point == "mid_commit":
        assert "note: recovered: the commit of tick 3 was interrupted and has been finished" \
            in first.stderr
    assert f"ticks       {landed}  ({landed} scenes" in first.stdout
    assert_sound(project, landed)
    assert forked_tick(project, None) == 0
    assert_sound(project, landed + 1)


def test_doctor_sees_the_crash_before_anything_recovers_it(project):
    run_ticks(project, 1)
    assert forked_tick(project, "mid_commit") == -signal.SIGKILL
    doctor = novel("doctor", "-p", str(project.root))
    assert doctor.exit_code == 1
    assert "an interrupted commit of tick 2 is unfinished" in doctor.stdout
    assert "names process" in doctor.stdout     # the killed tick's lock file
    fixed = novel("doctor", "-p", str(project.root), "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert_sound(project, 2)


def test_twenty_kill_resume_cycles_leave_contiguous_scenes(project):
    landed = 0
    for cycle in range(20):
        point = POINTS[cycle % len(POINTS)]
        assert forked_tick(project, point) == -signal.SIGKILL
        landed += point in COMMITTED
    assert forked_tick(project, None) == 0
    assert_sound(project, landed + 1)


def test_the_real_entry_point_killed_inside_the_commit(project):
    env = {**os.environ, "NOVEL_TEST_CRASH_AT": "mid_commit", "PYTHONPATH": str(ROOT)}
    code = subprocess.run([sys.executable, "-c", "from novel_agent.cli import main; main()",
                           "tick", "-p", str(project.root)], cwd=ROOT, env=env,
                          capture_output=True, timeout=120).returncode
    assert code == -signal.SIGKILL
    assert_sound(project, 1)
