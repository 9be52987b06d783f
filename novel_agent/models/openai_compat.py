"""The client path for every OpenAI-compatible endpoint: the `openai` SDK against OpenAI,
Ollama, llama.cpp server (the embedded local model too), vLLM, LM Studio, OpenRouter.

A provider of the one call loop (models/served.py, which owns retries, timing,
progress, usage and the error line): it builds the chat call's arguments, reads the
answer (streamed or whole) as chunks, and says what the SDK's exceptions are. What is
its own: the JSON response-format ladder (json_schema, then json_object, then plain
text, remembered once one works), `max_completion_tokens` for the newer OpenAI models
that refuse `max_tokens`, llama.cpp's options (a slot per stage, a grammar, prose
sampling) and its prompt progress, and a 200 whose body is not a chat completion.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import openai

try:                            # the SDK's HTTP library: httpx, or httpx2 in newer releases
    import httpx2 as _http
except ImportError:             # pragma: no cover - depends on the installed SDK
    import httpx as _http  # type: ignore[no-redef]

from novel_agent.errors import ModelResponseError
from novel_agent.models.base import NO_KEY, Completion, OnProgress, Request, Usage
from novel_agent.models.retry import SDK_RETRIES, retry_after, retryable_status
from novel_agent.models.served import Chunk, Failure, ServedModel

# How a JSON answer can be asked for, most to least precise.
FORMAT_LEVELS = ("json_schema", "json_object", "text")


class OpenAICompatModel(ServedModel):
    """A ChatModel talking to any OpenAI-compatible server through the `openai` SDK.

    `api_key` comes from the caller (never from the environment here); None means
    the server needs none. `extra_body` is sent with every request (llama.cpp's own
    options), `prose_options` with prose requests only. With `stream`, `on_progress`
    hears of every piece, and `timeout` is the longest silence allowed; with
    `retry_timeouts=False` a timeout is not retried (the same compute would time out
    again). `client` replaces the SDK client (anything with `chat.completions.create`:
    the fleet's, which shares one limit and one pause among many books). `sleep` and
    `clock` are injectable for tests.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout: float,
                 max_retries: int, temperature: float, label: str = "openai",
                 seed: int | None = None, *, stream: bool = False,
                 prose_options: dict[str, Any] | None = None,
                 extra_body: dict[str, Any] | None = None,
                 slots: dict[str, int] | None = None, grammars: bool = False,
                 stage_options: dict[str, dict[str, Any]] | None = None,
                 on_progress: OnProgress | None = None, retry_timeouts: bool = True,
                 client: Any = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__(model, api_key or NO_KEY, timeout=timeout, max_retries=max_retries,
                         stream=stream, on_progress=on_progress, sleep=sleep, clock=clock)
        self.base_url, self.model, self.label = base_url, model, label
        self.temperature, self.seed = temperature, seed
        # Extra sampling options sent (as extra_body) with prose requests only: JSON
        # under a grammar must not be penalised for repeating its quotes and braces.
        self.prose_options = dict(prose_options or {})
        self.extra_body = dict(extra_body or {})
        # llama.cpp: the slot each stage keeps (`id_slot`, so its prompt prefix stays cached
        # from tick to tick), and whether a request's GBNF grammar is sent.
        self.slots, self.grammars = dict(slots or {}), grammars
        self.stage_options = dict(stage_options or {})    # extra_body for one stage's prose
        self.retry_timeouts = retry_timeouts
        self._client = client or openai.OpenAI(base_url=base_url, api_key=self._key,
                                               timeout=timeout, max_retries=SDK_RETRIES)
        self._level = 0              # index into FORMAT_LEVELS: where JSON requests start
        self._level_known = False    # True once a JSON request succeeded at that level
        self._call_level = 0         # where the JSON call in progress is
        self._token_param = "max_tokens"

    @property
    def response_format_level(self) -> str:
        """The JSON response format this model starts with ("json_schema" until refused)."""
        return FORMAT_LEVELS[self._level]

    def describe(self) -> str:
        """One line naming the model and where it is served."""
        return f"{self.label} model {self.model} at {self.base_url}"

    def complete(self, request: Request) -> Completion:
        """Answer one request; a JSON one walks down the response-format ladder once, and
        the level that worked is where the next one starts."""
        self._call_level = self._level
        completion = super().complete(request)
        if request.json_schema is not None:
            self._level, self._level_known = self._call_level, True
        return completion

    def response_format(self, request: Request) -> str:
        return FORMAT_LEVELS[self._call_level] if request.json_schema is not None else ""

    def adapt(self, request: Request, exc: BaseException) -> bool:
        """A refused `max_tokens` (newer OpenAI models name max_completion_tokens instead),
        or a refused response format (the next level down)."""
        if not isinstance(exc, openai.APIStatusError):
            return False
        if (exc.status_code == 400 and self._token_param == "max_tokens"
                and "max_completion_tokens" in str(exc.message)):
            self._token_param = "max_completion_tokens"
            return True
        if (request.json_schema is not None and self._call_level + 1 < len(FORMAT_LEVELS)
                and self._format_refused(exc)):
            self._call_level += 1
            return True
        return False

    def _format_refused(self, exc: openai.APIStatusError) -> bool:
        """A 400/422 naming the response format, or any 400/422 (but a context overflow)
        before a JSON call has worked."""
        if exc.status_code not in (400, 422):
            return False
        text = f"{exc.message} {exc.body}".lower()
        named = any(word in text for word in ("response_format", "json_schema", "json_object"))
        too_long = "context" in text    # a prompt over the window fails at every level
        return named or not (self._level_known or too_long)

    def classify(self, exc: BaseException) -> Failure | None:
        """The SDK's exceptions: a status (its detail and Retry-After), a timeout, a lost
        connection; any other (an error event mid-stream, a malformed answer) is final."""
        if isinstance(exc, openai.APIStatusError):
            return Failure(retryable_status(exc.status_code), exc.status_code,
                           retry_after(exc.response.headers), detail=_status_detail(exc))
        if isinstance(exc, openai.APIConnectionError):     # APITimeoutError included
            return Failure(True, timed_out=isinstance(exc, openai.APITimeoutError),
                           detail=f"{exc} ({self.base_url})")
        if isinstance(exc, openai.OpenAIError):
            return Failure(detail=f"{exc} ({self.base_url})")
        return None

    def execute(self, request: Request) -> Iterator[Chunk]:
        kwargs = self._arguments(request, self.response_format(request))
        if not self.stream:
            response = self._create(request, kwargs)
            choice = response.choices[0] if response.choices else None
            yield Chunk(text=(choice.message.content if choice else None) or "",
                        finish=(choice.finish_reason if choice else None) or "",
                        usage=_usage(response.usage), model=response.model or "")
            return
        yield from self._streamed(kwargs)

    def _create(self, request: Request, kwargs: dict[str, Any]) -> Any:
        """One non-streamed call; an HTTP 200 whose body is not a chat completion (an HTML
        page, a proxy's text) is a ModelResponseError saying what came back."""
        try:
            response = self._client.chat.completions.create(**kwargs)
        except ValueError as exc:   # a JSON content type with a body that is not JSON
            body = str(exc)
        else:
            if hasattr(response, "choices"):
                return response
            body = " ".join(str(response).split())[:80]
        raise ModelResponseError(
            f"{request.stage}: {self.label} server {self.base_url} answered HTTP 200 with "
            f"something that is not a chat completion ({body!r}): is llm.base_url an "
            "OpenAI-compatible endpoint (usually ending in /v1)?", stage=request.stage,
            raw=body)

    def _arguments(self, request: Request, level: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            self._token_param: request.max_tokens,
            "temperature": self.temperature if request.temperature is None
            else request.temperature,
        }
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if level == "json_schema":
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "schema": request.json_schema, "strict": False}}
        elif level == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        extra = {**self.extra_body, **(self.prose_options if request.json_schema is None else {})}
        if request.json_schema is None:
            extra.update(self.stage_options.get(request.stage, {}))
        if request.stage in self.slots:
            extra["id_slot"] = self.slots[request.stage]
        if self.grammars and request.grammar and request.json_schema is None:
            extra["grammar"] = request.grammar
        if request.stop:
            kwargs["stop"] = list(request.stop[:4])     # OpenAI takes at most 4
        if extra:
            kwargs["extra_body"] = extra
        if self.stream:
            kwargs.update(stream=True, stream_options={"include_usage": True})
        return kwargs

    def _streamed(self, kwargs: dict[str, Any]) -> Iterator[Chunk]:
        """A streamed call's chunks (llama.cpp's prompt progress with them). A read that
        times out or a connection lost mid-stream is the SDK's APITimeoutError or
        APIConnectionError, as before the first piece; leaving early closes the stream."""
        try:
            with self._client.chat.completions.create(**kwargs) as stream:
                for chunk in stream:
                    progress = (chunk.model_extra or {}).get("prompt_progress")
                    yield Chunk(
                        text="".join(c.delta.content for c in chunk.choices
                                     if c.delta is not None and c.delta.content),
                        usage=_usage(chunk.usage) if chunk.usage is not None else None,
                        finish=next((c.finish_reason for c in chunk.choices if c.finish_reason),
                                    ""),
                        model=chunk.model or "",
                        prompt=(int(progress.get("processed", 0)), int(progress.get("total", 0)),
                                int(progress.get("cache", 0))) if progress else None)
        except _http.TimeoutException:
            raise openai.APITimeoutError(request=_http.Request("POST", self.base_url)) from None
        except _http.TransportError:
            raise openai.APIConnectionError(
                request=_http.Request("POST", self.base_url)) from None


def _status_detail(exc: openai.APIStatusError) -> str:
    """The server's own message, without the SDK's "Error code: N - " prefix."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str) and body["message"]:
        return str(body["message"])
    if isinstance(body, str) and body.strip():
        return body
    return exc.message.removeprefix(f"Error code: {exc.status_code}").lstrip(" -") or "no detail"


def _usage(raw: Any) -> Usage:
    """Usage from the SDK's object; missing fields count 0."""
    if raw is None:
        return Usage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return Usage(prompt_tokens=raw.prompt_tokens or 0,
                 completion_tokens=raw.completion_tokens or 0,
                 cached_tokens=cached or 0)
