"""One ticker per project: an fcntl lock in .novel/ that names its holder."""

from __future__ import annotations

import os
import threading
import time

import pytest

from novel_agent.errors import LockError
from novel_agent.story.project.folder import Project
from tests.support.clirunner import invoke
from tests.support.ticking import run_ticks


def test_a_second_holder_waits_then_is_told_who_holds_it(project):
    other = Project(project.root)
    with project.locked():
        started = time.monotonic()
        with pytest.raises(LockError) as info:
            other.acquire_lock(wait=0.3)
        assert time.monotonic() - started >= 0.3
    assert info.value.pid == os.getpid()
    assert info.value.since.startswith("20") and info.value.since in str(info.value)
    assert f"process {os.getpid()} has been ticking it since" in str(info.value)
    with other.locked():          # released: taken at once
        assert other.lock_holder()[0] == os.getpid()


def test_a_lock_freed_while_waiting_is_taken(project):
    other = Project(project.root)
    project.acquire_lock()
    ticks = []

    def sleep(seconds):
        ticks.append(seconds)
        project.release_lock()     # the holder finishes while we wait

    other.acquire_lock(wait=5, sleep=sleep)
    other.release_lock()
    assert len(ticks) == 1


# ------------------------------------------------ --wait on every command that writes


def manuscript(tmp_path):
    path = tmp_path / "draft.md"
    path.write_text("# Chapter 1\n\nMara climbed the tower. The lamp was out.\n")
    return path


def commands(tmp_path) -> dict[str, list[str]]:
    """The commands that take the lock and say "try again with --wait" when it is busy."""
    return {"tick": ["tick", "-p", "harbour"],
            "summarize": ["summarize", "-p", "harbour"],
            "import": ["import", str(manuscript(tmp_path)), "-p", "harbour", "--no-extract"],
            "reindex": ["reindex", "-p", "harbour"],
            "doctor": ["doctor", "-p", "harbour", "--fix"],
            "rewind": ["rewind", "0", "-p", "harbour"],
            "redo": ["redo", "1", "-p", "harbour"],
            "revise": ["revise", "1", "-p", "harbour"],
            "branch new": ["branch", "new", "b", "-p", "harbour"],
            "branch switch": ["branch", "switch", "b", "-p", "harbour"],
            "branch delete": ["branch", "delete", "b", "-p", "harbour"]}


@pytest.mark.parametrize("command", ["tick", "summarize", "import", "reindex", "doctor", "rewind",
                                     "redo", "revise", "branch new", "branch switch",
                                     "branch delete"])
def test_a_busy_project_is_waited_for_then_named(project, tmp_path, command):
    args = commands(tmp_path)[command]
    with project.locked():
        since = project.lock_holder()[1]
        started = time.monotonic()
        result = invoke(*args, "--wait", "0.3")
        waited = time.monotonic() - started
        no_wait = invoke(*args)
    assert result.exit_code == 1 and waited >= 0.3
    assert result.output == (
        f"Error: project 'harbour' is busy: process {os.getpid()} has been ticking it since "
        f"{since} (waited 0.3s); stop it with `novel stop -p harbour` or try again with --wait\n")
    assert no_wait.exit_code == 1
    assert no_wait.output == result.output.replace(" (waited 0.3s)", "")
    assert project.tick() == 0


def test_a_rewind_waits_for_the_tick_in_flight(project):
    run_ticks(project, 3)
    holder = Project(project.root)
    holder.acquire_lock()
    threading.Timer(0.3, holder.release_lock).start()       # the daemon's tick ends
    result = invoke("rewind", "1", "-p", "harbour", "--wait", "30")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("rewound main: tick 3 → tick 1;")


@pytest.mark.parametrize("command", ["summarize", "import"])
def test_a_project_released_during_the_wait_is_taken(project, tmp_path, command):
    args = commands(tmp_path)[command]
    holder = Project(project.root)
    holder.acquire_lock()
    threading.Timer(0.3, holder.release_lock).start()       # the daemon's tick ends
    started = time.monotonic()
    result = invoke(*args, "--wait", "30")
    assert result.exit_code == 0, result.output
    assert 0.3 <= time.monotonic() - started < 30
    assert result.output.splitlines()[-1] == {
        "summarize": "nothing to summarize: every checkpoint owed is made",
        "import": "Next: novel tick -p harbour"}[command]
