"""The client path for Anthropic's models: the `anthropic` SDK against the Messages API.

Owns what happens at that edge, as openai_compat.py does for the OpenAI-compatible
servers: retries with backoff (429, 5xx, 529 overloaded, timeouts, connection errors),
streaming with a progress callback (the SDK's read timeout then bounds the silence
between pieces, not the whole answer), usage and latency, and SDK exceptions turned
into one-line ModelErrors that never carry the API key (a 401 names the variable the
key came from instead).

What is Anthropic's own:
- A JSON answer is asked for through tool use: one tool whose input schema is the
  request's JSON schema, forced by tool_choice; the tool's input is the answer.
- The prompt cache is explicit: `cache_control` breakpoints end the system prompt
  (the tool's schema before it is cached with it), the stable prefix of the first
  user message (`Request.stable_prefix`: the sections that change at a checkpoint,
  not at a tick), a text block of its own, and its growing prefix
  (`Request.growing_prefix`: the recent scenes, to which a tick appends one), a block
  a paragraph so that the next tick's request finds this one's breakpoint among its
  block boundaries. The usage then says what was read from the cache (billed at 0.1
  times the input price) and what was written to it (1.25 times): both go to the
  ledger (`Usage.cached_tokens`, `Usage.cache_write_tokens`), and `prompt_tokens`
  counts all the prompt's tokens.
- The messages are laid out as the API takes them: the system apart, empty messages
  left out, consecutive ones of a role joined. No temperature is sent: the SDK's
  Messages API takes no sampling parameters (llm.temperature is the other providers').
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import anthropic

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

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"     # models/providers.py's ANTHROPIC_KEY_ENV
EPHEMERAL = {"type": "ephemeral"}
RETRY_STATUSES = frozenset({408, 409, 429})
# Anthropic's stop reasons, as the pipeline reads finish reasons
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "stop",
          "max_tokens": "length"}


def tool_name(name: str) -> str:
    """A schema's name as the API takes a tool's name (letters, digits, _ and -)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "answer"


def system_and_messages(request: Request) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The request's messages as the Messages API takes them: the system blocks apart
    (a breakpoint at their end), the first user message split where its stable and
    growing prefixes end (a breakpoint at each), empty messages left out, a role's
    consecutive messages joined into one of several blocks."""
    system = "\n\n".join(m["content"] for m in request.messages
                         if m["role"] == "system" and m["content"].strip())
    blocks = [{"type": "text", "text": system, "cache_control": EPHEMERAL}] if system else []
    messages: list[dict[str, Any]] = []
    first_user = True
    for message in request.messages:
        role, text = message["role"], message["content"]
        if role == "system" or not text.strip():
            continue
        content = [{"type": "text", "text": text}]
        if role == "user" and first_user:
            content = _split(text, request.stable_prefix, request.growing_prefix)
            first_user = False
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(content)
        else:
            messages.append({"role": role, "content": content})
    return blocks, messages


def _split(text: str, stable: int, growing: int) -> list[dict[str, Any]]:
    """The first user message in text blocks: its stable prefix (a breakpoint at its
    end); what grows by appending, a block a paragraph (a breakpoint at its end: the
    next tick's request finds this one's among its block boundaries, and reads all
    but the paragraphs appended since from the cache); the rest."""
    stable = stable if 0 < stable <= len(text) and text[:stable].strip() else 0
    growing = growing if stable < growing <= len(text) and text[stable:growing].strip() else stable
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": text[:stable], "cache_control": EPHEMERAL}] if stable else [])
    blocks += [{"type": "text", "text": part} for part in _paragraphs(text[stable:growing])]
    if growing > stable:
        blocks[-1]["cache_control"] = EPHEMERAL
    rest = text[growing:]
    if rest.strip() or not blocks:
        blocks.append({"type": "text", "text": rest})
    elif rest:
        blocks[-1]["text"] += rest      # a block of blanks alone is refused
    return blocks


def _paragraphs(text: str) -> list[str]:
    """`text` cut after each blank line (the parts joined are `text`); a part of only
    blanks goes with the one before it (the first, with the one after it)."""
    parts: list[str] = []
    start = 0
    for found in re.finditer(r"\n\n(?=[^\n])", text):
        parts.append(text[start:found.end()])
        start = found.end()
    parts.append(text[start:])
    joined: list[str] = []
    blanks = ""
    for part in parts:
        if part.strip():
            joined.append(blanks + part)
            blanks = ""
        elif joined:
            joined[-1] += part
        else:
            blanks += part
    return joined or ([blanks] if blanks else [])


class AnthropicModel:
    """A ChatModel talking to Anthropic's Messages API through the `anthropic` SDK.

    `api_key` comes from the caller (never from the environment here); `key_env` is
    the variable's name, for a 401's message. With `stream` (the default of the
    provider), `on_progress` hears of every piece and `timeout` is the longest silence
    allowed. `client` replaces the SDK client (anything with `messages.create`).
    `sleep` and `clock` are injectable for tests.
    """

    def __init__(self, model: str, api_key: str | None, *, base_url: str = DEFAULT_BASE_URL,
                 key_env: str = DEFAULT_KEY_ENV, timeout: float = 120.0, max_retries: int = 3,
                 stream: bool = True,
                 on_progress: OnProgress | None = None, client: Any = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        self.model, self.base_url, self.key_env = model, base_url, key_env
        self.timeout, self.max_retries = timeout, max_retries
        self.stream, self.on_progress = stream, on_progress
        self._key = api_key or NO_KEY
        self._sleep, self._clock = sleep, clock
        self._client = client or anthropic.Anthropic(api_key=self._key, base_url=base_url,
                                                     timeout=timeout, max_retries=0)
        self._requests = 0           # requests made for the call in progress

    def describe(self) -> str:
        """One line naming the model and where it is served."""
        return f"anthropic model {self.model} at {self.base_url}"

    def complete(self, request: Request) -> Completion:
        """Answer one request; the completion (or the ModelError) says how many requests
        it took."""
        self._requests = 0
        return attempted(lambda: self._call(request), lambda: self._requests)

    def _call(self, request: Request) -> Completion:
        """One logical call with retries."""
        attempt = 0
        while True:
            started = self._clock()
            try:
                return self._once(request, started)
            except anthropic.APIStatusError as exc:
                if not self._retryable(exc) or attempt >= self.max_retries:
                    raise self._error(request, exc, attempt) from None
                delay = self._backoff(attempt, exc)
            except anthropic.APIConnectionError as exc:   # APITimeoutError included
                if attempt >= self.max_retries:
                    raise self._error(request, exc, attempt) from None
                delay = self._backoff(attempt, None)
            except anthropic.AnthropicError as exc:   # a malformed answer
                raise self._error(request, exc, attempt) from None
            attempt += 1
            self._sleep(delay)

    def _once(self, request: Request, started: float) -> Completion:
        kwargs = self.arguments(request)
        self._requests += 1
        if self.stream:
            text, usage, stop, model = self._streamed(request, kwargs, started)
        else:
            response = self._client.messages.create(**kwargs)
            text = _answer(response.content, request.json_schema is not None)
            usage, stop, model = _usage(response.usage), response.stop_reason or "", response.model
        if not text.strip():
            raise ModelResponseError(
                f"{request.stage}: anthropic model {self.model} returned an empty answer "
                f"(stop_reason={stop or 'none'})", stage=request.stage, raw=text, usage=usage)
        return Completion(text=text, usage=usage, finish_reason=FINISH.get(stop, stop or "stop"),
                          model=model or self.model, latency=self._clock() - started,
                          response_format="tool_use" if request.json_schema is not None else "")

    def arguments(self, request: Request) -> dict[str, Any]:
        """The Messages API call a request is sent as."""
        system, messages = system_and_messages(request)
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": request.max_tokens,
                                  "messages": messages}
        if system:
            kwargs["system"] = system
        if request.json_schema is not None:
            name = tool_name(request.schema_name)
            kwargs["tools"] = [{"name": name, "input_schema": request.json_schema,
                                "description": "Give the answer: its input is the JSON object "
                                               "the instructions ask for."}]
            kwargs["tool_choice"] = {"type": "tool", "name": name}
        stops = [s for s in request.stop if s.strip()]
        if stops:
            kwargs["stop_sequences"] = stops
        if self.stream:
            kwargs["stream"] = True
        return kwargs

    def _streamed(self, request: Request, kwargs: dict[str, Any],
                  started: float) -> tuple[str, Usage, str, str]:
        """Run a streaming call; assemble its text (a tool's input JSON), usage, stop
        reason and model, telling `on_progress` of each piece. A read that times out or
        a connection lost mid-stream is the SDK's APITimeoutError or APIConnectionError,
        as before the first piece."""
        try:
            with self._client.messages.create(**kwargs) as stream:
                return self._assemble(request, stream, started)
        except _http.TimeoutException:
            raise anthropic.APITimeoutError(request=_http.Request("POST", self.base_url)) from None
        except _http.TransportError:
            raise anthropic.APIConnectionError(
                request=_http.Request("POST", self.base_url)) from None

    def _assemble(self, request: Request, stream: Any, started: float
                  ) -> tuple[str, Usage, str, str]:
        parts: list[str] = []
        usage, stop, model = Usage(), "", ""
        tokens, first = 0, 0.0
        for event in stream:
            kind = event.type
            if kind == "message_start":
                model, usage = event.message.model or model, _usage(event.message.usage)
            elif kind == "content_block_delta":
                piece = getattr(event.delta, "text", None) or getattr(
                    event.delta, "partial_json", None)
                if piece:
                    parts.append(piece)
                    tokens += 1
                    first = first or self._clock()
            elif kind == "message_delta":
                stop = event.delta.stop_reason or stop
                usage = _usage(event.usage, usage)
            if self.on_progress is not None:
                now = self._clock()
                self.on_progress(Progress(
                    stage=request.stage, seconds=now - started, tokens=tokens,
                    generating=now - first if first else 0.0, prompt_done=usage.prompt_tokens,
                    prompt_total=usage.prompt_tokens, cached=usage.cached_tokens))
            if request.max_words and request.json_schema is None and not stop \
                    and len("".join(parts).split()) > request.max_words:
                # Leaving the stream closes it: the server stops generating. The pieces
                # read are the tokens written; the prompt is what message_start said.
                return "".join(parts), replace(usage, completion_tokens=tokens), WORDS, model
        return "".join(parts), usage, stop, model

    @staticmethod
    def _retryable(exc: anthropic.APIStatusError) -> bool:
        return exc.status_code in RETRY_STATUSES or exc.status_code >= 500

    @staticmethod
    def _backoff(attempt: int, exc: anthropic.APIStatusError | None) -> float:
        """Exponential backoff, or the server's Retry-After when it gives seconds."""
        return backoff(attempt, exc.response.headers.get("retry-after") if exc is not None
                       else None)

    def _error(self, request: Request, exc: anthropic.AnthropicError,
               retries: int = 0) -> ModelError:
        """A one-line ModelError for a failed call; the key is masked, the SDK error dropped."""
        where = f"{request.stage}: anthropic model {self.model}"
        tries = f" (after {retries + 1} attempts)" if retries else ""
        if isinstance(exc, anthropic.APITimeoutError):
            what = (f"sent nothing for {self.timeout:g}s (llm.timeout: the longest silence "
                    "allowed)" if self.stream else f"timed out after {self.timeout:g}s")
            return ModelError(f"{where} {what}{tries}", stage=request.stage)
        if isinstance(exc, anthropic.APIStatusError):
            message = one_line(_status_detail(exc), self._key)
            hint = "" if exc.status_code not in (401, 403) else (
                f" (the key in ${self.key_env} was refused: check it, or set "
                "llm.api_key_env to the variable that holds yours)" if self.key_env else
                " (no key was sent to this server of the stage's own: set its api_key_env "
                "to the variable that holds one)")
            return ModelError(f"{where} failed: HTTP {exc.status_code}: {message}{hint}{tries}",
                              stage=request.stage, status=exc.status_code)
        message = one_line(f"{exc} ({self.base_url})", self._key)
        return ModelError(f"{where} failed: {message}{tries}", stage=request.stage)


def _answer(content: Any, wants_json: bool) -> str:
    """A message's answer: its forced tool's input as JSON, else its text."""
    for block in content or []:
        if wants_json and getattr(block, "type", "") == "tool_use":
            return json.dumps(block.input, ensure_ascii=False)
    return "".join(getattr(block, "text", "") or "" for block in content or []
                   if getattr(block, "type", "") == "text")


def _status_detail(exc: anthropic.APIStatusError) -> str:
    """The server's own message ({"type": "error", "error": {"message": ...}})."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
            return error["message"]
    if isinstance(body, str) and body.strip():
        return body
    return exc.message.removeprefix(f"Error code: {exc.status_code}").lstrip(" -") or "no detail"


def _usage(raw: Any, before: Usage | None = None) -> Usage:
    """Usage from the SDK's object, the prompt's tokens all counted (those read from the
    cache and those written to it too); what a message_delta leaves out is `before`'s."""
    before = before or Usage()
    if raw is None:
        return before

    def field(name: str, default: int) -> int:
        value = getattr(raw, name, None)
        return default if value is None else int(value)

    read = field("cache_read_input_tokens", before.cached_tokens)
    written = field("cache_creation_input_tokens", before.cache_write_tokens)
    plain = field("input_tokens", before.prompt_tokens - before.cached_tokens
                  - before.cache_write_tokens)
    return Usage(prompt_tokens=plain + read + written,
                 completion_tokens=field("output_tokens", before.completion_tokens),
                 cached_tokens=read, cache_write_tokens=written)
