"""Token counting: the encoding per model, cached counts, middle-out truncation.

`TokenCounter` counts with one encoding (loaded offline by vocabulary.py on
first use), or with a model's own `Tokenizer` (a local GGUF's, through llama.cpp:
models/llama_tokens.py). Counts are cached by content hash and the tokenizer's
name, in memory and in an optional `CountStore` (the SQLite index implements it),
so a scene is counted once in its life by each tokenizer; a short text (an item's
line) is kept in memory by itself and encoded again by a new process; a long text new to
the counter (a prompt) is counted line by line, so only its new lines are encoded.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import tiktoken

# 4o, 4.1, 4.5, 5, gpt-oss (o200k ranks plus chat specials) and the o-series.
_O200K_MODELS = re.compile(r"^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o\d)")


def encoding_name_for_model(model: str, override: str = "") -> str:
    """The tiktoken encoding for `model`: `override` if set, else by model family.

    >>> encoding_name_for_model("openai/gpt-4o-mini")
    'o200k_base'
    """
    if override:
        return override
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = name.removeprefix("ft:")
    return "o200k_base" if _O200K_MODELS.match(name) else "cl100k_base"


# ---------------------------------------------------------------- counting


class Tokenizer(Protocol):
    """What TokenCounter needs of a tokenizer (a tiktoken Encoding is one). One may also
    say its chat template's `tokens_per_message` and `reply_priming`."""

    name: str

    def encode_ordinary(self, text: str) -> list[int]: ...

    def decode_bytes(self, tokens: list[int]) -> bytes: ...


class CountStore(Protocol):
    """A persistent cache of token counts, keyed by content hash."""

    def get(self, key: str) -> int | None: ...

    def put(self, key: str, n: int) -> None: ...


class DictStore:
    """The simplest CountStore: a dict in memory."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def get(self, key: str) -> int | None:
        """The stored count for `key`, or None."""
        return self.counts.get(key)

    def put(self, key: str, n: int) -> None:
        """Remember a count."""
        self.counts[key] = n


@dataclass
class CountStats:
    """How counts were answered: from memory, from the store, or by encoding."""

    hits: int = 0
    store_hits: int = 0
    misses: int = 0


# Per OpenAI's cookbook ("How to count tokens with tiktoken"), for current chat models.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3
DEFAULT_MARKER = "\n[… {n} tokens cut …]\n"
SHORT_TEXT = 400       # characters: a text this short is encoded, not looked up in the store
SHORT_KEPT = 100_000   # short texts whose counts a counter keeps (then it starts afresh)
# A longer text not counted before (a prompt: new each tick, most of it as it was) is
# counted line by line, each line's count kept like a short text's, so only the lines that
# changed are encoded. The sum is the whole text's count: these encodings' pre-tokenizers
# end a piece after a newline followed by anything but white space or "/", and no token
# crosses a piece (tests/text/test_tokens.py checks every character after the newline).
LINE_WISE = frozenset({"cl100k_base", "o200k_base"})
_LINE_START = re.compile(r"(?<=\n)(?=[^\s/])")


class TokenCounter:
    """Counts tokens for one model's encoding (or `tokenizer`), each distinct text encoded
    once."""

    def __init__(self, model: str, encoding: str = "", store: CountStore | None = None,
                 load: Callable[[str], tiktoken.Encoding] | None = None,
                 tokenizer: Tokenizer | None = None):
        from novel_agent.text.vocabulary import load_encoding, vocabulary
        self.model = model
        if tokenizer is not None:
            self.encoding_name = tokenizer.name
            self.__dict__["encoding"] = tokenizer
        else:
            self.encoding_name = vocabulary(encoding_name_for_model(model, encoding)).name
        self.store = store
        self._load = load or load_encoding
        self.stats = CountStats()
        self._memo: dict[str, int] = {}
        # A short text (a name, a card, a loop: the items of every prompt, many new each
        # tick) is kept by itself, no hash made, and encoded rather than looked up in the
        # store (faster, with tiktoken in-process); a tokenizer given (llama.cpp's, over
        # HTTP) is asked once per text whatever its size.
        self._short: dict[str, int] = {}
        self._short_below = SHORT_TEXT if tokenizer is None else 0
        self._line_wise = tokenizer is None and self.encoding_name in LINE_WISE

    @functools.cached_property
    def encoding(self) -> Tokenizer:
        """The tiktoken Encoding, loaded on first use (or the tokenizer given)."""
        return self._load(self.encoding_name)

    def key(self, text: str) -> str:
        """The cache key of `text`: sha1 of the encoding's (tokenizer's) name and the text."""
        return hashlib.sha1(f"{self.encoding_name}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()

    def count(self, text: str) -> int:
        """The number of tokens in `text` (special-token strings count as plain text)."""
        if len(text) < self._short_below:
            n = self._short.get(text)
            if n is not None:
                self.stats.hits += 1
                return n
            if len(self._short) >= SHORT_KEPT:
                self._short.clear()
            self.stats.misses += 1
            n = self._short[text] = len(self.encoding.encode_ordinary(text))
            return n
        key = self.key(text)
        n = self._memo.get(key)
        if n is not None:
            self.stats.hits += 1
            return n
        n = self.store.get(key) if self.store is not None else None
        if n is not None:
            self.stats.store_hits += 1
        else:
            self.stats.misses += 1
            n = self._lines(text) if self._line_wise else len(self.encoding.encode_ordinary(text))
            if self.store is not None:
                self.store.put(key, n)
        self._memo[key] = n
        return n

    def _lines(self, text: str) -> int:
        """The tokens of `text`, as the sum of its lines' (LINE_WISE), each kept."""
        total, kept, encode = 0, self._short, self.encoding.encode_ordinary
        for line in _LINE_START.split(text):
            n = kept.get(line)
            if n is None:
                if len(kept) >= SHORT_KEPT:
                    kept.clear()
                n = kept[line] = len(encode(line))
            total += n
        return total

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of a chat request: every string field of every message,
        3 per message, 1 more per `name`, 3 for priming the reply (or what the
        tokenizer says its chat template costs). List contents (multimodal parts)
        count their text parts."""
        total = getattr(self.encoding, "reply_priming", REPLY_PRIMING)
        per_message = getattr(self.encoding, "tokens_per_message", TOKENS_PER_MESSAGE)
        for message in messages:
            total += per_message
            for field, value in message.items():
                if isinstance(value, str):
                    total += self.count(value)
                elif field == "content" and isinstance(value, list):
                    total += sum(self.count(part.get("text") or "") for part in value
                                 if isinstance(part, dict))
                if field == "name":
                    total += TOKENS_PER_NAME
        return total

    def truncate_middle(self, text: str, max_tokens: int, marker: str = DEFAULT_MARKER) -> str:
        """Keep the head and tail of `text` around `marker` within `max_tokens`.

        `{n}` in the marker becomes the number of tokens cut. The result, marker
        included, never exceeds `max_tokens`; when even the marker does not fit,
        only the head is kept.
        """
        tokens = self.encoding.encode_ordinary(text)
        if len(tokens) <= max_tokens:
            return text
        keep = max_tokens - self._encoded_len(_render(marker, len(tokens)))
        while keep > 0:
            head = self._decode(tokens[:(keep + 1) // 2])
            tail = self._decode(tokens[len(tokens) - keep // 2:]) if keep // 2 else ""
            result = head + _render(marker, len(tokens) - keep) + tail
            excess = self._encoded_len(result) - max_tokens
            if excess <= 0:
                return result
            keep -= excess
        return self._head(tokens, max_tokens)

    def _head(self, tokens: list[int], max_tokens: int) -> str:
        """The longest decoded prefix of `tokens` that re-encodes within `max_tokens`."""
        keep = max_tokens
        while keep > 0:
            head = self._decode(tokens[:keep])
            excess = self._encoded_len(head) - max_tokens
            if excess <= 0:
                return head
            keep -= excess
        return ""

    def _encoded_len(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    def _decode(self, tokens: list[int]) -> str:
        # "ignore" drops the halves of characters split at the cut, so the
        # head stays a true prefix of the text and the tail a true suffix.
        return self.encoding.decode_bytes(tokens).decode("utf-8", "ignore")


def _render(marker: str, n: int) -> str:
    return marker.replace("{n}", f"{n:,}")
