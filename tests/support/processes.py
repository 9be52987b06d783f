"""`novel` as a real process: the `novel` fixture starts it in the background (and kills
what is left at the end of the test), `until(condition)` polls for what it should do."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.support.repo import ROOT

NOVEL = [sys.executable, "-c", "from novel_agent.cli import main; main()"]


def until(condition, timeout: float = 30.0, what: str = "condition"):
    """Poll `condition` until it is truthy (and return it), or fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def novel(tmp_path, projects_dir):
    """novel(*args) starts `novel ARGS` in the background; novel.run(*args) runs it to the
    end. No process outlives the test."""
    procs: list[subprocess.Popen] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def start(*args, extra_env=None):
        proc = subprocess.Popen([*NOVEL, *args], cwd=tmp_path, env={**env, **(extra_env or {})},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        return proc

    def run(*args, timeout=60, extra_env=None):
        proc = start(*args, extra_env=extra_env)
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err

    start.run = run
    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
