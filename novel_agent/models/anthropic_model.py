"""The client path for Anthropic's models: the `anthropic` SDK against the Messages API.

A provider of the one call loop (models/served.py, which owns retries, timing,
progress, usage and the error line): it builds the Messages API call, reads the answer
(streamed events, or the message whole) as chunks, and says what the SDK's exceptions
are (a 401 names the variable the key came from).

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
from collections.abc import Callable, Iterator
from typing import Any

import anthropic

try:                            # the SDK's HTTP library: httpx, or httpx2 in newer releases
    import httpx2 as _http
except ImportError:             # pragma: no cover - depends on the installed SDK
    import httpx as _http  # type: ignore[no-redef]

from novel_agent.models.base import NO_KEY, OnProgress, Request, Usage
from novel_agent.models.retry import SDK_RETRIES, retry_after, retryable_status
from novel_agent.models.served import Chunk, Failure, ServedModel

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"     # models/providers.py's ANTHROPIC_KEY_ENV
EPHEMERAL = {"type": "ephemeral"}
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


class AnthropicModel(ServedModel):
    """A ChatModel talking to Anthropic's Messages API through the `anthropic` SDK.

    `api_key` comes from the caller (never from the environment here); `key_env` is
    the variable's name, for a 401's message. With `stream` (the default of the
    provider), `on_progress` hears of every piece and `timeout` is the longest silence
    allowed. `client` replaces the SDK client (anything with `messages.create`).
    `sleep` and `clock` are injectable for tests.
    """

    label = "anthropic"

    def __init__(self, model: str, api_key: str | None, *, base_url: str = DEFAULT_BASE_URL,
                 key_env: str = DEFAULT_KEY_ENV, timeout: float = 120.0, max_retries: int = 3,
                 stream: bool = True,
                 on_progress: OnProgress | None = None, client: Any = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__(model, api_key or NO_KEY, timeout=timeout, max_retries=max_retries,
                         stream=stream, on_progress=on_progress, sleep=sleep, clock=clock)
        self.model, self.base_url, self.key_env = model, base_url, key_env
        self._client = client or anthropic.Anthropic(api_key=self._key, base_url=base_url,
                                                     timeout=timeout, max_retries=SDK_RETRIES)

    def describe(self) -> str:
        """One line naming the model and where it is served."""
        return f"anthropic model {self.model} at {self.base_url}"

    def response_format(self, request: Request) -> str:
        return "tool_use" if request.json_schema is not None else ""

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

    def execute(self, request: Request) -> Iterator[Chunk]:
        kwargs = self.arguments(request)
        if not self.stream:
            response = self._client.messages.create(**kwargs)
            yield Chunk(text=_answer(response.content, request.json_schema is not None),
                        usage=_usage(response.usage), finish=_finish(response.stop_reason),
                        model=response.model or "")
            return
        try:
            with self._client.messages.create(**kwargs) as stream:
                yield from _chunks(stream)
        except _http.TimeoutException:
            raise anthropic.APITimeoutError(request=_http.Request("POST", self.base_url)) from None
        except _http.TransportError:
            raise anthropic.APIConnectionError(
                request=_http.Request("POST", self.base_url)) from None

    def classify(self, exc: BaseException) -> Failure | None:
        """The SDK's exceptions: a status (its detail, Retry-After, and for a refused key
        where it came from), a timeout, a lost connection; any other is final."""
        if isinstance(exc, anthropic.APIStatusError):
            hint = "" if exc.status_code not in (401, 403) else (
                f" (the key in ${self.key_env} was refused: check it, or set "
                "llm.api_key_env to the variable that holds yours)" if self.key_env else
                " (no key was sent to this server of the stage's own: set its api_key_env "
                "to the variable that holds one)")
            return Failure(retryable_status(exc.status_code), exc.status_code,
                           retry_after(exc.response.headers), detail=_status_detail(exc),
                           hint=hint)
        if isinstance(exc, anthropic.APIConnectionError):     # APITimeoutError included
            return Failure(True, timed_out=isinstance(exc, anthropic.APITimeoutError),
                           detail=f"{exc} ({self.base_url})")
        if isinstance(exc, anthropic.AnthropicError):
            return Failure(detail=f"{exc} ({self.base_url})")
        return None


def _chunks(stream: Any) -> Iterator[Chunk]:
    """A streamed message's events as chunks: the usage of message_start (the prompt's
    tokens, read and written to the cache), each text or tool-input piece, the stop
    reason and the output's count of message_delta."""
    usage = Usage()
    for event in stream:
        kind, text, finish, model = event.type, "", "", ""
        if kind == "message_start":
            model, usage = event.message.model or "", _usage(event.message.usage)
        elif kind == "content_block_delta":
            text = getattr(event.delta, "text", None) or getattr(
                event.delta, "partial_json", None) or ""
        elif kind == "message_delta":
            finish = _finish(event.delta.stop_reason)
            usage = _usage(event.usage, usage)
        yield Chunk(text=text, usage=usage, finish=finish, model=model,
                    prompt=(usage.prompt_tokens, usage.prompt_tokens, usage.cached_tokens))


def _finish(stop: str | None) -> str:
    """A stop reason as the pipeline reads finish reasons."""
    return FINISH.get(stop or "", stop or "")


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
            return str(error["message"])
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
