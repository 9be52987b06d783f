"""Token counting: the offline vocabulary, encodings per model, caching, truncation."""

from __future__ import annotations

import gzip
import os
import re
import socket

import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from novel_agent.errors import ConfigError, VocabularyError
from novel_agent.text.tokens import (
    SHORT_TEXT,
    CountStats,
    DictStore,
    TokenCounter,
    encoding_name_for_model,
)
from novel_agent.text.vocabulary import VOCABULARIES, build_encoding, shipped_data_dir

ENCODINGS = ["cl100k_base", "o200k_base"]
SAMPLE = ("Mara Quill climbed the lighthouse stairs at dusk. «Who drew this map?» she asked "
          "the drowned man's coat — 42 steps, ünïcödé, 灯台, 🌊, <|endoftext|>.\n\n")
MARKER = re.compile(r"\n\[… ([\d,]+) tokens cut …\]\n")


@pytest.fixture
def no_network(monkeypatch):
    """No connection of any kind, not even to loopback."""
    def refuse(*args, **kwargs):
        raise OSError("network unreachable (test)")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def tiktokens_own(monkeypatch, name: str) -> dict:
    """What tiktoken's own constructor builds for `name`, its download answered by the
    shipped file once the hash it asks for is checked to be ours."""
    asked = []

    def shipped(blobpath, expected_hash=None):
        asked.append(expected_hash)
        return gzip.decompress((shipped_data_dir() / f"{name}.tiktoken.gz").read_bytes())

    monkeypatch.setattr(tiktoken.load, "read_file_cached", shipped)
    spec = openai_public.ENCODING_CONSTRUCTORS[name]()
    monkeypatch.undo()
    assert asked == [VOCABULARIES[name].sha256]
    return spec


# ---------------------------------------------------------------- offline vocabulary


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_encoding_is_tiktokens_own(no_network, monkeypatch, name):
    spec = tiktokens_own(monkeypatch, name)
    assert spec["pat_str"] == VOCABULARIES[name].pat_str
    assert spec["special_tokens"] == dict(VOCABULARIES[name].special_tokens)
    ours = build_encoding(name, shipped_data_dir())
    reference = tiktoken.Encoding(**spec)
    assert ours.encode(SAMPLE, disallowed_special=()) == reference.encode(SAMPLE, disallowed_special=())
    assert len(ours.encode_ordinary(SAMPLE)) > 20


def test_counting_uses_no_cache_dir_and_sets_no_environment(no_network, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    before = dict(os.environ)
    counter = TokenCounter("gpt-4o", load=lambda name: build_encoding(name, shipped_data_dir()))
    assert counter.count(SAMPLE) > 20
    assert dict(os.environ) == before
    assert not (tmp_path / "tiktoken-cache").exists()


def test_a_vocabulary_with_the_wrong_hash_is_refused(tmp_path):
    (tmp_path / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"dGFtcGVyZWQ= 0\n"))
    with pytest.raises(VocabularyError, match="sha256.*reinstall bpe-openai") as info:
        build_encoding("o200k_base", tmp_path)
    assert info.value.path == str(tmp_path / "o200k_base.tiktoken.gz")


def test_a_missing_vocabulary_file_is_named(tmp_path):
    with pytest.raises(VocabularyError) as info:
        build_encoding("cl100k_base", tmp_path)
    assert info.value.path == str(tmp_path / "cl100k_base.tiktoken.gz")
    assert "cl100k_base.tiktoken.gz" in str(info.value)


def test_unknown_encoding_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown encoding 'r99k'"):
        TokenCounter("gpt-4o", encoding="r99k").count("hello")


# ---------------------------------------------------------------- encoding per model


@pytest.mark.parametrize("model, expected", [
    ("gpt-4o", "o200k_base"), ("gpt-4o-mini-2024-07-18", "o200k_base"),
    ("openai/gpt-4o", "o200k_base"), ("chatgpt-4o-latest", "o200k_base"),
    ("gpt-4.1-nano", "o200k_base"), ("gpt-5", "o200k_base"), ("gpt-5-mini", "o200k_base"),
    ("o1", "o200k_base"), ("o1-mini", "o200k_base"), ("o3-mini", "o200k_base"),
    ("openai/o4-mini", "o200k_base"), ("ft:gpt-4o-mini:acme::x1", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-4-turbo", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base"),
    ("claude-3-5-sonnet", "cl100k_base"), ("llama3.1:8b", "cl100k_base"),
    ("ollama", "cl100k_base"), ("SmolLM2-135M-Instruct", "cl100k_base"),
])
def test_encoding_per_model(model, expected):
    assert encoding_name_for_model(model) == expected


def test_encoding_override_wins():
    assert encoding_name_for_model("gpt-4o", "cl100k_base") == "cl100k_base"
    assert TokenCounter("llama3", encoding="o200k_base").encoding_name == "o200k_base"


# ---------------------------------------------------------------- count caching


class RecordingStore(DictStore):
    def __init__(self):
        super().__init__()
        self.gets: list[str] = []

    def get(self, key):
        self.gets.append(key)
        return super().get(key)


LONG_SAMPLE = (SAMPLE + " ") * (SHORT_TEXT // len(SAMPLE) + 1)   # long enough for the store


def test_second_count_is_a_memory_hit_and_the_store_is_filled():
    store = RecordingStore()
    counter = TokenCounter("gpt-4o", store=store)
    n = counter.count(LONG_SAMPLE)
    assert store.gets == [counter.key(LONG_SAMPLE)] and store.counts == {
        counter.key(LONG_SAMPLE): n}
    assert counter.stats == CountStats(hits=0, store_hits=0, misses=1)
    counter.encoding = None  # a hit must not encode
    assert counter.count(LONG_SAMPLE) == n
    assert counter.stats == CountStats(hits=1, store_hits=0, misses=1)
    assert len(store.gets) == 1


def test_a_short_text_is_encoded_and_kept_in_memory_not_in_the_store():
    """Item lines (names, cards, loops with their OVERDUE count) are many and new every
    tick: encoding one costs less than asking the store, and filling the store with
    them made every tick's flush grow with the book."""
    store = RecordingStore()
    counter = TokenCounter("gpt-4o", store=store)
    n = counter.count(SAMPLE)
    assert n == len(counter.encoding.encode_ordinary(SAMPLE))
    assert store.gets == [] and store.counts == {}
    counter.encoding = None  # a hit must not encode
    assert counter.count(SAMPLE) == n
    assert counter.stats == CountStats(hits=1, store_hits=0, misses=1)


def test_a_new_counter_is_answered_by_the_store():
    store = DictStore()
    n = TokenCounter("gpt-4o", store=store).count(LONG_SAMPLE)
    fresh = TokenCounter("gpt-4o", store=store)
    fresh.encoding = None
    assert fresh.count(LONG_SAMPLE) == n
    assert fresh.stats == CountStats(hits=0, store_hits=1, misses=0)


# ---------------------------------------------------------------- counted line by line

HEADS = ["x.\n", "abc\n", "abc \n", "ab\n\n", "7\n", ". \n", "\t\n", "a\r\n", "'s\n",
         "\u3000\n", "é\n"]


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
def test_a_line_begins_where_no_token_crosses_for_every_character_after_the_newline(model):
    """LINE_WISE's rule, character by character (the BMP below U+3000; the whole of
    Unicode was checked once): where the text splits, the pieces' counts sum to the
    whole's; a white space or "/" after the newline keeps the text whole."""
    from novel_agent.text.tokens import _LINE_START
    encode = TokenCounter(model).encoding.encode_ordinary
    split = 0
    for cp in range(0x3000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        for head in HEADS:
            text = head + chr(cp) + "y z"
            parts = _LINE_START.split(text)
            if len(parts) > 1:
                split += 1
                assert len(encode(text)) == sum(len(encode(p)) for p in parts), repr(text)
            else:
                assert chr(cp).isspace() or chr(cp) == "/"
    assert split > 0.9 * 0x3000 * len(HEADS)


LINES = st.lists(st.text(alphabet=st.sampled_from(list(
    "ab Z9/.,'-#*\n\t\r é灯台🌊\u3000\u0301\u00a0")), max_size=60), min_size=8, max_size=40)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=LINES, model=st.sampled_from(["gpt-4o", "gpt-4"]))
def test_a_long_text_counted_line_by_line_counts_as_encoded_whole(lines, model):
    text = "\n".join(lines) * (1 + SHORT_TEXT // max(1, len("\n".join(lines))))
    assume(len(text) >= SHORT_TEXT)
    counter = TokenCounter(model)
    assert counter.count(text) == len(counter.encoding.encode_ordinary(text))


def test_a_prompt_changed_in_one_line_encodes_that_line_only():
    counter = TokenCounter("gpt-4o")
    lines = [f"- fact {n}: Mara Quill saw the map at the lighthouse, scene {n}." for n in range(60)]
    first = "## What is known\n" + "\n".join(lines) + "\n\n## Scene\nShe climbed.\n"
    counter.count(first)
    encoded = []
    encode = counter.encoding.encode_ordinary
    counter.__dict__["encoding"] = type("Spy", (), {
        "encode_ordinary": lambda self, t: encoded.append(t) or encode(t)})()
    second = first.replace("scene 7.", "scene 70.")
    assert counter.count(second) == len(encode(second))
    assert encoded == [lines[7].replace("scene 7.", "scene 70.") + "\n"]


def test_a_model_s_own_tokenizer_counts_a_long_text_whole():
    asked = []

    class Whole:
        name = "whole"

        def encode_ordinary(self, text):
            asked.append(text)
            return text.split()

        def decode_bytes(self, tokens):
            return " ".join(tokens).encode()

    text = "line one\nline two\n" * 40
    assert TokenCounter("local", tokenizer=Whole()).count(text) == 160 and asked == [text]


def reference(monkeypatch, name: str) -> tiktoken.Encoding:
    """tiktoken's own encoding of `name` (no download: see tiktokens_own)."""
    return tiktoken.Encoding(**tiktokens_own(monkeypatch, name))


def test_keys_differ_per_encoding_so_a_shared_store_stays_right(monkeypatch):
    store = DictStore()
    text = "Ünïcödé 灯台 " * 40
    cl = TokenCounter("gpt-4", store=store)
    o2 = TokenCounter("gpt-4o", store=store)
    assert cl.key(text) != o2.key(text)
    assert cl.count(text) == len(reference(monkeypatch, "cl100k_base").encode(text))
    assert o2.count(text) == len(reference(monkeypatch, "o200k_base").encode(text))
    assert cl.count(text) != o2.count(text) and len(store.counts) == 2


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
def test_count_messages_adds_the_chat_overhead(monkeypatch, model):
    messages = [
        {"role": "system", "content": "You are a careful novelist."},
        {"role": "user", "name": "editor", "content": SAMPLE},
        {"role": "assistant", "content": "Scene 3: the map."},
    ]
    counter = TokenCounter(model)
    encoding = reference(monkeypatch, counter.encoding_name)
    expected = 3  # the reply is primed with <|start|>assistant<|message|>
    for message in messages:
        expected += 3 + sum(len(encoding.encode(v, disallowed_special=())) for v in message.values())
        expected += 1 if "name" in message else 0
    assert counter.count_messages(messages) == expected
    assert counter.count_messages([]) == 3


def test_count_messages_counts_text_parts_and_skips_empty_content():
    counter = TokenCounter("gpt-4o")
    parts = [{"role": "user", "content": [{"type": "text", "text": "Hello there"},
                                          {"type": "image_url", "image_url": {"url": "x"}}]}]
    plain = [{"role": "user", "content": "Hello there"}]
    assert counter.count_messages(parts) == counter.count_messages(plain)
    assert counter.count_messages([{"role": "assistant", "content": None}]) == \
        3 + 3 + counter.count("assistant")


# ---------------------------------------------------------------- truncate_middle


@pytest.fixture(scope="module", params=ENCODINGS)
def counter(request):
    return TokenCounter("any", encoding=request.param)


def test_truncate_keeps_short_text_whole(counter):
    assert counter.truncate_middle(SAMPLE, 1000) is SAMPLE


def test_truncate_keeps_head_and_tail_of_prose(counter):
    text = " ".join(f"Sentence number {i} about the lighthouse." for i in range(300))
    out = counter.truncate_middle(text, 100)
    head, cut, tail = MARKER.split(out)
    assert head.startswith("Sentence number 0 about") and tail.endswith("number 299 about the lighthouse.")
    assert 95 <= counter.count(out) <= 100  # uses the budget, never more
    assert int(cut.replace(",", "")) >= counter.count(text) - 100


def test_truncate_with_a_custom_marker_and_a_tiny_budget(counter):
    text = "word " * 500
    out = counter.truncate_middle(text, 20, marker=" ... ")
    assert " ... " in out and counter.count(out) <= 20
    tiny = counter.truncate_middle(SAMPLE, 3)  # the marker alone does not fit: head only
    assert SAMPLE.startswith(tiny) and 0 < counter.count(tiny) <= 3


# Texts where head + marker + tail re-encode to more tokens than their parts
# (found by fuzzing cl100k_base): the result must be re-counted, not assumed.
JOINS_GROW = [
    (20, "!2!b63 \r\n \r\n»c\té\r\na]\n..«s3?«!\r\n6s»'84ü\n !c»!\r\n8\n?]!4 !7 ]a4ücc7]—\n«\r\n]?.?]"
         "\t🌊8!]]é\t\n6’. 68''!.é]"),
    (45, "a\n2 🌊5—ca灯 ]3台7 ?2s \r\n \r\n1\r\n3!8s8’1üs  \n\nc’  台a!灯.灯\t]—\r\n]8\n—4.’dsa . a ca7🌊]"
         ".\n?»!üs—]灯\t8"),
]


@pytest.mark.parametrize("max_tokens, text", JOINS_GROW, ids=["20", "45"])
def test_truncate_recounts_the_joined_text(max_tokens, text):
    counter = TokenCounter("gpt-4")
    out = counter.truncate_middle(text, max_tokens)
    assert MARKER.search(out) and counter.count(out) <= max_tokens


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=600), max_tokens=st.integers(min_value=-1, max_value=150))
def test_truncate_never_exceeds_the_budget(counter, text, max_tokens):
    out = counter.truncate_middle(text, max_tokens)
    assert len(counter.encoding.encode_ordinary(out)) <= max(max_tokens, 0)
    if len(counter.encoding.encode_ordinary(text)) <= max_tokens:
        assert out == text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(min_size=40, max_size=1500), max_tokens=st.integers(min_value=40, max_value=200))
def test_truncate_keeps_a_true_head_and_tail(counter, text, max_tokens):
    total = len(counter.encoding.encode_ordinary(text))
    assume(total > max_tokens)
    out = counter.truncate_middle(text, max_tokens)
    found = list(MARKER.finditer(out))
    assume(len(found) == 1)  # the text itself might contain a marker
    head, tail = out[:found[0].start()], out[found[0].end():]
    assert head and tail
    assert text.startswith(head) and text.endswith(tail)
    assert int(found[0].group(1).replace(",", "")) >= total - max_tokens
