"""One ticker per project: an fcntl lock in .novel/ that names its holder."""

from __future__ import annotations

import os
import time

import pytest

from novel_agent.errors import LockError
from novel_agent.project import Project


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
