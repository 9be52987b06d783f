"""The one call loop of every served model: the OpenAI-compatible servers (the embedded
llama.cpp server among them), Anthropic's Messages API and the models of the `llm` library.

A provider (a subclass of ServedModel) only translates, as an llm plugin's `execute()`
does: `execute(request)` sends one request and yields `Chunk`s as the answer comes (text
pieces, usage, the finish reason, the model's name, how far the server has read the
prompt); `classify(exc)` says what one of its exceptions is (a `Failure`: worth a retry?
an HTTP status, the wait the server asked for, a timeout, a line of detail); `adapt`
may change its own arguments after a refusal and send again at once (the OpenAI
response-format ladder).

Everything else is written here once, for all of them:
- attempts and retries: one `tenacity.Retrying` per call under models/retry.py's policy
  (the same statuses for every provider, `Retry-After` honoured in full, timeouts retried
  unless the provider says not: `retry_timeouts`). The SDKs' own retries are off
  (retry.SDK_RETRIES): a stream that fails mid-answer and an llm plugin are out of their
  reach, and two loops would multiply each other's tries;
- timing (a Completion's latency, from its request's start), the progress callback
  (after every chunk of a streamed answer that brings text or the prompt's progress),
  the usage assembled from the chunks, and `max_words` (a streamed answer left unread
  past them);
- `Completion.attempts` and `ModelError.attempts` (every request sent, retries and
  adaptations included);
- the one-line error: `<stage>: <label> model <name> failed: HTTP <status>: <detail>
  (after N attempts)`, or `... sent nothing for Ns` / `... timed out after Ns`, never
  the API key (base.one_line) and never the SDK's exception chained.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import tenacity

from novel_agent.errors import ModelError, ModelResponseError
from novel_agent.models.base import WORDS, Completion, OnProgress, Progress, Request, Usage, one_line
from novel_agent.models.retry import RETRY_AFTER_MAX, call_delay, waits_too_long


@dataclass(frozen=True)
class Chunk:
    """A piece of an answer as a provider reads it; every field optional. `usage` replaces
    the usage so far; `prompt` is (read, of, cached) tokens of the prompt the server has
    read (llama.cpp's prompt progress, Anthropic's input count)."""

    text: str = ""
    usage: Usage | None = None
    finish: str = ""
    model: str = ""
    prompt: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class Failure:
    """What a provider says of an exception of its call.

    `detail` is the server's or library's own words (made one line, the key masked,
    here); `hint` follows it (what to do about a refused key); `said` replaces the whole
    message after the model's name (a key never set). `retry_after`: the seconds the
    server asked to wait (None: it asked for none)."""

    retryable: bool = False
    status: int | None = None
    retry_after: float | None = None
    timed_out: bool = False
    detail: str = ""
    hint: str = ""
    said: str = ""


class ServedModel:
    """The call loop a served provider inherits (see the module docstring).

    `name` is the model's name in messages and completions; `key` the API key (masked in
    every message; None or base.NO_KEY: none). With `stream`, `on_progress` hears of every
    chunk and `max_words` applies. `sleep` and `clock` are injectable for tests.
    """

    label = "served"         # "<stage>: <label> model <name>" begins every error line
    retry_timeouts = True    # False: a timeout fails the call at once
    cuts_stops = False       # True: the answer is cut at the request's first stop string here

    def __init__(self, name: str, key: str | None, *, timeout: float, max_retries: int,
                 stream: bool, on_progress: OnProgress | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        self.name, self._key = name, key
        self.timeout, self.max_retries, self.stream = timeout, max_retries, stream
        self.on_progress = on_progress
        self._sleep, self._clock = sleep, clock
        self._requests = 0           # requests made for the call in progress

    # -- what a provider writes ----------------------------------------------------------
    def execute(self, request: Request) -> Iterator[Chunk]:
        """Send one request; yield its answer as it comes."""
        raise NotImplementedError

    def classify(self, exc: BaseException) -> Failure | None:
        """What `exc` is; None: not one of this provider's (it goes up as it is)."""
        raise NotImplementedError

    def adapt(self, request: Request, exc: BaseException) -> bool:
        """Change the arguments after `exc` and send again at once (True), or not."""
        return False

    def response_format(self, request: Request) -> str:
        """How the answer was asked for ("" for prose): Completion.response_format."""
        return ""

    def cut_usage(self, request: Request, usage: Usage, tokens: int,
                  prompt: tuple[int, int, int]) -> Usage:
        """The usage of an answer left unread past max_words: the pieces read are the
        tokens written; the prompt is what the server said it read."""
        return Usage(usage.prompt_tokens or prompt[1], tokens, usage.cached_tokens or prompt[2],
                     usage.cache_write_tokens)

    # -- the loop ------------------------------------------------------------------------
    def complete(self, request: Request) -> Completion:
        """Answer one request, retrying under the policy; the completion (or the
        ModelError) says how many requests it took."""
        self._requests, tries = 0, 0

        def attempt() -> Completion:
            nonlocal tries
            tries += 1
            return self._attempt(request)

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_retries + 1),
            retry=tenacity.retry_if_exception(self._retryable), wait=self._wait,
            sleep=self._sleep, reraise=True)
        try:
            completion = retrying(attempt)
        except ModelError as exc:
            exc.attempts = max(self._requests, 1)
            raise
        except Exception as exc:
            failure = self.classify(exc)
            if failure is None:
                raise
            raise self._error(request, failure, tries) from None
        return replace(completion, attempts=self._requests)

    def _retryable(self, exc: BaseException) -> bool:
        failure = None if isinstance(exc, ModelError) else self.classify(exc)
        return (failure is not None and failure.retryable
                and (self.retry_timeouts or not failure.timed_out)
                and not waits_too_long(failure.retry_after))

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """Seconds before the next attempt: the server's Retry-After, else the backoff."""
        exc = state.outcome.exception() if state.outcome is not None else None
        failure = self.classify(exc) if exc is not None else None
        return call_delay(state.attempt_number - 1, failure.retry_after if failure else None)

    def _attempt(self, request: Request) -> Completion:
        """One attempt: a request, and again at once while the provider adapts."""
        while True:
            try:
                return self._read(request)
            except Exception as exc:
                if isinstance(exc, ModelError) or not self.adapt(request, exc):
                    raise

    def _read(self, request: Request) -> Completion:
        """Send the request and assemble its answer from the provider's chunks."""
        started = self._clock()
        self._requests += 1
        parts: list[str] = []
        usage, finish, model, prompt = Usage(), "", "", (0, 0, 0)
        tokens, first = 0, 0.0
        chunks = self.execute(request)
        try:
            for chunk in chunks:
                if chunk.text:
                    parts.append(chunk.text)
                    tokens += 1
                    first = first or self._clock()
                usage = chunk.usage if chunk.usage is not None else usage
                finish, model = chunk.finish or finish, chunk.model or model
                prompt = chunk.prompt or prompt
                if self.stream and self.on_progress is not None and (chunk.text or chunk.prompt):
                    now = self._clock()
                    self.on_progress(Progress(
                        stage=request.stage, seconds=now - started, tokens=tokens,
                        generating=now - first if first else 0.0, prompt_done=prompt[0],
                        prompt_total=prompt[1], cached=prompt[2]))
                if self._past_words(request, parts, finish):
                    # Leaving the stream closes it: the server stops generating; its usage
                    # never comes.
                    usage, finish = self.cut_usage(request, usage, tokens, prompt), WORDS
                    break
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        return self._completion(request, "".join(parts), usage, finish, model, started)

    def _past_words(self, request: Request, parts: list[str], finish: str) -> bool:
        """Whether a streamed prose answer has more words than its request's max_words."""
        return bool(self.stream and request.max_words and request.json_schema is None
                    and not finish and len("".join(parts).split()) > request.max_words)

    def _completion(self, request: Request, text: str, usage: Usage, finish: str, model: str,
                    started: float) -> Completion:
        if self.cuts_stops:
            text, stopped = cut_at_stop(text, request.stop)
            finish = "stop" if stopped else finish
        if not text.strip():
            raise ModelResponseError(
                f"{self._where(request)} returned an empty answer "
                f"(finish_reason={finish or 'none'})", stage=request.stage, raw=text, usage=usage)
        return Completion(text=text, usage=usage, finish_reason=finish or "stop",
                          model=model or self.name, latency=self._clock() - started,
                          response_format=self.response_format(request))

    # -- the error line --------------------------------------------------------------------
    def _where(self, request: Request) -> str:
        return f"{request.stage}: {self.label} model {self.name}"

    def _error(self, request: Request, failure: Failure, tries: int) -> ModelError:
        """The one-line ModelError of a failed call."""
        if failure.said:
            what = one_line(failure.said, self._key)
        elif failure.timed_out:
            what = (f"sent nothing for {self.timeout:g}s (llm.timeout: the longest silence "
                    "allowed)" if self.stream else f"timed out after {self.timeout:g}s")
        else:
            detail = one_line(failure.detail or "no detail", self._key)
            http = f"HTTP {failure.status}: " if failure.status is not None else ""
            what = f"failed: {http}{detail}{failure.hint}"
        if waits_too_long(failure.retry_after):
            what += (f" (the server asked to wait {failure.retry_after:g}s, more than the "
                     f"{RETRY_AFTER_MAX:g}s a call waits)")
        after = f" (after {tries} attempts)" if tries > 1 else ""
        return ModelError(f"{self._where(request)} {what}{after}", stage=request.stage,
                          status=failure.status, attempts=max(self._requests, 1))


def cut_at_stop(text: str, stops: Any) -> tuple[str, bool]:
    """`text` up to the first of `stops` it holds, and whether one was found."""
    found = [i for i in (text.find(stop) for stop in stops if stop) if i >= 0]
    return (text[:min(found)], True) if found else (text, False)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries (its own or its response's): an SDK's status
    error, an llm plugin's."""
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def headers_of(exc: BaseException) -> Any:
    """The headers of the response an exception carries (None: none)."""
    return getattr(getattr(exc, "response", None), "headers", None)
