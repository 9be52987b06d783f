"""AnthropicModel: the real anthropic SDK over HTTP against FakeAnthropicServer."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from novel_agent.config.layers import load_config
from novel_agent.errors import ConfigError, ModelError
from novel_agent.models import describe_provider, get_model, missing_key, model_id
from novel_agent.models.anthropic_model import AnthropicModel, _split
from novel_agent.models.base import WORDS, ChatModel, Progress, Request
from novel_agent.models.prices import Price, model_price
from novel_agent.models.recording import RecordingModel
from tests.support.fake_anthropic import FakeAnthropicServer, fake_anthropic  # noqa: F401

SCHEMA = {"type": "object", "properties": {"title": {"type": "string", "maxLength": 40}},
          "required": ["title"]}
KEY = "sk-ant-test-SECRET123"
STABLE = "## Story bible\nA lighthouse keeper finds a drowned man's map.\n\n"
PROMPT = STABLE + "## This scene\nMara opens the door."


def make_model(server: FakeAnthropicServer, **overrides) -> tuple[AnthropicModel, list[float]]:
    """A model pointed at the fake server, with sleeps recorded instead of slept."""
    slept: list[float] = []
    options = dict(base_url=server.base_url, timeout=5.0, max_retries=3, sleep=slept.append)
    options.update(overrides)
    return AnthropicModel("claude-sonnet-4-6", KEY, **options), slept


def ask(stage: str = "writer", schema: dict | None = None, *, stable: int = 0,
        text: str = PROMPT) -> Request:
    return Request(stage=stage, messages=[{"role": "system", "content": "You write."},
                                          {"role": "user", "content": text}],
                   max_tokens=50, json_schema=schema, schema_name="plan", stable_prefix=stable)


def test_a_json_answer_is_the_input_of_the_one_tool_the_request_forces(fake_anthropic):
    fake_anthropic.responder = lambda body: json.dumps({"title": "The Drawn Door"})
    for stream in (False, True):
        model, _ = make_model(fake_anthropic, stream=stream)
        assert isinstance(model, ChatModel)
        completion = model.complete(ask("planner", SCHEMA))
        assert json.loads(completion.text) == {"title": "The Drawn Door"}
        assert (completion.response_format, completion.finish_reason) == ("tool_use", "stop")
        assert completion.model == "claude-sonnet-4-6" and completion.attempts == 1
    for body in fake_anthropic.messages:
        (tool,) = body["tools"]
        assert tool["input_schema"] == SCHEMA and tool["name"] == "plan"
        assert body["tool_choice"] == {"type": "tool", "name": "plan"}
        assert body["max_tokens"] == 50 and "temperature" not in body
    (plain, streamed) = fake_anthropic.requests
    assert plain["headers"]["authorization"] == f"Bearer {KEY}" and "stream" not in plain["json"]
    assert streamed["json"]["stream"] is True


def test_prose_streams_and_tells_progress_of_each_piece(fake_anthropic):
    fake_anthropic.responder = lambda body: "The rain began over the harbour at dusk."
    heard: list[Progress] = []
    model, _ = make_model(fake_anthropic, on_progress=heard.append)
    completion = model.complete(ask())
    assert completion.text == "The rain began over the harbour at dusk."
    assert completion.response_format == "" and "tools" not in fake_anthropic.messages[0]
    tokens = [p.tokens for p in heard]
    assert tokens == sorted(tokens) and tokens[-1] == 8     # 40 characters, 5 a piece
    assert all(p.stage == "writer" for p in heard)
    assert heard[-1].prompt_total == completion.usage.prompt_tokens > 0


def test_a_streamed_answer_past_max_words_is_left_unread(fake_anthropic):
    fake_anthropic.responder = lambda body: " ".join(["word"] * 200)
    model, _ = make_model(fake_anthropic)
    completion = model.complete(Request("writer", [{"role": "user", "content": "Go."}], 500,
                                        max_words=10))
    assert completion.finish_reason == WORDS
    assert 10 < len(completion.text.split()) < 14


def test_a_cut_answer_is_length_and_stop_sequences_are_sent(fake_anthropic):
    fake_anthropic.responder = lambda body: " ".join(["word"] * 80)
    model, _ = make_model(fake_anthropic)
    request = Request("writer", [{"role": "user", "content": "Go."}], 50,
                      stop=("\nTitle:", "\n- Open"))
    assert model.complete(request).finish_reason == "length"
    assert fake_anthropic.messages[0]["stop_sequences"] == ["\nTitle:", "\n- Open"]


def test_breakpoints_end_the_system_and_the_stable_prefix(fake_anthropic):
    model, _ = make_model(fake_anthropic)
    model.complete(ask(stable=len(STABLE)))
    body = fake_anthropic.messages[0]
    assert body["system"] == [{"type": "text", "text": "You write.",
                               "cache_control": {"type": "ephemeral"}}]
    (user,) = body["messages"]
    assert user["content"] == [
        {"type": "text", "text": STABLE, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "## This scene\nMara opens the door."}]
    model.complete(ask())       # no stable prefix known: the message whole, unmarked
    assert fake_anthropic.messages[1]["messages"][0]["content"] == [
        {"type": "text", "text": PROMPT}]


def test_the_recent_scenes_are_a_block_a_paragraph_and_the_next_tick_reads_them(
        fake_anthropic):
    recent = "## Recent scenes\nScene 4 was dark.\n\nScene 5 was wet.\n\n"
    tail = "## This scene\nMara opens the door."
    model, _ = make_model(fake_anthropic)
    first = model.complete(Request("writer", [{"role": "user", "content": STABLE + recent + tail}],
                                   50, stable_prefix=len(STABLE),
                                   growing_prefix=len(STABLE + recent)))
    blocks = fake_anthropic.messages[0]["messages"][0]["content"]
    assert [(b["text"], "cache_control" in b) for b in blocks] == [
        (STABLE, True), ("## Recent scenes\nScene 4 was dark.\n\n", False),
        ("Scene 5 was wet.\n\n", True), (tail, False)]
    # the next tick appends scene 6: all but it is read from the cache
    more = recent + "Scene 6 was bright.\n\n"
    second = model.complete(Request("writer", [{"role": "user", "content": STABLE + more + tail}],
                                    50, stable_prefix=len(STABLE),
                                    growing_prefix=len(STABLE + more)))
    assert first.usage.cache_write_tokens == len((STABLE + recent).split())
    assert second.usage.cached_tokens == len((STABLE + recent).split())
    assert second.usage.cache_write_tokens == len("Scene 6 was bright.".split())


def test_the_second_call_reads_the_stable_prefix_from_the_cache(fake_anthropic):
    model, _ = make_model(fake_anthropic)
    first = model.complete(ask(stable=len(STABLE)))
    second = model.complete(ask(stable=len(STABLE), text=STABLE + "## This scene\nShe runs."))
    prefix = len("You write.".split()) + len(STABLE.split())     # the fake's tokens are words
    assert (first.usage.cached_tokens, first.usage.cache_write_tokens) == (0, prefix)
    assert (second.usage.cached_tokens, second.usage.cache_write_tokens) == (prefix, 0)
    assert second.usage.prompt_tokens == prefix + 5     # "## This scene She runs."


def test_empty_messages_are_left_out_and_a_roles_messages_joined(fake_anthropic):
    model, _ = make_model(fake_anthropic)
    repair = [{"role": "user", "content": "Plan."}, {"role": "assistant", "content": ""},
              {"role": "user", "content": "Answer again."}]
    model.complete(Request("planner", repair, 50, json_schema=SCHEMA))
    assert fake_anthropic.messages[0]["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Plan."}, {"type": "text", "text": "Answer again."}]}]


def test_cache_reads_and_writes_are_in_the_ledger_at_their_prices(fake_anthropic):
    price = model_price("claude-sonnet-4-5-20250929")      # a dated name: its model's price
    assert price == Price(3.0, 0.3, 15.0, checked=price.checked,
                          source="configs/models.yaml: claude-sonnet-4-5", cache_write=3.75)
    inner, _ = make_model(fake_anthropic)
    model = RecordingModel(inner, tick=4, model="claude-sonnet-4-6", provider="anthropic",
                           price=price)
    model.complete(ask(stable=len(STABLE)))
    model.complete(ask(stable=len(STABLE)))
    wrote, read = model.drain()
    assert wrote["cache_write_tokens"] > 0 == wrote["cached_tokens"]
    assert read["cached_tokens"] == wrote["cache_write_tokens"] > 0 == read["cache_write_tokens"]
    for row in (wrote, read):
        plain = row["prompt_tokens"] - row["cached_tokens"] - row["cache_write_tokens"]
        dollars = (plain * 3.0 + row["cached_tokens"] * 0.3 + row["cache_write_tokens"] * 3.75
                   + row["completion_tokens"] * 15.0) / 1e6
        assert row["cost"] == pytest.approx(dollars, abs=1e-9)
    assert read["cost"] < wrote["cost"]


def test_a_refused_key_names_its_variable_never_the_key(fake_anthropic):
    fake_anthropic.api_key = "sk-ant-the-right-one"
    model, slept = make_model(fake_anthropic, key_env="MY_CLAUDE_KEY")
    with pytest.raises(ModelError) as caught:
        model.complete(ask())
    message = str(caught.value)
    assert message.startswith("writer: anthropic model claude-sonnet-4-6 failed: HTTP 401: "
                              "invalid x-api-key")
    assert "$MY_CLAUDE_KEY" in message and KEY not in message and "\n" not in message
    assert caught.value.status == 401 and slept == [] and caught.value.attempts == 1


def test_a_server_sent_no_key_says_so_not_an_empty_variable(fake_anthropic):
    fake_anthropic.api_key = "sk-ant-the-right-one"
    model = AnthropicModel("claude-sonnet-4-6", None, base_url=fake_anthropic.base_url,
                           key_env="", max_retries=0)
    with pytest.raises(ModelError) as caught:
        model.complete(ask())
    message = str(caught.value)
    assert "no key was sent" in message and "api_key_env" in message and "$ " not in message


def test_overloaded_and_rate_limited_calls_are_retried_with_backoff(fake_anthropic):
    fake_anthropic.fail_first = [529, 429, 500]
    model, slept = make_model(fake_anthropic)
    completion = model.complete(ask())
    assert completion.text.startswith("echo: ") and completion.attempts == 4
    assert slept == [0.5, 1.0, 2.0]


def test_overloaded_past_the_retries_is_one_line(fake_anthropic):
    fake_anthropic.fail_first = [529] * 5
    model, slept = make_model(fake_anthropic, max_retries=2)
    with pytest.raises(ModelError) as caught:
        model.complete(ask())
    assert str(caught.value) == ("writer: anthropic model claude-sonnet-4-6 failed: HTTP 529: "
                                 "Overloaded (after 3 attempts)")
    assert caught.value.attempts == 3 and len(slept) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_a_server_that_says_nothing_times_out_as_one_line(fake_anthropic, stream):
    fake_anthropic.responder = lambda body: {"content": "Too late.", "delay": 3.0}
    model, _ = make_model(fake_anthropic, timeout=0.3, max_retries=1, stream=stream)
    with pytest.raises(ModelError) as caught:
        model.complete(ask())
    what = "sent nothing for 0.3s (llm.timeout: the longest silence allowed)" if stream \
        else "timed out after 0.3s"
    assert str(caught.value) == (f"writer: anthropic model claude-sonnet-4-6 {what} "
                                 "(after 2 attempts)")


def test_the_provider_reads_its_own_key_and_says_what_it_lacks(fake_anthropic, tmp_path):
    config = load_config(flags={"llm.provider": "anthropic"})
    assert model_id(config) == "claude-sonnet-4-6"
    assert describe_provider(config) == "anthropic claude-sonnet-4-6 at api.anthropic.com"
    assert "$ANTHROPIC_API_KEY is not set" in missing_key(config, {"OPENAI_API_KEY": "x"})
    assert missing_key(config, {"ANTHROPIC_API_KEY": KEY}) == ""
    with pytest.raises(ConfigError, match=r"\$ANTHROPIC_API_KEY is not set"):
        get_model(config, {})
    served = load_config(flags={"llm.provider": "anthropic", "llm.base_url":
                                    fake_anthropic.base_url, "llm.api_key_env": "MY_KEY"})
    model = get_model(served, {"MY_KEY": KEY})
    assert model.describe() == f"anthropic model claude-sonnet-4-6 at {fake_anthropic.base_url}"
    model.complete(ask())
    assert fake_anthropic.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_without_the_sdk_the_provider_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)     # `import anthropic` fails
    monkeypatch.delitem(sys.modules, "novel_agent.models.anthropic_model", raising=False)
    config = load_config(flags={"llm.provider": "anthropic"})
    with pytest.raises(ConfigError, match=r"anthropic SDK is not installed: pip install "
                                          r"'novel_agent\[anthropic\]'"):
        get_model(config, {"ANTHROPIC_API_KEY": KEY})


@given(st.text(alphabet="ab \n", max_size=40), st.integers(0, 40), st.integers(0, 40))
def test_the_blocks_of_a_message_join_back_and_none_is_blank(text, stable, growing):
    assume(text.strip())
    blocks = _split(text, stable, growing)
    assert "".join(b["text"] for b in blocks) == text
    assert all(b["text"].strip() for b in blocks)
    assert sum("cache_control" in b for b in blocks) <= 2
