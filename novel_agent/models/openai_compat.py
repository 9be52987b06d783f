"""The one client path for every real model: the `openai` SDK against an OpenAI-compatible
endpoint (OpenAI, Ollama, llama.cpp server, vLLM, LM Studio, OpenRouter).

Owns what happens at that edge: retries with backoff (429, 5xx, timeouts, connection
errors), the JSON response-format ladder (json_schema, then json_object, then plain
text, remembered once one works), streaming (with a progress callback; the SDK's
per-read timeout then bounds the silence between pieces, not the whole answer),
usage and latency, and turning SDK exceptions into one-line ModelErrors that never
carry the API key.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import openai

try:                            # the SDK's HTTP library: httpx, or httpx2 in newer releases
    import httpx2 as _http  # type: ignore[import-not-found]
except ImportError:             # pragma: no cover - depends on the installed SDK
    import httpx as _http  # type: ignore[no-redef]

from novel_agent.errors import ModelError, ModelResponseError
from novel_agent.models.base import (
    NO_KEY,
    WORDS,
    Completion,
    OnProgress,
    Progress,
    Request,
    Usage,
    attempted,
    backoff,
    one_line,
)

# How a JSON answer can be asked for, most to least precise.
FORMAT_LEVELS = ("json_schema", "json_object", "text")
RETRY_STATUSES = frozenset({408, 429})


class OpenAICompatModel:
    """A ChatModel talking to any OpenAI-compatible server through the `openai` SDK.

    `api_key` comes from the caller (never from the environment here); None means
    the server needs none. `extra_body` is sent with every request (llama.cpp's own
    options), `prose_options` with prose requests only. With `stream`, `on_progress`
    hears of every piece, and `timeout` is the longest silence allowed; with
    `retry_timeouts=False` a timeout is not retried (the same compute would time out
    again). `client` replaces the SDK client (anything with `chat.completions.create`:
    the fleet's, which shares one limit and one backoff among many books). `sleep` and
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
        self.base_url, self.model, self.label = base_url, model, label
        self.timeout, self.max_retries = timeout, max_retries
        self.temperature, self.seed, self.stream = temperature, seed, stream
        # Extra sampling options sent (as extra_body) with prose requests only: JSON
        # under a grammar must not be penalised for repeating its quotes and braces.
        self.prose_options = dict(prose_options or {})
        self.extra_body = dict(extra_body or {})
        # llama.cpp: the slot each stage keeps (`id_slot`, so its prompt prefix stays cached
        # from tick to tick), and whether a request's GBNF grammar is sent.
        self.slots, self.grammars = dict(slots or {}), grammars
        self.stage_options = dict(stage_options or {})    # extra_body for one stage's prose
        self.on_progress, self.retry_timeouts = on_progress, retry_timeouts
        self._key = api_key or NO_KEY
        self._sleep, self._clock = sleep, clock
        self._client = client or openai.OpenAI(base_url=base_url, api_key=self._key,
                                               timeout=timeout, max_retries=0)
        self._level = 0              # index into FORMAT_LEVELS: where JSON requests start
        self._level_known = False    # True once a JSON request succeeded at that level
        self._token_param = "max_tokens"
        self._requests = 0           # requests made for the call in progress

    @property
    def response_format_level(self) -> str:
        """The JSON response format this model starts with ("json_schema" until refused)."""
        return FORMAT_LEVELS[self._level]

    def describe(self) -> str:
        """One line naming the model and where it is served."""
        return f"{self.label} model {self.model} at {self.base_url}"

    def complete(self, request: Request) -> Completion:
        """Answer one request; the completion (or the ModelError) says how many requests
        it took."""
        self._requests = 0
        return attempted(lambda: self._complete(request), lambda: self._requests)

    def _complete(self, request: Request) -> Completion:
        """JSON requests walk down the response-format ladder once."""
        if request.json_schema is None:
            return self._call(request, "")
        level = self._level
        while True:
            try:
                completion = self._call(request, FORMAT_LEVELS[level])
            except openai.APIStatusError as exc:
                if level + 1 < len(FORMAT_LEVELS) and self._format_refused(exc):
                    level += 1
                    continue
                raise self._error(request, exc) from None
            self._level, self._level_known = level, True
            return completion

    def _format_refused(self, exc: openai.APIStatusError) -> bool:
        """A 400/422 naming the response format, or any 400/422 (but a context overflow)
        before a JSON call has worked."""
        if exc.status_code not in (400, 422):
            return False
        text = f"{exc.message} {exc.body}".lower()
        named = any(word in text for word in ("response_format", "json_schema", "json_object"))
        too_long = "context" in text    # a prompt over the window fails at every level
        return named or not (self._level_known or too_long)

    def _call(self, request: Request, level: str) -> Completion:
        """One logical call with retries; status errors of a JSON call are left to complete()."""
        attempt = 0
        while True:
            started = self._clock()
            try:
                return self._once(request, level, started)
            except openai.APIStatusError as exc:
                if self._switch_token_param(exc):
                    continue
                if self._retryable(exc) and attempt < self.max_retries:
                    delay = self._backoff(attempt, exc)
                elif level and exc.status_code in (400, 422):
                    raise   # complete() decides: a refused format, or a real error
                else:
                    raise self._error(request, exc, attempt) from None
            except openai.APIConnectionError as exc:   # APITimeoutError included
                timed_out = isinstance(exc, openai.APITimeoutError)
                if attempt >= self.max_retries or (timed_out and not self.retry_timeouts):
                    raise self._error(request, exc, attempt) from None
                delay = self._backoff(attempt, None)
            except openai.OpenAIError as exc:   # an error event mid-stream, a malformed answer
                raise self._error(request, exc, attempt) from None
            attempt += 1
            self._sleep(delay)

    def _once(self, request: Request, level: str, started: float) -> Completion:
        kwargs = self._arguments(request, level)
        self._requests += 1
        if self.stream:
            text, usage, finish, model = self._streamed(request, kwargs, started)
        else:
            response = self._create(request, kwargs)
            choice = response.choices[0] if response.choices else None
            text = (choice.message.content if choice else None) or ""
            finish = (choice.finish_reason if choice else None) or ""
            usage, model = _usage(response.usage), response.model
        if not text.strip():
            raise ModelResponseError(
                f"{request.stage}: {self.label} model {self.model} returned an empty answer "
                f"(finish_reason={finish or 'none'})", stage=request.stage, raw=text,
                usage=usage)
        return Completion(text=text, usage=usage, finish_reason=finish or "stop",
                          model=model or self.model, latency=self._clock() - started,
                          response_format=level)

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

    def _streamed(self, request: Request, kwargs: dict[str, Any],
                  started: float) -> tuple[str, Usage, str, str]:
        """Run a streaming call; assemble its text, usage, finish reason and model, telling
        `on_progress` of each piece. A read that times out or a connection lost mid-stream
        is the SDK's APITimeoutError or APIConnectionError, as before the first piece."""
        try:
            with self._client.chat.completions.create(**kwargs) as stream:
                return self._assemble(request, stream, started)
        except _http.TimeoutException:
            raise openai.APITimeoutError(request=_http.Request("POST", self.base_url)) from None
        except _http.TransportError:
            raise openai.APIConnectionError(
                request=_http.Request("POST", self.base_url)) from None

    def _assemble(self, request: Request, stream: Any, started: float
                  ) -> tuple[str, Usage, str, str]:
        parts: list[str] = []
        usage, finish, model = Usage(), "", ""
        tokens, first = 0, 0.0
        prompt: dict[str, Any] = {}     # llama.cpp's prompt_progress: processed, total, cache
        for chunk in stream:
            model = chunk.model or model
            if chunk.usage is not None:
                usage = _usage(chunk.usage)
            prompt = (chunk.model_extra or {}).get("prompt_progress") or prompt
            for choice in chunk.choices:
                if choice.delta is not None and choice.delta.content:
                    parts.append(choice.delta.content)
                    tokens += 1
                    first = first or self._clock()
                finish = choice.finish_reason or finish
            if self.on_progress is not None:
                now = self._clock()
                self.on_progress(Progress(
                    stage=request.stage, seconds=now - started, tokens=tokens,
                    generating=now - first if first else 0.0,
                    prompt_done=int(prompt.get("processed", 0)),
                    prompt_total=int(prompt.get("total", 0)), cached=int(prompt.get("cache", 0))))
            if request.max_words and not finish:
                if len("".join(parts).split()) > request.max_words:
                    # Leaving the stream closes it: the server stops generating. Its usage
                    # never comes: the pieces read are the tokens written, and the prompt
                    # is what the server said it read.
                    usage = Usage(int(prompt.get("total", 0)), tokens, int(prompt.get("cache", 0)))
                    return "".join(parts), usage, WORDS, model
        return "".join(parts), usage, finish, model

    def _switch_token_param(self, exc: openai.APIStatusError) -> bool:
        """Newer OpenAI models refuse max_tokens and name max_completion_tokens instead."""
        if (exc.status_code == 400 and self._token_param == "max_tokens"
                and "max_completion_tokens" in str(exc.message)):
            self._token_param = "max_completion_tokens"
            return True
        return False

    @staticmethod
    def _retryable(exc: openai.APIStatusError) -> bool:
        return exc.status_code in RETRY_STATUSES or exc.status_code >= 500

    @staticmethod
    def _backoff(attempt: int, exc: openai.APIStatusError | None) -> float:
        """Exponential backoff, or the server's Retry-After when it gives seconds."""
        return backoff(attempt, exc.response.headers.get("retry-after") if exc is not None
                       else None)

    def _error(self, request: Request, exc: openai.OpenAIError, retries: int = 0) -> ModelError:
        """A one-line ModelError for a failed call; the key is masked, the SDK error dropped."""
        where = f"{request.stage}: {self.label} model {self.model}"
        tries = f" (after {retries + 1} attempts)" if retries else ""
        if isinstance(exc, openai.APITimeoutError):
            what = (f"sent nothing for {self.timeout:g}s (llm.timeout: the longest silence "
                    "allowed)" if self.stream else f"timed out after {self.timeout:g}s")
            return ModelError(f"{where} {what}{tries}", stage=request.stage)
        if isinstance(exc, openai.APIStatusError):
            message = one_line(_status_detail(exc), self._key)
            return ModelError(f"{where} failed: HTTP {exc.status_code}: {message}{tries}",
                              stage=request.stage, status=exc.status_code)
        message = one_line(f"{exc} ({self.base_url})", self._key)
        return ModelError(f"{where} failed: {message}{tries}", stage=request.stage)


def _status_detail(exc: openai.APIStatusError) -> str:
    """The server's own message, without the SDK's "Error code: N - " prefix."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str) and body["message"]:
        return body["message"]
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
