"""The summarizer's prompts as the product sends them fit its budget, and a summary cut
off by the token limit is continued or trimmed, never written mid-word."""

from __future__ import annotations

import json

import pytest
import yaml

from novel_agent.config.budget import stage_budget
from novel_agent.errors import ModelResponseError
from novel_agent.models.base import Completion
from novel_agent.models.limits import limits_for
from novel_agent.story.project.folder import Project
from novel_agent.tick.session import counter_for
from novel_agent.tick.stages.summarize import trim_summary
from tests.support import story_factory as sf
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.responders import stage_of, story_responder
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

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
    # the range's scenes did not all fit in full: the share chose leaner forms for some
    # (the compaction thresholds do not, when they fit: issue 20's item 6)
    forms = {i["form"] for log in logs.values() for i in log["items"]
             if i["section"] == "scenes" and i["included"]}
    assert "full" in forms and forms - {"full"}


def summarizer_bodies(server) -> list[dict]:
    return [r["json"] for r in server.requests if r["path"].endswith("/chat/completions")
            and SUMMARIZER in r["json"]["messages"][0]["content"]]


def long_scenes(body):
    """The story's answers, with scenes of 220 words: two of them overflow 444 tokens."""
    if stage_of(body) in ("writer", "summarizer"):
        return sf.prose(220, len(body["messages"][-1]["content"]))
    return story_responder(body)


def test_every_summarizer_request_to_a_server_fits_a_small_window(openai_project):
    shrink(openai_project)
    project = Project(openai_project)
    budget, counter = budget_and_counter(project)
    with FakeOpenAIServer(long_scenes) as server:
        result = invoke("tick", "-p", "harbour", "-n", "4", "--base-url",
                        server.base_url, "--model", "gpt-4o-mini")
    assert result.exit_code == 0, result.output
    bodies = summarizer_bodies(server)
    sent = [counter.count_messages(b["messages"]) for b in bodies]
    assert len(sent) >= 5 and max(sent) <= budget, sent
    assert {b["max_tokens"] if "max_tokens" in b else b["max_completion_tokens"]
            for b in bodies} == {300}
    for name, log in logged(project).items():
        assert log["tokens"] <= log["budget"] == budget, name


def test_novel_tick_says_a_summary_was_cut_off_and_continued(openai_project):
    path = openai_project / "project.yaml"
    path.write_text(path.read_text() + "generation:\n  checkpoint_summary_interval: 1\n")
    summary = ("- Mara Quill studies the drowned man's map: it shows a door she has never "
               "seen.\n- The question of what lies behind the drawn door opens.\n"
               "- The Stranger, drowned, carried the map.")
    cut = summary.index("carried") + 4                 # "…drowned, carr"
    answers = [{"content": summary[:cut], "finish_reason": "length"}, summary[cut:]]

    def responder(body):
        if stage_of(body) == "summarizer" and answers:
            return answers.pop(0)
        return story_responder(body)

    with FakeOpenAIServer(responder) as server:
        result = invoke("tick", "-p", "harbour", "--base-url",
                        server.base_url, "--model", "gpt-4o-mini")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  summarize"))
    assert "(3 calls)" in lines[at] and lines[at + 1] == (
        "  warning: checkpoint_001: the summarizer's answer was cut off at the 400-token "
        "limit; continued (1 more call) (raise llm.summarizer_max_tokens)")
    body = (openai_project / "summaries" / "checkpoint_001.md").read_text().split("---\n")[2]
    assert body.strip() == summary
    continued = summarizer_bodies(server)[1]["messages"][-1]["content"]
    assert continued.endswith("## Your summary so far\n" + summary[:cut] + "\n\n\nYour "
                              "summary was cut off by the length limit. Continue it exactly "
                              "where it stopped, without repeating anything, and end it "
                              "within a few words.")


@pytest.mark.parametrize("text,kept", [
    ("- Mara finds the map.\n- Tobin lies. He hides the key. The door op",
     "- Mara finds the map.\n- Tobin lies. He hides the key."),
    ("- Mara finds the map\n- Tobin lies\n- The door op", "- Mara finds the map\n- Tobin lies"),
    ("- She asks \"who drew it?\" and the ans", "- She asks \"who drew it?\""),
    ("- Mara finds the map.", "- Mara finds the map."),
])
def test_a_cut_off_summary_is_trimmed_to_its_last_complete_sentence_or_line(text, kept):
    assert trim_summary(text) == kept


def test_a_summary_with_no_complete_sentence_cannot_be_trimmed():
    with pytest.raises(ModelResponseError, match="checkpoint_004 was cut off before its first "
                                                 "sentence ended"):
        trim_summary("- Mara Quill studies the ma", "checkpoint_004")


def test_a_second_try_cut_off_is_continued_from_its_own_draft_shown_once(project):
    # a continuation of the second try (the first answer left names out) pinned its draft
    # beside the first answer's, both sections named "draft": the prompt showed the draft
    # so far twice and the first answer not at all (issue 50: nothing twice)
    path = project.root / "project.yaml"
    path.write_text(path.read_text() + "generation:\n  checkpoint_summary_interval: 1\n")
    model = (ScriptedModel().add("summarizer", "- The fog lifts over the water.")
             .add("summarizer", Completion("- Mara Quill finds the drowned man's",
                                           finish_reason="length"))
             .add("summarizer", " map at the weir.\n"))
    run_ticks(project, 1, model, offline_seed=0)
    first, retry, more = [r.messages[-1]["content"] for r in model.calls("summarizer")[:3]]
    assert "## Your summary\n- The fog lifts over the water." in retry
    assert more.count("## Your summary") == 1
    assert "## Your summary so far\n- Mara Quill finds the drowned man's\n" in more
    assert "## What it must also name\n" in more and "The fog lifts" not in more
    body = (project.root / "summaries" / "checkpoint_001.md").read_text()
    assert "- Mara Quill finds the drowned man's map at the weir." in body


def test_a_continuation_the_window_cannot_hold_is_not_asked_for_and_the_answer_trimmed(project):
    # a summary cut off at 600 tokens, at a 1,000-token window: the draft so far alone is
    # over the summarizer's budget of 444, so no continuation can be sent; on main the
    # tick stopped after its commit ("the pinned parts of the summarizer prompt need ...")
    shrink(project.root)
    long = " ".join(f"- Mara Quill counts the {n} steps of the tower again." for n in range(60))
    model = ScriptedModel().add("summarizer", Completion(long + " And th",
                                                         finish_reason="length"))
    results = run_ticks(project, 2, model, offline_seed=0)
    assert len(model.calls("summarizer")) >= 1 and results[-1].tick == 2
    said = [w for w in results[-1].summary.warnings if "continuing a cut-off summary" in w]
    assert said and "the pinned parts of the summarizer prompt need" in said[0]
    body = (project.root / "summaries" / "checkpoint_002.md").read_text()
    assert body.rstrip().endswith("of the tower again.")


def tide(lines: int) -> str:
    """A first answer naming none of the range's people, of about 12 tokens a line."""
    return " ".join(f"- The tide turns {n} times over the grey water." for n in range(lines))


def test_a_second_try_names_as_many_of_those_left_out_as_the_window_holds(project):
    # at a 1,000-token window a first answer of 22 lines leaves room for a second try
    # naming two of the five it left out (on main: the tick stopped after its commit)
    shrink(project.root)
    model = ScriptedModel().add("summarizer", tide(22))
    run_ticks(project, 2, model, offline_seed=0)
    retry = model.calls("summarizer")[1]
    budget, counter = budget_and_counter(project)
    assert counter.count_messages(retry.messages) <= budget
    named = retry.messages[-1]["content"].split("It leaves out: ")[1].split(". Write it")[0]
    assert len(named.split("; ")) == 2
    # 24 lines leave no room for even one: the first answer stands, and the report says so
    model = ScriptedModel().add("summarizer", tide(24))
    results = run_ticks(project, 2, model, offline_seed=0)
    assert results[-1].tick == 4
    assert "checkpoint_004: no second summarizer call: the window leaves no room for the " \
           "first answer and what it left out" in results[-1].summary.warnings
