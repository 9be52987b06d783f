"""The fault table: the OpenAI-compatible test server scripted to fail each way, a tick
run against it through the real SDK, and for each fault the outcome and the number of
requests it cost. A failed tick changes nothing (the draft prose is kept)."""

from __future__ import annotations

import json
import re
import socket

import pytest

from novel_agent.errors import TickError
from novel_agent.models.openai_compat import OpenAICompatModel
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.responders import PROSE, stage_of, story_responder
from tests.support.ticking import run_ticks

PLAN = json.loads(story_responder({"messages": [{"content": "planner"}]}))


class Script:
    """Answers per stage from a queue, then the story's normal answers; counts requests."""

    def __init__(self, **queues):
        self.queues = {stage: list(answers) for stage, answers in queues.items()}
        self.count: dict[str, int] = {}

    def __call__(self, body):
        stage = stage_of(body)
        self.count[stage] = self.count.get(stage, 0) + 1
        queue = self.queues.get(stage)
        return queue.pop(0) if queue else story_responder(body)


def tick_against(project, base_url, *, timeout=5.0, retries=2):
    """One tick on an OpenAICompatModel at `base_url`; (result or error, backoff sleeps)."""
    sleeps: list[float] = []

    def make():
        return OpenAICompatModel(base_url, "fake-model", "sk-test", timeout, retries, 0.5,
                                 sleep=sleeps.append)
    try:
        return run_ticks(project, 1, _Lazy(make))[0], sleeps
    except TickError as exc:
        return exc, sleeps


class _Lazy:
    """A model made on first use (run_ticks hands models through unchanged)."""

    def __init__(self, make):
        self.make, self.inner = make, None

    def describe(self):
        return "fault-table model"

    def complete(self, request):
        if self.inner is None:
            self.inner = self.make()
        return self.inner.complete(request)


def run(project, script, snapshot=None, **kw):
    with FakeOpenAIServer(responder=script) as server:
        outcome, sleeps = tick_against(project, server.base_url, **kw)
        chats = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    return outcome, sleeps, len(chats)


CUT_PROSE = {"content": "Mara Quill turned the map toward the light. The road l",
             "finish_reason": "length"}
TABLE = [
    # fault, script, outcome, chat requests, backoff sleeps
    ("429 with Retry-After", dict(writer=[{"status": 429, "error": "slow down",
                                           "headers": {"Retry-After": "3"}}]),
     "committed", 4, [3.0]),
    ("500 then ok", dict(writer=[{"status": 500, "error": "boom"}]), "committed", 4, 1),
    ("502 then ok", dict(planner=[{"status": 502, "error": "bad gateway"}]), "committed", 4, 1),
    ("503 every time", dict(writer=[{"status": 503, "error": "overloaded"}] * 5),
     "failed in writer: .*HTTP 503", 4, 2),
    ("empty answer", dict(writer=[""]), "failed in writer: .*empty answer", 2, 0),
    ("non-JSON 200 body", dict(writer=[{"raw": ("text/html", "<html>proxy login</html>")}]),
     "failed in writer: .*not a chat completion", 2, 0),
    ("non-JSON 200 body, JSON type", dict(planner=[{"raw": ("application/json", "<html>")}]),
     "failed in planner: .*not a chat completion", 1, 0),
    ("planner cut off (length)", dict(planner=[{"content": json.dumps(PLAN)[:60],
                                                "finish_reason": "length"}]),
     "committed", 4, 0),
    ("writer cut off (length), continued", dict(writer=[CUT_PROSE, {"content": "ay below."}]),
     "committed", 4, 0),
    ("extractor cut off (length)", dict(extractor=[{"content": '{"summary": ["Mara st',
                                                    "finish_reason": "length"}]),
     "committed", 4, 0),
    ("invalid JSON, repaired", dict(planner=['{"title": "x", pov: }']), "committed", 4, 0),
    ("prose where JSON was asked, twice", dict(planner=["I would plan a quiet scene."] * 2),
     "failed in planner: .*after one repair attempt", 2, 0),
    ("extractor: prose twice (the scene lands, summed up by its sentences)",
     dict(extractor=["It was a scene."] * 2), "committed", 4, 0),
]


@pytest.mark.parametrize("fault,queues,outcome,requests,sleeps", TABLE,
                         ids=[row[0] for row in TABLE])
def test_fault(project, snapshot, fault, queues, outcome, requests, sleeps):
    before = snapshot(project.root)
    result, slept, count = run(project, Script(**queues))
    assert count == requests, fault
    assert (slept == sleeps) if isinstance(sleeps, list) else (len(slept) == sleeps)
    if outcome == "committed":
        assert not isinstance(result, TickError), result
        assert project.tick() == 1 and result.scene_path.is_file()
        body = result.scene_path.read_text()
        assert body.rstrip()[-1] in ".!?\"”"        # never mid-word
    else:
        assert isinstance(result, TickError)
        assert re.search(outcome, str(result)), str(result)
        after = snapshot(project.root)
        after = {k: v for k, v in after.items() if not k.startswith(".novel/drafts/")}
        assert after == {k: v for k, v in before.items()}
        assert project.tick() == 0


def test_timeouts_are_retried_then_fail_cleanly(project, snapshot):
    before = snapshot(project.root)
    script = Script(writer=[{"content": PROSE, "delay": 2.0}] * 3)
    result, slept, count = run(project, script, timeout=0.3, retries=1)
    assert isinstance(result, TickError) and result.stage == "writer"
    assert script.count["writer"] == 2 and count == 3 and len(slept) == 1
    assert snapshot(project.root) == before


def test_connection_refused_fails_cleanly_without_a_request(project, snapshot):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # closed when the block ends: nobody listens
    before = snapshot(project.root)
    result, slept = tick_against(project, f"http://127.0.0.1:{port}/v1", retries=1)
    assert isinstance(result, TickError) and result.stage == "planner"
    assert "connection" in str(result).lower() and len(slept) == 1
    assert snapshot(project.root) == before


SUMMARY = ("- Mara Quill studies the drowned man's map: it shows a door she has never seen.\n"
           "- The Stranger, drowned, carried it; what lies behind the drawn door is open.\n"
           "- The lamp burns low while she reads.")
CUT = SUMMARY.index("burns") + 3                  # "…The lamp bur": cut off mid-word
SUMMARY_TABLE = [
    # fault, summarizer answers, the checkpoint's text, its note, chat requests
    ("summarizer cut off (length), continued",
     [{"content": SUMMARY[:CUT], "finish_reason": "length"}, SUMMARY[CUT:]],
     SUMMARY, "continued (1 more call)", 6),
    ("summarizer cut off three times, trimmed",
     [{"content": SUMMARY[:40], "finish_reason": "length"},
      {"content": SUMMARY[40:CUT - 20], "finish_reason": "length"},
      {"content": SUMMARY[CUT - 20:CUT], "finish_reason": "length"}],
     SUMMARY.rsplit("\n", 1)[0], "still cut off after 2 continuations: trimmed to its last "
                                 "complete sentence", 7),
]


def every_tick(project) -> None:
    """A checkpoint at every tick."""
    project.project_file.write_text(project.project_file.read_text()
                                    + "generation:\n  checkpoint_summary_interval: 1\n")


@pytest.mark.parametrize("fault,answers,text,note,requests", SUMMARY_TABLE,
                         ids=[row[0] for row in SUMMARY_TABLE])
def test_summarizer_fault(project, fault, answers, text, note, requests):
    every_tick(project)
    result, slept, count = run(project, Script(summarizer=answers))
    assert not isinstance(result, TickError), result
    assert count == requests and slept == [], fault
    body = (project.summaries_dir / "checkpoint_001.md").read_text().split("---\n", 2)[2]
    assert body.strip() == text                          # never mid-word
    assert result.summary.failure is None and [w for w in result.summary.warnings] == [
        f"checkpoint_001: the summarizer's answer was cut off at the 400-token limit; {note} "
        "(raise llm.summarizer_max_tokens)"]


def test_a_summary_cut_off_before_its_first_sentence_ends_stays_pending(project):
    every_tick(project)
    cut = {"content": "- Mara Quill studies the ma", "finish_reason": "length"}
    result, _, count = run(project, Script(summarizer=[cut, {**cut, "content": "p and"},
                                                       {**cut, "content": " the"}]))
    assert not isinstance(result, TickError) and project.tick() == 1     # the tick landed
    assert count == 6 and not (project.summaries_dir / "checkpoint_001.md").exists()
    assert str(result.summary.failure) == (
        "checkpoint 1 is pending: the summarizer failed: summarizer: checkpoint_001 was cut "
        "off before its first sentence ended (raise llm.summarizer_max_tokens)")
    assert result.summary.pending == [1]
