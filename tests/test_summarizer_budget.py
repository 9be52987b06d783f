"""The summarizer's prompts as the product sends them fit its budget, and a summary cut
off by the token limit is continued or trimmed, never written mid-word."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from fake_openai import FakeOpenAIServer
from novel_agent.cli import cli
from novel_agent.context.budget import stage_budget
from novel_agent.project import Project
from novel_agent.session import counter_for
from novel_agent.testing import ScriptedModel
from novel_agent.windows import limits_for
import story_factory as sf
from test_tick_openai import stage_of, story_responder
from ticking import run_ticks

SMALL = {"llm": {"summarizer_max_tokens": 300, "planner_max_tokens": 200,
                 "writer_max_tokens": 300, "extractor_max_tokens": 200},
         "context": {"window": 1000},
         "generation": {"checkpoint_summary_interval": 2}}
SUMMARIZER = "condense part of a novel"


def shrink(root) -> None:
    """A 1,000-token window: the summarizer's budget is 1,000 - 300 - 256 = 444 tokens."""
    path = root / "project.yaml"
    data = yaml.safe_load(path.read_text())
    for section, values in SMALL.items():
        data.setdefault(section, {}).update(values)
    path.write_text(yaml.safe_dump(data))


def budget_and_counter(project):
    config = project.config()
    return stage_budget(config, "summarizer", limits_for(config)).tokens, counter_for(config)


def logged(project) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text())
            for p in sorted(project.log_dir.glob("tick_*_summarizer_*.json"))}


def test_every_summarizer_request_fits_a_small_window_offline(project):
    shrink(project.root)
    budget, counter = budget_and_counter(project)
    assert budget == 444
    model = ScriptedModel()
    run_ticks(project, 4, model, offline_seed=0)
    sent = [counter.count_messages(r.messages) for r in model.calls("summarizer")]
    # checkpoints 2 and 4, the overall summary twice, an arc when tier 3 outgrew its share
    assert len(sent) >= 5 and max(sent) <= budget, sent
    logs = logged(project)
    assert set(logs) >= {"tick_002_summarizer_checkpoint_002.json",
                         "tick_004_summarizer_checkpoint_004.json",
                         "tick_004_summarizer_overall.json", "tick_004_summarizer_arc_001.json"}
    for name, log in logs.items():
        assert log["budget"] == budget and log["window"] == 1000, name
        assert log["tokens"] == counter.count_messages(log["messages"]) <= budget, name
    # the range's scenes did not all fit in full: the engine chose leaner forms
    assert max(log["compaction_level"] for log in logs.values()) >= 1


def summarizer_bodies(server) -> list[dict]:
    return [r["json"] for r in server.requests if r["path"].endswith("/chat/completions")
            and SUMMARIZER in r["json"]["messages"][0]["content"]]


def long_scenes(body):
    """The story's answers, with scenes of 220 words: two of them overflow 444 tokens."""
    if stage_of(body) == "writer":
        return sf.prose(220, len(body["messages"][-1]["content"]))
    return story_responder(body)


def test_every_summarizer_request_to_a_server_fits_a_small_window(openai_project):
    shrink(openai_project)
    project = Project(openai_project)
    budget, counter = budget_and_counter(project)
    with FakeOpenAIServer(long_scenes) as server:
        result = CliRunner().invoke(cli, ["tick", "-p", "harbour", "-n", "4", "--base-url",
                                          server.base_url, "--model", "gpt-4o-mini"],
                                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    bodies = summarizer_bodies(server)
    sent = [counter.count_messages(b["messages"]) for b in bodies]
    assert len(sent) >= 5 and max(sent) <= budget, sent
    assert {b["max_tokens"] if "max_tokens" in b else b["max_completion_tokens"]
            for b in bodies} == {300}
    for name, log in logged(project).items():
        assert log["tokens"] <= log["budget"] == budget, name
