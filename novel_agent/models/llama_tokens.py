"""A local model's own tokenizer: llama.cpp's `/tokenize`, `/detokenize`, `/apply-template`.

The budget of a local GGUF model is counted in its own tokens, not in cl100k's: a
LlamaTokenizer asks the llama.cpp server that runs the model (or one it starts for
counting only, on first use) and looks like a tiktoken Encoding to TokenCounter
(`name`, `encode_ordinary`, `decode_bytes`), which caches the counts by content
hash under the tokenizer's name.

A chat request costs more than its contents: the chat template wraps each message
(`<|im_start|>user\\n ... <|im_end|>\\n` in ChatML) and primes the reply. The two
overheads are measured once from the model's own template (`message_overheads`),
so `TokenCounter.count_messages` equals the prompt_tokens llama.cpp reports.
"""

from __future__ import annotations

import functools
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from novel_agent.errors import ModelError

Address = Callable[[], str]       # the server's "http://127.0.0.1:PORT", started if need be
TIMEOUT = 60.0


class LlamaTokenizer:
    """Counts, encodes and decodes with the tokenizer of the GGUF a llama.cpp server runs."""

    def __init__(self, name: str, address: Address):
        self.name = name          # e.g. "llama.cpp Qwen2.5-Coder-1.5B-Instruct 675beb18200d0c48"
        self._address = address

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = self._address().rstrip("/") + path
        request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
                data: dict[str, Any] = json.load(answer)
                return data
        except (OSError, ValueError) as exc:     # URLError, HTTPError, a bad body
            raise ModelError(f"llama.cpp tokenizer at {url} failed: {exc}") from None

    def encode_ordinary(self, text: str) -> list[int]:
        """`text`'s tokens, special-token strings read as plain text, no BOS added."""
        if not text:
            return []
        return list(self._post("/tokenize", {"content": text, "add_special": False,
                                             "parse_special": False})["tokens"])

    def encode_special(self, text: str) -> list[int]:
        """`text`'s tokens with special-token strings ("<|im_start|>") read as such."""
        return list(self._post("/tokenize", {"content": text, "add_special": False,
                                             "parse_special": True})["tokens"])

    def decode_bytes(self, tokens: list[int]) -> bytes:
        """The text of `tokens`, as UTF-8 (a character cut at either end is dropped)."""
        if not tokens:
            return b""
        text = str(self._post("/detokenize", {"tokens": list(tokens)})["content"])
        return text.strip("\ufffd").encode("utf-8")

    def template(self, messages: list[dict[str, str]]) -> str:
        """The prompt text the model's chat template makes of `messages`, reply primed."""
        return str(self._post("/apply-template", {"messages": messages})["prompt"])

    def count_chat(self, messages: list[dict[str, str]]) -> int:
        """The exact prompt tokens of a chat request, through the template (uncached)."""
        return len(self.encode_special(self.template(messages)))

    @functools.cached_property
    def message_overheads(self) -> tuple[int, int]:
        """(tokens per message, tokens priming the reply) of the model's chat template."""
        return message_overheads(self.count_chat, lambda text: len(self.encode_ordinary(text)))

    @property
    def tokens_per_message(self) -> int:
        return self.message_overheads[0]

    @property
    def reply_priming(self) -> int:
        return self.message_overheads[1]


def message_overheads(count_chat: Callable[[list[dict[str, str]]], int],
                      count: Callable[[str], int]) -> tuple[int, int]:
    """Fit `count_chat(messages) = priming + sum(per_message + count(role) + count(content))`
    (TokenCounter.count_messages' shape) from two conversations, both with a system
    message: some templates add one when it is missing."""
    short = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello."}]
    long = short + [{"role": "assistant", "content": "Hi."},
                    {"role": "user", "content": "Go on."}]
    def contents(messages: list[dict[str, str]]) -> int:
        return sum(count(v) for m in messages for v in m.values())

    per_message = ((count_chat(long) - contents(long)) - (count_chat(short) - contents(short))) // 2
    priming = count_chat(short) - contents(short) - 2 * per_message
    return per_message, priming
