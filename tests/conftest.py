"""Shared fixtures. A guard fails any test that tries to reach beyond this machine."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

from novel_agent.story.project.folder import Project, create_project
from tests.support.projects import HARBOUR, files_of, fresh

_real_connect = socket.socket.connect


def _is_local(address) -> bool:
    if isinstance(address, (str, bytes)):  # unix socket
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self, address):
    if not _is_local(address):
        raise RuntimeError(f"test tried to reach the network: {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def no_internet(monkeypatch):
    """Every test: connections only to loopback."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


@pytest.fixture(autouse=True)
def no_user_models(tmp_path_factory, monkeypatch):
    """Every test: an empty embedded-models folder, so `auto` never picks the 1.1 GB model a
    user installed (the real-model tests run SmolLM2-135M, which lives in its package)."""
    monkeypatch.setenv("NOVEL_MODELS_DIR", str(tmp_path_factory.mktemp("models")))


@pytest.fixture(autouse=True)
def no_user_llm(tmp_path_factory, monkeypatch):
    """Every test: an empty folder as the llm library's ($LLM_USER_PATH: its keys, aliases,
    extra models), so no test reads or writes a user's, and none of its keys."""
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path_factory.mktemp("llm")))


@pytest.fixture
def projects_dir(tmp_path, monkeypatch) -> Path:
    """A private projects folder, also set as $NOVEL_PROJECTS_DIR; cwd is tmp_path."""
    folder = tmp_path / "projects"
    folder.mkdir()
    monkeypatch.setenv("NOVEL_PROJECTS_DIR", str(folder))
    monkeypatch.chdir(tmp_path)
    for var in list(__import__("os").environ):
        if var.startswith("NOVEL_") and var not in ("NOVEL_PROJECTS_DIR", "NOVEL_MODELS_DIR"):
            monkeypatch.delenv(var)
    return folder


@pytest.fixture
def project(projects_dir) -> Project:
    """A fresh project on the offline model."""
    return fresh(projects_dir)


@pytest.fixture(scope="module")
def ticked(tmp_path_factory):
    """ticked(n): a project on the offline model that has run n ticks, made once per module
    and n (for tests that only read it)."""
    from tests.support.ticking import run_ticks

    made: dict[int, Project] = {}

    def get(n: int) -> Project:
        if n not in made:
            made[n] = create_project(tmp_path_factory.mktemp(f"ticked{n}") / "harbour", HARBOUR,
                                     config={"llm": {"provider": "offline"}})
            run_ticks(made[n], n)
        return made[n]
    return get


@pytest.fixture
def openai_project(projects_dir, monkeypatch) -> Path:
    """A new project on the openai provider (OPENAI_API_KEY set to the test key)."""
    from tests.support.clirunner import invoke
    from tests.support.fake_openai import API_KEY

    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    invoke("new", "harbour", "--premise", "A lighthouse keeper finds a drowned man's map.",
           "--provider", "openai", ok=True)
    return projects_dir / "harbour"


@pytest.fixture
def fake_openai():
    """A started FakeOpenAIServer (tests/support/fake_openai.py, which imports no pytest:
    bench/ runs it from an environment without the test extras); reconfigure it through
    its attributes."""
    from tests.support.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def snapshot():
    """snapshot(root): every file under root with its bytes (see files_of)."""
    return files_of


@pytest.fixture
def cli():
    """cli(*args, ok=True): run `novel ARGS` in-process through tests/support/clirunner.py's
    invoke (exit 0 asserted when ok; ok=False asserts nothing)."""
    from tests.support.clirunner import invoke

    return lambda *args, ok=True: invoke(*args, ok=True if ok else None)
