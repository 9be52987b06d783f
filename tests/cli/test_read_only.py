"""A read-only project, as the operating system makes one: read commands work or say one
clear line, a tick is one line and changes nothing, doctor calls nothing damaged.

Root writes through permission bits, and CI runs as root: there each command runs in a
subprocess whose capability bounding set lacks CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
(prctl PR_CAPBSET_DROP before exec), so the kernel checks the modes for it as for anyone.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ticking import run_ticks

NOVEL = str(Path(sys.executable).with_name("novel"))
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def _drop_dac() -> None:
    """In the child, before exec: no capability to write through permission bits."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused")


def novel(*args: str) -> subprocess.CompletedProcess:
    """`novel ARGS` in a subprocess that the permission bits bind, root or not."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOVEL_")}
    env["NOVEL_PROJECTS_DIR"] = os.environ["NOVEL_PROJECTS_DIR"]
    try:
        return subprocess.run([NOVEL, *args], capture_output=True, text=True, env=env,
                              timeout=120, preexec_fn=_drop_dac if os.geteuid() == 0 else None)
    except subprocess.SubprocessError as exc:
        if "prctl" in str(exc):
            pytest.skip(f"root here cannot drop CAP_DAC_OVERRIDE: {exc}")
        raise


@pytest.fixture
def read_only(project, snapshot):
    """The project after 3 ticks with every folder 0555 and every file 0444."""
    run_ticks(project, 3)
    paths = [project.root, *project.root.rglob("*")]
    for path in paths:
        path.chmod(0o555 if path.is_dir() else 0o444)
    yield project
    for path in paths:
        path.chmod(0o755 if path.is_dir() else 0o644)


def one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def test_a_tick_is_one_line_and_changes_nothing(read_only, snapshot):
    before = snapshot(read_only.root)
    assert one_line(novel("tick", "-p", "harbour")) == (
        f"Error: cannot write to {read_only.novel_dir}: permission denied (a read-only "
        "project?); make the folder writable and run again")
    assert snapshot(read_only.root) == before


def test_reading_commands_work(read_only):
    status = novel("status", "-p", "harbour")
    assert status.returncode == 0, status.stderr
    first, second = status.stdout.splitlines()[:2]
    assert first == f"project     harbour  ({read_only.root})"
    assert second.startswith("ticks       3  (3 scenes, ")
    scenes = novel("scenes", "list", "-p", "harbour")
    assert scenes.returncode == 0 and len(scenes.stdout.splitlines()) == 3, scenes.stderr


def test_context_says_one_clear_line(read_only):
    assert one_line(novel("context", "-p", "harbour")) == (
        "Error: .novel/index.db: the file system is read-only: make it writable and run "
        "again (sqlite: attempt to write a readonly database)")


def test_doctor_says_read_only_and_never_damaged(read_only):
    result = novel("doctor", "-p", "harbour")
    assert result.returncode == 1, result.stderr
    assert result.stdout == (
        f"problem  {read_only.root} is read-only: nothing can be written (ticks, summaries, "
        "fixes)\n         fix: make the project writable (e.g. `chmod -R u+w` on it, or mount "
        "its disk read-write)\n")
