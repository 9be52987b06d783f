"""Thirty ticks at a 1,200-token window through a test server (issue 50, item 12).

On main the tick stopped at tick 3 ("the planner prompt needs 660 tokens and cannot
be cut to the budget of 644"): the planner's sections were filled to their shares of
the whole budget, as if the instructions took none of it, with nothing left to drop;
and the lines that say who is dead and where each was last seen were pinned (the
planner kept every dead one, the writer's brief named six dead and six away with how
each died), growing with the cast. A stress model whose scenes kill one of the cast
in about half of them (stress_model.MortalStressModel), through the real openai SDK
and tests/support/story_server.py, as bench/long_run.py runs: every request of every
stage, retries and continuations included, fits the window with its answer, and no
tick stops.
"""

from __future__ import annotations

import json

import pytest

from novel_agent.story.memory.read import load_memory
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session, counter_for
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.long_checks import LongRun
from tests.support.story_server import StoryServer
from tests.support.stress_model import MortalStressModel

WINDOW = 1200
TICKS = 30
SMALL = {"preset": "aggressive",
         "llm": {"provider": "openai", "model": "small-local-model", "planner_max_tokens": 300,
                 "writer_max_tokens": 400, "extractor_max_tokens": 300,
                 "summarizer_max_tokens": 300},
         "context": {"window": WINDOW},
         "generation": {"scene_min_words": 60, "scene_max_words": 300,
                        "checkpoint_summary_interval": 3},
         "audit": {"llm": True, "max_tokens": 300}}


class Server(StoryServer):
    """The story server, the auditor answered too (it finds nothing)."""

    def __call__(self, body: dict) -> str | dict:
        if "check a draft scene" in body["messages"][0]["content"]:
            return json.dumps({"findings": []})
        return super().__call__(body)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """The book after TICKS ticks at a WINDOW-token window; each request's stage, prompt
    tokens (the project's counter) and max_tokens."""
    project = create_project(tmp_path_factory.mktemp("small") / "small", {
        "name": "small", "premise": "A lighthouse keeper finds a drowned man's map.",
        "protagonist": "Mara Quill"}, config=SMALL)
    server = Server(project, model=MortalStressModel())
    try:
        with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer(server) as fake:
            patch.setattr("novel_agent.files.os.fsync", lambda fd: None)   # not tested here
            config = project.config(flags={"llm.base_url": fake.base_url})
            with reconciled(project), Session.open(project, config,
                                                   {"OPENAI_API_KEY": "sk-test"}) as session:
                watch = LongRun(project)
                results = []
                for _ in range(TICKS):
                    results.append(tick(session))
                    watch.after(results[-1])
    finally:
        server.close()
    counter = counter_for(config)
    sent = [(server.stage(r["json"]), counter.count_messages(r["json"]["messages"]),
             r["json"].get("max_completion_tokens") or r["json"].get("max_tokens"))
            for r in fake.requests if r["path"].endswith("/chat/completions")]
    return project, results, sent, watch


def test_thirty_ticks_at_a_1200_token_window_all_fit_and_none_stops(small_run):
    project, results, sent, _ = small_run
    assert [r.tick for r in results] == list(range(1, TICKS + 1))
    assert Project(project.root).tick() == TICKS
    over = [(stage, tokens, limit) for stage, tokens, limit in sent if tokens + limit > WINDOW]
    assert over == [], f"over the {WINDOW:,}-token window: {over}"
    stages = {stage for stage, _, _ in sent}
    assert {"planner", "writer", "extractor", "summarizer"} <= stages
    assert len(sent) > 4 * TICKS          # the auditor's, the retries and continuations too
    dead = [c for c in load_memory(project.memory_dir).characters.values()
            if c.get("status") == "dead"]
    assert len(dead) >= 10               # what grew with the cast on main grew here too


def test_at_1200_tokens_the_planner_still_tells_every_scene_once(small_run):
    # squeezed, the story so far and the recent scenes are set aside first: every scene
    # from the first is told (in some form), none twice
    _, _, _, watch = small_run
    planner = [s for (t, stage), s in watch.samples.items() if stage == "planner"]
    assert len(planner) == TICKS and all(s.tokens <= s.budget for s in planner)
    assert [(s.tick, s.missing, s.twice) for s in planner if s.missing or s.twice] == []
    assert max(s.level for s in planner) == 3            # (squeezed: the leanest level)


def test_at_1200_tokens_the_last_prompts_still_say_who_is_dead(small_run):
    project, _, _, _ = small_run
    logs = project.root / ".novel" / "log"
    planner = json.loads((logs / f"tick_{TICKS:03d}_planner.json").read_text())
    writer = json.loads((logs / f"tick_{TICKS:03d}_writer.json").read_text())
    prompt = lambda log: log["messages"][-1]["content"]   # noqa: E731
    assert "(dead" in prompt(planner)                     # the most relevant dead: named
    assert "dead" in prompt(writer) and "cannot act or speak" in prompt(writer)
    for log in (planner, writer):
        assert log["tokens"] <= log["budget"]
        names = {s["name"] for s in log["sections"] if s["tokens"]}
        assert "intention" in names or log["stage"] == "planner"
