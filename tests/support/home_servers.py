"""Fakes of the servers a writer runs at home, each a FakeOpenAIServer that behaves as the
real one where novel_agent's behaviour depends on it (from their documentation and source;
llama.cpp's server is also run for real, tests/models/test_home_servers.py):

- `Ollama`: models by name and tag (llama3.1:8b); a name it has not pulled is a 404
  (`model "x" not found, try pulling it first`); json_schema and json_object both taken
  (0.5 and later); no key asked for; it runs a model with `num_ctx` tokens and cuts a
  longer prompt silently (only its own log says so), reporting the tokens it kept; no
  /props.
- `LMStudio`: model ids as it lists them; json_schema taken, json_object refused with a
  400 whose error is a plain string; a prompt over the context the model was loaded with
  is a 400.
- `LlamaServer`: any model name (it serves the one it loaded, and answers with its file's
  path); json_schema and json_object both (compiled to a grammar); GET /props says the
  tokens each slot holds; a prompt over them is a 400 `exceed_context_size_error`.

A prompt is counted as novel_agent counts one for a model it has no tokenizer of: cl100k
tokens of each message, 3 more a message and 3 for the reply.
"""

from __future__ import annotations

import json
from typing import Any

from novel_agent.text.vocabulary import load_encoding
from tests.support.fake_openai import FakeOpenAIServer, Responder


def prompt_tokens(body: dict[str, Any]) -> int:
    """The request's prompt in cl100k tokens, with the chat template's cost per message."""
    encoding = load_encoding("cl100k_base")
    return 3 + sum(3 + len(encoding.encode_ordinary(str(m.get("content", ""))))
                   + len(encoding.encode_ordinary(str(m.get("role", ""))))
                   for m in body.get("messages", []))


def plain_error(status: int, message: str) -> dict[str, Any]:
    """An error answer whose body is {"error": "..."} (a string, not OpenAI's object)."""
    return {"status": status, "raw": ("application/json", json.dumps({"error": message}))}


class Ollama(FakeOpenAIServer):
    """Ollama's /v1 (port 11434): the models it has pulled, a `num_ctx` window."""

    thread_name = "fake-ollama"

    def __init__(self, responder: Responder | None = None, *,
                 models: tuple[str, ...] = ("llama3.1:8b",), num_ctx: int = 4096, **options):
        super().__init__(responder, model=models[0], **options)
        self.models, self.num_ctx = list(models), num_ctx
        self.truncated: list[int] = []    # the prompt sizes it cut to num_ctx, unsaid

    def listed(self) -> list[str]:
        return list(self.models)

    def chat_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        name = str(body.get("model", ""))
        if name not in self.models and f"{name}:latest" not in self.models:
            return {"status": 404, "error": f'model "{name}" not found, try pulling it first'}
        tokens = prompt_tokens(body)
        if tokens > self.num_ctx:
            self.truncated.append(tokens)
        answer = super().chat_answer(body)
        if "usage" in answer and tokens > self.num_ctx:
            answer["usage"]["prompt_tokens"] = self.num_ctx   # what it read: prompt_eval_count
            answer["usage"]["total_tokens"] = self.num_ctx + answer["usage"]["completion_tokens"]
        return answer


class LMStudio(FakeOpenAIServer):
    """LM Studio's server (port 1234): a model loaded with `context_length` tokens."""

    thread_name = "fake-lm-studio"

    def __init__(self, responder: Responder | None = None, *,
                 model: str = "qwen2.5-7b-instruct", context_length: int = 4096, **options):
        super().__init__(responder, model=model, **options)
        self.context_length = context_length

    def chat_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        kind = (body.get("response_format") or {}).get("type")
        if kind not in (None, "json_schema", "text"):
            return plain_error(400, "'response_format.type' must be 'json_schema' or 'text'")
        tokens = prompt_tokens(body)
        if tokens > self.context_length:
            return plain_error(400, f"Trying to keep the first {tokens} tokens when context the "
                               f"overflows. However, the model is loaded with context length "
                               f"of only {self.context_length} tokens, which is not enough. "
                               "Try to load the model with a larger context length, or "
                               "provide a shorter input")
        return super().chat_answer(body)


class LlamaServer(FakeOpenAIServer):
    """llama.cpp's llama-server (port 8080): one GGUF, `n_ctx` tokens a slot."""

    thread_name = "fake-llama-server"

    def __init__(self, responder: Responder | None = None, *,
                 path: str = "/models/qwen2.5-7b-instruct-q4_k_m.gguf", n_ctx: int = 4096,
                 **options):
        super().__init__(responder, model=path, **options)
        self.n_ctx = n_ctx

    def answering(self, body: dict[str, Any]) -> str:
        return self.model       # whatever the request named

    def get_answer(self, path: str) -> tuple[int, dict[str, Any]] | None:
        if path.rstrip("/") == "/props":
            return 200, {"default_generation_settings": {"n_ctx": self.n_ctx},
                         "total_slots": 1, "model_path": self.model}
        return None

    def chat_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        tokens = prompt_tokens(body)
        if tokens > self.n_ctx:
            message = (f"request ({tokens} tokens) exceeds the available context size "
                       f"({self.n_ctx} tokens), try increasing it")
            return {"status": 400, "raw": ("application/json", json.dumps({"error": {
                "code": 400, "message": message, "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens, "n_ctx": self.n_ctx}}))}
        return super().chat_answer(body)
