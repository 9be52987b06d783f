"""Checkpoints through the real openai SDK: the summarizer's prompt holds the right range."""

from __future__ import annotations

import yaml

from novel_agent.files import read_front_matter
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.responders import story_responder

SUMMARY = ("- Mara Quill studies the drowned man's map: it shows a door she has never seen.\n"
           "- The question of what lies behind the drawn door opens.\n"
           "- The Stranger, drowned, carried the map.")


def responder(body):
    if "condense part of a novel" in body["messages"][0]["content"]:
        return SUMMARY
    return story_responder(body)


def summarizer_prompts(server) -> list[str]:
    return [r["json"]["messages"][-1]["content"] for r in server.requests
            if r["path"].endswith("/chat/completions")
            and "condense part of a novel" in r["json"]["messages"][0]["content"]]


def test_each_checkpoint_prompt_holds_its_own_range(openai_project):
    project_file = openai_project / "project.yaml"
    data = yaml.safe_load(project_file.read_text())
    data["generation"] = {"checkpoint_summary_interval": 2}
    project_file.write_text(yaml.safe_dump(data))
    with FakeOpenAIServer(responder) as server:
        result = invoke("tick", "-p", "harbour", "-n", "4", "--base-url",
                        server.base_url, "--model", "gpt-4o-mini")
    assert result.exit_code == 0, result.output
    first, overall_1, second, overall_2 = summarizer_prompts(server)
    assert first.rstrip().endswith("Summarize scenes 1 to 2 as 3 to 5 markdown bullets of key "
                                   "plot points: major developments, character changes, new "
                                   "threads, resolved conflicts.")
    assert "## Scenes 1–2" in first
    assert "### Scene 1 — The Drawn Door" in first and "### Scene 2 — The Map" in first
    assert "Scene 3" not in first
    assert "Summarize scenes 3 to 4" in second and "## Scenes 3–4" in second
    assert "### Scene 3 — The Door" in second and "### Scene 4 — The Drawn Door 2" in second
    assert "### Scene 1 —" not in second and "### Scene 2 —" not in second
    # the overall summary is extended with what is new, and read back as "summary so far"
    assert "adding what scenes 3 to 4 bring" in overall_2 and "### Scenes 3–4" in overall_2
    assert "## Summary so far" in overall_2 and "### Scenes 1–2" not in overall_2
    assert "## Summary so far\n" + SUMMARY in second
    meta, body = read_front_matter(openai_project / "summaries" / "checkpoint_004.md")
    assert (meta["first"], meta["last"], meta["model"]) == (3, 4, "gpt-4o-mini")
    assert meta["coverage"] == 1.0 and body == SUMMARY
    assert "  summarize" in result.output
