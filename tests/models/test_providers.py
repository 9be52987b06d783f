"""The providers' registry: capabilities asked for instead of names, and third-party
providers registered through the entry point group `novel_agent.providers`."""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path

import pytest

import novel_agent
from novel_agent.config.providers import BUILT_IN, GROUP, provider_names
from novel_agent.errors import ConfigError
from novel_agent.models import describe_provider, get_model, model_id
from novel_agent.models.offline import OfflineModel
from novel_agent.models.prices import price_for
from novel_agent.models.providers import (
    ANTHROPIC,
    LLM,
    LOCAL,
    OFFLINE,
    OPENAI,
    STRUCTURED,
    Provider,
    forget,
    lookup,
    provider_for,
)
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.ticking import NOW

PACKAGE = Path(novel_agent.__file__).parent


def echo_provider() -> Provider:
    """A third party's provider: the offline model under another name, one that says what
    it can do differently (paid, so that its price comes from llm.prices)."""
    return Provider(
        "echo", lambda config, env, *, on_progress=None, client=None:
        OfflineModel(seed=config.llm.seed),
        default_model=lambda config: "echo-1", describe=lambda config: "echo, a plugin",
        structured="prompt", paid=True)


ECHO = echo_provider()


@pytest.fixture
def plugin(monkeypatch):
    """An installed package that registers `echo` (a callable returning its Provider) and
    `plain` (the Provider itself) in the entry point group."""
    points = [importlib.metadata.EntryPoint("echo", f"{__name__}:echo_provider", GROUP),
              importlib.metadata.EntryPoint("plain", f"{__name__}:ECHO", GROUP),
              importlib.metadata.EntryPoint("other", "json:dumps", "another.group")]

    def entry_points(*, group: str):
        return [ep for ep in points if ep.group == group]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    yield
    forget("echo")
    forget("plain")


def test_every_built_in_provider_is_registered_and_says_what_it_can_do():
    assert [lookup(name) for name in BUILT_IN] == [OPENAI, ANTHROPIC, LLM, LOCAL, OFFLINE]
    assert all(p.structured in STRUCTURED for p in (OPENAI, ANTHROPIC, LLM, LOCAL, OFFLINE))
    assert (ANTHROPIC.prefix_cache, ANTHROPIC.streams, ANTHROPIC.needs_key, ANTHROPIC.paid) \
        == (True, True, True, True)
    assert (LOCAL.local, LOCAL.paid, LOCAL.streams, LOCAL.structured) == (True, False, True,
                                                                          "grammar")
    assert (OPENAI.local, OPENAI.paid, OPENAI.needs_key, OPENAI.own_counts) == (False, True,
                                                                                True, True)
    assert (OFFLINE.local, OFFLINE.paid, OFFLINE.own_counts) == (False, False, False)


def test_a_provider_nothing_registers_is_one_line_naming_llm_provider(project):
    with pytest.raises(ConfigError) as caught:
        project.config(flags={"llm.provider": "nope"})
    assert str(caught.value).splitlines()[0].endswith(
        "llm.provider: must be one of auto, openai, anthropic, llm, local, offline, not 'nope'")
    with pytest.raises(ConfigError, match="must be one of auto, openai, anthropic, llm, local, offline, "
                                          "not 'nope'"):
        lookup("nope")


def test_an_installed_package_registers_a_provider_by_entry_point(plugin, project):
    assert provider_names() == ("auto", "openai", "anthropic", "llm", "local", "offline", "echo",
                              "plain")
    config = project.config(flags={"llm.provider": "echo",
                                   "llm.prices": {"input": 1.0, "output": 2.0}})
    assert provider_for(config).name == "echo" and lookup("plain").name == "plain"
    assert (model_id(config), describe_provider(config)) == ("echo-1", "echo, a plugin")
    assert price_for(config).source == "llm.prices"       # paid: not the free price
    assert isinstance(get_model(config, {}), OfflineModel)


def test_a_project_on_a_registered_provider_ticks(plugin, project):
    config = project.config(flags={"llm.provider": "echo"})
    with reconciled(project), Session.open(project, config, {}, now=lambda: NOW) as session:
        result = tick(session)
        assert session.provider.name == "echo" and not session.lean_for("planner")
        assert session.limits.model == "echo-1"
    rows = [json.loads(line) for line in
            (project.root / ".novel" / "usage.jsonl").read_text().splitlines()]
    assert result.tick == 1 and result.scene_path.exists() and project.tick() == 1
    assert {row["provider"] for row in rows} == {"echo"}


def test_an_entry_point_that_gives_no_provider_is_a_config_error(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda *, group: [
        importlib.metadata.EntryPoint("broken", "json:loads", GROUP)])
    with pytest.raises(ConfigError, match="'broken': its entry point .json:loads. could not be "
                                          "loaded: TypeError"):
        lookup("broken")
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda *, group: [
        importlib.metadata.EntryPoint("broken", "json:__name__", GROUP)])
    with pytest.raises(ConfigError, match="'broken': its entry point .json:__name__. gives no "
                                          "Provider"):
        lookup("broken")


def test_the_cli_takes_a_registered_provider_and_refuses_an_unknown_one(plugin, cli, project):
    assert "--provider [auto|openai|anthropic|llm|local|offline|echo|plain]" in cli("tick", "--help").output
    result = cli("tick", "-p", str(project.root), "--provider", "nope", ok=False)
    assert "'nope' is not one of 'auto', 'openai', 'anthropic', 'llm', 'local', 'offline', 'echo', 'plain'" \
        in result.output
    cli("tick", "-p", str(project.root), "--provider", "echo")
    assert project.tick() == 1


def test_no_module_tells_providers_apart_by_name_but_the_registry():
    found = [f"{path.relative_to(PACKAGE)}:{n}" for path in sorted(PACKAGE.rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"provider\s*(==|!=|in\b)", line)
             and path != PACKAGE / "models" / "providers.py"]
    assert found == []
