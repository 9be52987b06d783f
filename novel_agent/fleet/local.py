"""The embedded local model serving a fleet: one llama.cpp server, one slot per request.

`novel run` starts a llama.cpp server per book (a slot per stage, each stage's prompt
cache kept from tick to tick). A fleet's local books share one server instead, started
on first use with `slots` parallel slots (the fleet's concurrency), each with the
context one book would have. llama.cpp decodes the
slots' requests in one batch. The books reach it through the fleet's client (the
gate, not streamed) and count their tokens with its tokenizer; `close()` stops it.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novel_agent.models import local_choice
from novel_agent.models.base import Completion, Request
from novel_agent.models.llama_tokens import LlamaTokenizer
from novel_agent.models.local import LOCAL_PROSE_OPTIONS, LocalServer

if TYPE_CHECKING:
    from novel_agent.models.openai_compat import OpenAICompatModel


class SlotModel:
    """A book's model on the shared server (no close(): the server outlives the book)."""

    def __init__(self, inner: OpenAICompatModel, name: str, tokenizer: LlamaTokenizer,
                 where: str):
        self.inner, self.name, self.tokenizer, self.where = inner, name, tokenizer, where

    def describe(self) -> str:
        return f"local model {self.name} (llama.cpp, {self.where}, shared by the fleet)"

    def complete(self, request: Request) -> Completion:
        completion = self.inner.complete(request)
        return dataclasses.replace(completion, model=self.name)   # llama.cpp says its path


class SharedLocal:
    """One llama.cpp server per GGUF for every local book of a fleet."""

    def __init__(self, slots: int):
        self.slots = slots
        self._servers: dict[Path, LocalServer] = {}
        self._lock = threading.Lock()

    def model(self, config: Any, clients: Any) -> SlotModel:
        """A book's model (its server started on first use; a ModelError if it cannot)."""
        choice, llm = local_choice(config), config.llm
        with self._lock:
            server = self._servers.get(choice.path)
            if server is None:
                server = self._servers[choice.path] = LocalServer(
                    choice.path, choice.n_ctx, choice.threads, slots=self.slots)
        client = clients.for_server(server.base_url, None, llm.timeout)
        from novel_agent.models.openai_compat import OpenAICompatModel  # the SDK: 0.5 s
        inner = OpenAICompatModel(server.base_url, choice.name, None, llm.timeout,
                                  llm.max_retries, llm.temperature, label="local",
                                  seed=llm.seed, prose_options=LOCAL_PROSE_OPTIONS,
                                  extra_body={"cache_prompt": True}, client=client)
        tokenizer = LlamaTokenizer(choice.tokenizer or f"llama.cpp {choice.name}",
                                   lambda: server.address)
        return SlotModel(inner, choice.name, tokenizer, server.host_port)

    def close(self) -> None:
        """Stop every server."""
        with self._lock:
            for server in self._servers.values():
                server.close()
            self._servers.clear()
