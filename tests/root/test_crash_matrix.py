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

import pytest

from novel_agent.crashpoints import POINTS
from tests.support.clirunner import invoke
from tests.support.crashes import assert_sound, forked_tick
from tests.support.repo import ROOT
from tests.support.ticking import run_ticks

COMMITTED = {"mid_commit", "after_commit"}     # killed after the journal: the tick lands


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_each_point_the_project_is_before_or_after(project, point):
    run_ticks(project, 2)
    assert forked_tick(project, point) == -signal.SIGKILL
    landed = 3 if point in COMMITTED else 2
    first = invoke("status", "-p", str(project.root))   # the first command to see it
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
    doctor = invoke("doctor", "-p", str(project.root))
    assert doctor.exit_code == 1
    assert "an interrupted commit of tick 2 is unfinished" in doctor.stdout
    assert "names process" in doctor.stdout     # the killed tick's lock file
    fixed = invoke("doctor", "-p", str(project.root), "--fix")
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
