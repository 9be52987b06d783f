"""OpenAICompatModel: the real openai SDK over HTTP against FakeOpenAIServer."""

from __future__ import annotations

import json

import openai
import pytest

from novel_agent.errors import ModelError, ModelResponseError
from novel_agent.models.base import ChatModel, Request
from novel_agent.models.openai_compat import OpenAICompatModel
from tests.support.fake_openai import FakeOpenAIServer

SCHEMA = {"type": "object", "properties": {"title": {"type": "string", "maxLength": 40}},
          "required": ["title"]}


def make_model(server: FakeOpenAIServer, **overrides) -> tuple[OpenAICompatModel, list[float]]:
    """A model pointed at the fake server, with sleeps recorded instead of slept."""
    slept: list[float] = []
    options = dict(base_url=server.base_url, model="gpt-test", api_key="sk-test-SECRET123",
                   timeout=5.0, max_retries=3, temperature=0.7, seed=7, sleep=slept.append)
    options.update(overrides)
    return OpenAICompatModel(**options), slept


def ask(stage: str = "writer", schema: dict | None = None) -> Request:
    return Request(stage=stage, messages=[{"role": "system", "content": "You write."},
                                          {"role": "user", "content": "Begin the scene."}],
                   max_tokens=50, json_schema=schema, schema_name="plan")


def chat_calls(server: FakeOpenAIServer) -> list[dict]:
    return [r for r in server.requests if r["path"] == "/v1/chat/completions"]


def test_plain_completion_reports_text_usage_and_cached_tokens(fake_openai):
    fake_openai.responder = lambda body: {
        "content": "The rain began.", "usage": {"prompt_tokens": 120, "completion_tokens": 4,
                                               "prompt_tokens_details": {"cached_tokens": 64}}}
    model, _ = make_model(fake_openai)
    assert isinstance(model, ChatModel)
    completion = model.complete(ask())
    assert completion.text == "The rain began."
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens,
            completion.usage.cached_tokens) == (120, 4, 64)
    assert completion.finish_reason == "stop"
    assert completion.model == "gpt-test"
    assert completion.response_format == ""
    assert completion.latency >= 0
    (sent,) = chat_calls(fake_openai)
    assert sent["headers"]["authorization"] == "Bearer sk-test-SECRET123"
    assert sent["json"]["max_tokens"] == 50 and sent["json"]["seed"] == 7
    assert sent["json"]["temperature"] == 0.7
    assert "response_format" not in sent["json"]


def test_describe_names_label_model_and_url(fake_openai):
    model, _ = make_model(fake_openai)
    assert model.describe() == f"openai model gpt-test at {fake_openai.base_url}"


def test_json_schema_request_body(fake_openai):
    model, _ = make_model(fake_openai)
    completion = model.complete(ask("planner", SCHEMA))
    assert json.loads(completion.text) == {"echo": "Begin the scene."}
    assert completion.response_format == "json_schema"
    (sent,) = chat_calls(fake_openai)
    assert sent["json"]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "plan", "schema": SCHEMA, "strict": False}}


def test_rejected_json_schema_falls_back_to_json_object_and_remembers(fake_openai):
    fake_openai.reject_json_schema = True
    model, _ = make_model(fake_openai)
    assert model.complete(ask("planner", SCHEMA)).response_format == "json_object"
    assert model.complete(ask("planner", SCHEMA)).response_format == "json_object"
    kinds = [r["json"]["response_format"]["type"] for r in chat_calls(fake_openai)]
    assert kinds == ["json_schema", "json_object", "json_object"]   # probed once only


def test_both_json_formats_rejected_falls_back_to_text(fake_openai):
    fake_openai.reject_json_schema = fake_openai.reject_json_object = True
    model, _ = make_model(fake_openai)
    completion = model.complete(ask("planner", SCHEMA))
    assert completion.response_format == "text"
    assert completion.text == "echo: Begin the scene."
    last = chat_calls(fake_openai)[-1]["json"]
    assert "response_format" not in last
    assert model.response_format_level == "text"


def test_a_400_after_the_format_worked_is_a_real_error(fake_openai):
    model, _ = make_model(fake_openai)
    model.complete(ask("planner", SCHEMA))
    fake_openai.responder = lambda body: {"status": 400, "error": "context length exceeded"}
    with pytest.raises(ModelError) as info:
        model.complete(ask("planner", SCHEMA))
    assert info.value.status == 400 and "context length exceeded" in str(info.value)
    assert model.response_format_level == "json_schema"
    assert len(chat_calls(fake_openai)) == 2


def test_context_overflow_is_not_taken_for_a_refused_format(fake_openai):
    fake_openai.responder = lambda body: {
        "status": 400, "error": "request (9000 tokens) exceeds the available context size"}
    model, _ = make_model(fake_openai)
    with pytest.raises(ModelError, match="exceeds the available context size"):
        model.complete(ask("planner", SCHEMA))
    assert len(chat_calls(fake_openai)) == 1
    assert model.response_format_level == "json_schema"


def test_retries_429_then_succeeds(fake_openai):
    fake_openai.fail_first = [429, 429]
    model, slept = make_model(fake_openai)
    assert model.complete(ask()).text == "echo: Begin the scene."
    assert len(chat_calls(fake_openai)) == 3
    assert slept == [0.5, 1.0]


def test_500_exhausting_retries_raises_model_error_with_status(fake_openai):
    fake_openai.fail_first = [500, 502, 503]
    model, slept = make_model(fake_openai, max_retries=2)
    with pytest.raises(ModelError) as info:
        model.complete(ask("extractor"))
    error = info.value
    assert error.status == 503 and error.stage == "extractor"
    assert str(error) == ("extractor: openai model gpt-test failed: HTTP 503: "
                          "simulated failure 503 (after 3 attempts)")
    assert len(chat_calls(fake_openai)) == 3 and len(slept) == 2


def test_json_call_retries_5xx_before_any_fallback(fake_openai):
    fake_openai.fail_first = [500]
    model, _ = make_model(fake_openai)
    assert model.complete(ask("planner", SCHEMA)).response_format == "json_schema"


def test_slow_answer_times_out():
    with FakeOpenAIServer(delay=0.5) as server:   # the server's wait ends when it stops
        model, slept = make_model(server, timeout=0.05, max_retries=1)
        with pytest.raises(ModelError) as info:
            model.complete(ask())
    assert "timed out after 0.05s" in str(info.value)
    assert info.value.status is None and len(slept) == 1


def test_connection_refused_is_a_model_error():
    with FakeOpenAIServer() as server:
        url = server.base_url
    model = OpenAICompatModel(url, "gpt-test", None, 2.0, 1, 0.5, sleep=lambda s: None)
    with pytest.raises(ModelError, match="Connection error"):
        model.complete(ask())


def test_streaming_assembles_text_and_usage(fake_openai):
    fake_openai.responder = lambda body: {
        "content": "A long streamed sentence arrives in pieces.",
        "usage": {"prompt_tokens": 30, "completion_tokens": 9,
                  "prompt_tokens_details": {"cached_tokens": 16}}}
    model, _ = make_model(fake_openai, stream=True)
    completion = model.complete(ask())
    assert completion.text == "A long streamed sentence arrives in pieces."
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens,
            completion.usage.cached_tokens) == (30, 9, 16)
    assert completion.finish_reason == "stop"
    (sent,) = chat_calls(fake_openai)
    assert sent["json"]["stream"] is True
    assert sent["json"]["stream_options"] == {"include_usage": True}


def test_streaming_json_schema(fake_openai):
    model, _ = make_model(fake_openai, stream=True)
    completion = model.complete(ask("planner", SCHEMA))
    assert json.loads(completion.text) == {"echo": "Begin the scene."}
    assert completion.response_format == "json_schema"


def test_empty_answer_is_a_response_error(fake_openai):
    fake_openai.responder = lambda body: {"content": "", "finish_reason": "length"}
    model, _ = make_model(fake_openai)
    with pytest.raises(ModelResponseError, match="empty answer.*finish_reason=length"):
        model.complete(ask())


def test_api_key_never_in_error_message(fake_openai):
    fake_openai.responder = lambda body: {
        "status": 401, "error": "Incorrect API key provided: sk-test-SECRET123.\nSee docs."}
    model, slept = make_model(fake_openai)
    with pytest.raises(ModelError) as info:
        model.complete(ask())
    message = str(info.value)
    assert "SECRET123" not in message and "\n" not in message
    assert info.value.status == 401 and "Incorrect API key provided: ***" in message
    assert slept == []   # 401 is not retried
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_max_tokens_refused_switches_to_max_completion_tokens(fake_openai):
    def responder(body):
        if "max_tokens" in body:
            return {"status": 400, "error": "Unsupported parameter: 'max_tokens'. "
                                            "Use 'max_completion_tokens' instead."}
        return "ok"
    fake_openai.responder = responder
    model, _ = make_model(fake_openai)
    assert model.complete(ask()).text == "ok"
    assert model.complete(ask()).text == "ok"
    sent = [r["json"] for r in chat_calls(fake_openai)]
    assert [("max_tokens" in b, b.get("max_completion_tokens")) for b in sent] == [
        (True, None), (False, 50), (False, 50)]


def test_no_key_sends_placeholder(fake_openai):
    model = OpenAICompatModel(fake_openai.base_url, "m", None, 5.0, 0, 0.5, label="local")
    model.complete(ask())
    assert chat_calls(fake_openai)[0]["headers"]["authorization"] == "Bearer not-needed"


def test_fake_server_models_and_embeddings(fake_openai):
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-x", max_retries=0)
    assert [m.id for m in client.models.list()] == ["fake-model"]
    first = client.embeddings.create(model="emb", input=["a cat", "a dog"])
    again = client.embeddings.create(model="emb", input="a cat", encoding_format="float")
    assert len(first.data) == 2 and len(first.data[0].embedding) == 8
    assert first.data[0].embedding == pytest.approx(again.data[0].embedding, abs=1e-6)
    assert first.data[0].embedding != first.data[1].embedding


def test_prose_options_go_with_prose_requests_only():
    from novel_agent.models.base import Request
    from novel_agent.models.openai_compat import OpenAICompatModel
    with FakeOpenAIServer() as server:
        model = OpenAICompatModel(server.base_url, "m", None, timeout=5, max_retries=0,
                                  temperature=0.5, prose_options={"repeat_penalty": 1.1})
        model.complete(Request("writer", [{"role": "user", "content": "hi"}], 10))
        model.complete(Request("planner", [{"role": "user", "content": "hi"}], 10,
                               json_schema={"type": "object"}))
    prose, json_call = (r["json"] for r in server.requests)
    assert prose["repeat_penalty"] == 1.1
    assert "repeat_penalty" not in json_call
