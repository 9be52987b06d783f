"""The client path for any model Simon Willison's `llm` library knows (`llm.provider: llm`):
the model its plugin offers, called through llm's Python API.

Owns what happens at that edge, as openai_compat.py does for OpenAI-compatible servers:
- A request's messages as llm takes them: the system messages as `system=`, the last
  user message as `prompt=`, and the turns before it (a repair, a continuation, a
  revision) as llm's message chain (`messages=`); a model that holds no conversation
  (`supports_conversation` false) is given those turns written out in its prompt.
- A JSON answer through llm's schema support (`schema=`) when the model has it
  (`supports_schema`); a model without it is asked in words only, as every stage's
  prompt already says what JSON it wants. `max_tokens` (or a plugin's `max_output_tokens`,
  `num_predict`) and `temperature` are sent as options when the model's Options take
  them. Stop strings are not sent (plugins take them differently, if at all): the
  answer is cut at the first one it holds, read whole (its usage is then exact).
- Timeouts the same for every plugin: the answer is read on a worker thread and
  `timeout` is the longest silence allowed between two pieces of a streamed answer (the
  whole answer of a model that does not stream); a silent request is given up. It and a
  plugin's exception (one with a `status_code`, or one named for a timeout or a
  connection) are classified for the one call loop (models/served.py), which retries
  them as it retries every provider's. A plugin may retry on its own too (llm's OpenAI
  plugin does, twice, through the openai SDK).
- Usage from `response.usage()`: input and output, and the cached tokens where the
  plugin reports them (OpenAI's `cached_tokens`, Gemini's `cachedContentTokenCount`,
  Anthropic's `cache_read_input_tokens` and `cache_creation_input_tokens`, which its input
  count leaves out). A plugin that reports none is counted with `counter` (the model's
  tiktoken encoding), so the ledger and the cost ceiling never take its calls as free.
- Errors: what a plugin's exception says, for the loop's one-line ModelError.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import replace
from typing import Any

import llm

from novel_agent.models.base import Completion, OnProgress, Request, Usage
from novel_agent.models.retry import retry_after, retryable_status
from novel_agent.models.served import Chunk, Failure, ServedModel, headers_of, status_of
from novel_agent.text.tokens import TokenCounter

MAX_TOKEN_OPTIONS = ("max_tokens", "max_output_tokens", "num_predict")  # plugins' names for it
CACHED = ("cached_tokens", "cachedContentTokenCount")     # OpenAI's, Gemini's: in the input
LENGTH = frozenset({"length", "max_tokens", "max_output_tokens"})    # stopped by the limit


class _Silent(Exception):
    """No piece of the answer came within the timeout."""


class LlmModel(ServedModel):
    """A ChatModel answering through a model of the `llm` library.

    `model` is the llm model (llm_library.find); `key` the key found for it (None when it
    needs none: llm_library.key_for), handed to llm with each request and masked in every
    message. `skipped`: the lines of the llm plugins that failed to import, said once, as
    the first answer's notice. `sleep` and `clock` are injectable for tests.
    """

    label = "llm"
    cuts_stops = True        # plugins take stop strings differently, if at all

    def __init__(self, model: llm.Model, key: str | None, *, timeout: float = 120.0,
                 max_retries: int = 3, temperature: float | None = None, stream: bool = True,
                 on_progress: OnProgress | None = None, skipped: Sequence[str] = (),
                 counter: TokenCounter | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__(model.model_id, key, timeout=timeout, max_retries=max_retries,
                         stream=stream and bool(model.can_stream), on_progress=on_progress,
                         sleep=sleep, clock=clock)
        self.model, self.temperature, self.counter = model, temperature, counter
        self._untold = "; ".join(skipped)

    def describe(self) -> str:
        """One line naming the model and the plugin class that serves it."""
        return f"llm model {self.model.model_id} ({self.model})"

    def complete(self, request: Request) -> Completion:
        """Answer one request; the first answer carries the notice of the plugins skipped."""
        completion = super().complete(request)
        if self._untold:
            completion = replace(completion, notice=self._untold)
            self._untold = ""
        return completion

    def arguments(self, request: Request) -> dict[str, Any]:
        """The keyword arguments of `llm.Model.prompt` a request is sent as."""
        kwargs = messages_for(request, bool(self.model.supports_conversation))
        if request.json_schema is not None and self.model.supports_schema:
            kwargs["schema"] = request.json_schema
        kwargs.update(options_for(self.model, request.max_tokens, self.temperature
                                  if request.temperature is None else request.temperature))
        kwargs["stream"] = self.stream
        return kwargs

    def response_format(self, request: Request) -> str:
        if request.json_schema is None:
            return ""
        return "json_schema" if self.model.supports_schema else "text"

    def execute(self, request: Request) -> Iterator[Chunk]:
        """The answer's pieces, read on a worker thread (_Silent when none comes within
        the timeout), then its usage (counted with `counter` when the plugin reports
        none), finish reason and model."""
        response = self.model.prompt(**self.arguments(request), key=self._key)
        parts: list[str] = []
        with closing(_pieces(response, self.timeout)) as pieces:   # left early: told at once
            for piece in pieces:
                parts.append(piece)
                yield Chunk(text=piece)
        text = "".join(parts)
        yield Chunk(usage=usage_of(response.usage()) or self._counted(request, text),
                    finish=finish_of(response.response_json),
                    model=response.resolved_model or "")

    def classify(self, exc: BaseException) -> Failure | None:
        """Any plugin's exception: a key never set; a status (408, 409, 429, 529, 5xx
        retried; a refused key says where it is stored); without one, a timeout or a lost
        connection (retried) or anything else (final)."""
        if isinstance(exc, _Silent):
            return Failure(True, timed_out=True)
        if not isinstance(exc, Exception):
            return None
        name = self.model.needs_key
        if isinstance(exc, llm.NeedsKeyException):
            return Failure(said=f"needs a key: run `llm keys set {name}`")
        status = status_of(exc)
        if status is None:
            named = " ".join(cls.__name__ for cls in type(exc).__mro__)
            lost = isinstance(exc, (TimeoutError, ConnectionError)) or "Timeout" in named \
                or "Connect" in named
            return Failure(lost, detail=f"{type(exc).__name__}: {_detail(exc)}")
        hint = (f" (the key was refused: `llm keys set {name}` stores another)"
                if status in (401, 403) and name else "")
        return Failure(retryable_status(status), status, retry_after(headers_of(exc)),
                       detail=_detail(exc), hint=hint)

    def cut_usage(self, request: Request, usage: Usage, tokens: int,
                  prompt: tuple[int, int, int]) -> Usage:
        """An answer left unread past max_words: its prompt counted with the counter."""
        return Usage(self._counted(request, "").prompt_tokens, tokens)

    def _counted(self, request: Request, text: str) -> Usage:
        """The usage of a call whose plugin reported none: counted with the counter."""
        if self.counter is None:
            return Usage()
        return Usage(self.counter.count_messages(request.messages), self.counter.count(text))


def _pieces(response: llm.Response, timeout: float) -> Generator[str, None, None]:
    """The answer's pieces, read on a worker thread; _Silent when none comes within
    `timeout` (the thread is told to stop reading at its next piece, or ends with the
    plugin's own timeout: nothing waits for it). Leaving early tells it too."""
    pieces: queue.Queue[Any] = queue.Queue()
    given_up = threading.Event()

    def pump() -> None:
        try:
            for piece in response:
                if given_up.is_set():
                    return          # the answer left unread: its stream is closed
                pieces.put(piece)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            pieces.put(_Raised(exc))
        else:
            pieces.put(_Raised(None))

    threading.Thread(target=pump, name="llm-answer", daemon=True).start()
    try:
        while True:
            try:
                piece = pieces.get(timeout=timeout)
            except queue.Empty:
                raise _Silent() from None
            if isinstance(piece, _Raised):
                if piece.exc is not None:
                    raise piece.exc
                return
            yield piece
    finally:
        given_up.set()


class _Raised:
    """How the worker thread says the answer ended: with `exc`, or whole (None)."""

    def __init__(self, exc: BaseException | None):
        self.exc = exc


def messages_for(request: Request, conversation: bool) -> dict[str, Any]:
    """A request's messages as `llm.Model.prompt` takes them: `system` (the system
    messages joined), `prompt` (the last user message), and the turns before it as
    `messages` (llm's chain, the system first), or written out before the prompt for a
    model that holds no conversation. Empty messages are left out."""
    system = "\n\n".join(m["content"] for m in request.messages
                         if m["role"] == "system" and m["content"].strip())
    turns = [m for m in request.messages if m["role"] != "system" and m["content"].strip()]
    last = turns.pop()["content"] if turns and turns[-1]["role"] == "user" else None
    kwargs: dict[str, Any] = {"prompt": last, "system": system or None}
    if turns and conversation:
        chain = [llm.assistant(m["content"]) if m["role"] == "assistant" else llm.user(m["content"])
                 for m in turns]
        kwargs["messages"] = [llm.system(system), *chain] if system else chain
    elif turns:
        said = [f"{'You answered' if m['role'] == 'assistant' else 'I asked'}:\n{m['content']}"
                for m in turns]
        kwargs["prompt"] = "\n\n".join(["Earlier in this conversation:", *said,
                                        *(["Now:", last] if last else [])])
    return kwargs


def options_for(model: llm.Model, max_tokens: int, temperature: float | None) -> dict[str, Any]:
    """The answer's limit and the temperature, as the options the model's Options take
    (none it does not)."""
    fields: Mapping[str, Any] = getattr(model.Options, "model_fields", {})
    options: dict[str, Any] = {}
    limit = next((name for name in MAX_TOKEN_OPTIONS if name in fields), None)
    if limit:
        options[limit] = max_tokens
    if temperature is not None and "temperature" in fields:
        options["temperature"] = temperature
    return options


def usage_of(raw: llm.Usage) -> Usage | None:
    """Usage from llm's, the prompt's tokens all counted (those an Anthropic plugin reports
    apart included); None when the plugin reported none."""
    if raw.input is None and raw.output is None:
        return None
    details = raw.details or {}
    read_apart = _found(details, ("cache_read_input_tokens",))     # Anthropic's: not in it
    written = _found(details, ("cache_creation_input_tokens",))
    read = read_apart or _found(details, CACHED)
    return Usage(prompt_tokens=(raw.input or 0) + read_apart + written,
                 completion_tokens=raw.output or 0, cached_tokens=read,
                 cache_write_tokens=written)


def _found(details: Mapping[str, Any], names: Iterable[str]) -> int:
    """The first count named one of `names` in llm's usage details, at any depth (0)."""
    names = tuple(names)
    for key, value in details.items():
        if key in names and isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, Mapping) and (inner := _found(value, names)):
            return inner
    return 0


def finish_of(raw: Mapping[str, Any] | None) -> str:
    """The finish reason a plugin's raw response says, as the pipeline reads them ("length"
    when the answer's limit stopped it); "stop" when it says none."""
    raw = raw or {}
    reason = raw.get("finish_reason") or raw.get("stop_reason")
    for many, name in (("choices", "finish_reason"), ("candidates", "finishReason")):
        items = raw.get(many)
        if not reason and isinstance(items, list) and items and isinstance(items[0], Mapping):
            reason = items[0].get(name)
    said = str(reason or "stop").lower()
    return "length" if said in LENGTH else said


def _detail(exc: BaseException) -> str:
    """What a plugin's exception says: the server's own message when its body has one."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, Mapping) else None
        if isinstance(message, str) and message:
            return message
    return str(exc) or "no detail"
