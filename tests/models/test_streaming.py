"""Streaming as the local provider uses it, through the real SDK against FakeOpenAIServer:
progress callbacks, the idle timeout (silence, not the clock), llama.cpp's options."""

from __future__ import annotations

import pytest

from novel_agent.errors import ModelError
from novel_agent.models.base import WORDS, Progress, Request
from novel_agent.models.local import CACHE_OPTIONS
from novel_agent.models.openai_compat import OpenAICompatModel
from tests.support.fake_openai import FakeOpenAIServer

TEXT = "The lamp burned low while the sea climbed the rocks below the gallery."
PIECES = 14    # the fake server streams 5 characters a piece


def streaming(server: FakeOpenAIServer, timeout: float = 5.0, **options) -> OpenAICompatModel:
    """A model as LocalModel builds it: streamed, timeouts not retried, llama.cpp options."""
    return OpenAICompatModel(server.base_url, "m", None, timeout=timeout, max_retries=2,
                             temperature=0.5, stream=True, retry_timeouts=False,
                             extra_body=CACHE_OPTIONS, sleep=lambda s: None, **options)


def ask(stage: str = "writer") -> Request:
    return Request(stage, [{"role": "user", "content": "Write."}], 60)


def test_progress_fires_with_a_growing_token_count(fake_openai):
    fake_openai.responder = lambda body: {"content": TEXT, "prompt_progress": [
        {"total": 300, "cache": 200, "processed": 200, "time_ms": 0},
        {"total": 300, "cache": 200, "processed": 300, "time_ms": 40}]}
    heard: list[Progress] = []
    completion = streaming(fake_openai, on_progress=heard.append).complete(ask())
    assert completion.text == TEXT
    reading = [p for p in heard if not p.tokens]
    assert [(p.prompt_done, p.prompt_total, p.cached) for p in reading][:2] == [
        (200, 300, 200), (300, 300, 200)]
    counts = [p.tokens for p in heard if p.tokens]
    assert counts == sorted(counts) and set(counts) == set(range(1, PIECES + 1))
    assert all(p.stage == "writer" for p in heard)
    assert heard[-1].seconds >= heard[0].seconds >= 0


def test_a_slow_steady_answer_outlives_the_timeout(fake_openai):
    # 14 pieces 0.06 s apart: 0.84 s in all, over the 0.5 s timeout, never 0.5 s silent
    fake_openai.responder = lambda body: {"content": TEXT, "piece_delay": 0.06}
    completion = streaming(fake_openai, timeout=0.5).complete(ask())
    assert completion.text == TEXT and completion.latency > 0.5


def test_silence_times_out_once_without_a_retry(fake_openai):
    fake_openai.responder = lambda body: {"content": TEXT, "stall": 1.5}
    heard: list[Progress] = []
    with pytest.raises(ModelError, match=r"writer: local model m sent nothing for 0.5s "
                                         r"\(llm.timeout"):
        streaming(fake_openai, timeout=0.5, on_progress=heard.append,
                  label="local").complete(ask())
    assert len([r for r in fake_openai.requests if r["method"] == "POST"]) == 1
    assert heard and heard[-1].tokens == 1         # it had begun; then nothing came


def test_a_remote_model_still_retries_a_timeout(fake_openai):
    fake_openai.responder = lambda body: {"content": TEXT, "stall": 1.0}
    model = OpenAICompatModel(fake_openai.base_url, "m", None, timeout=0.3, max_retries=1,
                              temperature=0.5, stream=True, sleep=lambda s: None)
    with pytest.raises(ModelError, match="after 2 attempts"):
        model.complete(ask())
    assert len(fake_openai.requests) == 2


def test_llama_cpp_options_go_with_every_request(fake_openai):
    model = streaming(fake_openai, prose_options={"repeat_penalty": 1.1})
    model.complete(ask())
    model.complete(Request("planner", [{"role": "user", "content": "Plan."}], 60,
                           json_schema={"type": "object"}))
    prose, plan = (r["json"] for r in fake_openai.requests)
    for body in (prose, plan):
        assert (body["cache_prompt"], body["id_slot"], body["return_progress"]) == (True, 0, True)
        assert body["stream"] is True
    assert prose["repeat_penalty"] == 1.1 and "repeat_penalty" not in plan


def test_tokens_per_second_counts_from_the_first_token():
    assert Progress("writer", seconds=9.0, tokens=1, generating=0.0).tokens_per_second == 0
    assert Progress("writer", seconds=9.0, tokens=21, generating=2.0).tokens_per_second == 10


def test_each_stage_keeps_its_own_slot_and_the_writer_its_grammar(fake_openai):
    from novel_agent.models.local import stage_slots
    model = streaming(fake_openai, slots=stage_slots(), grammars=True,
                      stage_options={"writer": {"dry_multiplier": 0.8}})
    for stage in ("planner", "writer", "extractor", "summarizer"):
        model.complete(Request(stage, [{"role": "user", "content": "Write."}], 60,
                               grammar='root ::= "x"' if stage == "writer" else None,
                               stop=("\nTitle:",)))
    bodies = [r["json"] for r in fake_openai.requests if r["path"].endswith("/chat/completions")]
    assert [b["id_slot"] for b in bodies] == [0, 1, 2, 3]
    assert [b.get("grammar") for b in bodies] == [None, 'root ::= "x"', None, None]
    assert all(b["stop"] == ["\nTitle:"] for b in bodies)
    assert [b.get("dry_multiplier") for b in bodies] == [None, 0.8, None, None]   # writer only


def test_a_grammar_is_not_sent_to_a_provider_that_takes_none(fake_openai):
    OpenAICompatModel(fake_openai.base_url, "m", None, timeout=5.0, max_retries=0,
                      temperature=0.5).complete(Request("writer", [{"role": "user",
                                                                    "content": "Write."}], 60,
                                                        grammar='root ::= "x"'))
    (body,) = [r["json"] for r in fake_openai.requests if r["path"].endswith("/chat/completions")]
    assert "grammar" not in body and "id_slot" not in body and "stop" not in body


def test_an_answer_past_max_words_is_left_unread_and_the_server_stops(fake_openai):
    """The writer cuts a scene at its last sentence within scene_max_words: what a
    streaming model would write past them goes unread, and unwritten."""
    story = " ".join(f"The keeper climbed stair {n} of the tower." for n in range(60))
    fake_openai.responder = lambda body: {"content": story, "piece_delay": 0.002,
                                          "prompt_progress": [{"total": 90, "cache": 30,
                                                               "processed": 90}]}
    request = Request("writer", [{"role": "user", "content": "Write."}], 900, max_words=40)
    completion = streaming(fake_openai).complete(request)
    assert completion.finish_reason == WORDS
    assert len(completion.text.split()) > 40 and story.startswith(completion.text)
    assert len(completion.text) < len(" ".join(story.split()[:41])) + 5   # within a piece
    assert completion.usage.completion_tokens == -(-len(completion.text) // 5)  # the pieces
    assert (completion.usage.prompt_tokens, completion.usage.cached_tokens) == (90, 30)
    assert fake_openai.streams_ended.acquire(timeout=5)
    assert fake_openai.streams_abandoned == 1         # the server never finished sending
    whole = streaming(fake_openai).complete(Request("writer", request.messages, 900))
    assert whole.text == story and whole.finish_reason == "stop"
