"""RecordingModel: wraps any ChatModel and keeps one usage row per call.

A row says which tick and stage a call worked for, the model and provider,
prompt, cached (read from the prompt cache), cache-written and completion tokens, latency, the requests the client made,
the finish reason, the JSON format that worked, when it was made, and what it
cost at the session's price (None when the price is unknown, never 0). A
failed call (a ModelError after the client's retries) is a row too, with its
error and the tokens the server reported, if it reported any. A request that
`refuse` finds fault with (the session's: over the model's window) is not sent
and leaves no row: it is a ModelError that says why.

The session writes the rows to `.novel/index.db` and `.novel/usage.jsonl`
after each tick (see ledger.py), failed ones included. Whoever drives the
model says which tick the calls are for (`tick`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from novel_agent.clock import utc_now
from novel_agent.errors import ModelError
from novel_agent.models.base import ChatModel, Completion, Request, Usage

if TYPE_CHECKING:
    from novel_agent.models.prices import Price



class RecordingModel:
    """A ChatModel that records what each call cost, then passes the answer on."""

    def __init__(self, inner: ChatModel, tick: int = 0, *, model: str = "",
                 provider: str = "", price: Price | None = None,
                 now: Callable[[], datetime] = utc_now,
                 clock: Callable[[], float] = time.monotonic,
                 refuse: Callable[[Request], str] | None = None,
                 rows: list[dict[str, Any]] | None = None):
        self.inner = inner
        self.refuse = refuse
        self.tick = tick
        self.model, self.provider, self.price = model, provider, price
        self.now, self.clock = now, clock
        # `rows`: a list shared with the other stages' recording models, kept in call order
        self.rows: list[dict[str, Any]] = [] if rows is None else rows

    def describe(self) -> str:
        return self.inner.describe()

    def complete(self, request: Request) -> Completion:
        problem = self.refuse(request) if self.refuse else ""
        if problem:
            raise ModelError(problem, stage=request.stage, attempts=0)
        started = self.clock()
        try:
            completion = self.inner.complete(request)
        except ModelError as exc:
            usage = exc.usage if isinstance(exc.usage, Usage) else Usage()
            self.rows.append(self._row(request.stage, usage, model=self.model,
                                       latency=self.clock() - started, attempts=exc.attempts,
                                       finish_reason="error", error=str(exc)))
            raise
        self.rows.append(self._row(request.stage, completion.usage,
                                   model=completion.model or self.model,
                                   latency=completion.latency, attempts=completion.attempts,
                                   finish_reason=completion.finish_reason,
                                   response_format=completion.response_format))
        return completion

    def _row(self, stage: str, usage: Usage, *, model: str, latency: float, attempts: int,
             finish_reason: str, response_format: str = "", error: str = "") -> dict[str, Any]:
        cost = None if self.price is None else round(
            self.price.cost(usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens,
                            usage.cache_write_tokens), 8)
        return {"tick": self.tick, "stage": stage, "model": model, "provider": self.provider,
                "prompt_tokens": usage.prompt_tokens, "cached_tokens": usage.cached_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
                "completion_tokens": usage.completion_tokens, "latency": round(latency, 4),
                "attempts": attempts, "finish_reason": finish_reason, "cost": cost,
                "error": error, "response_format": response_format,
                "at": self.now().isoformat(timespec="seconds")}

    def drain(self) -> list[dict[str, Any]]:
        """The rows recorded since the last drain."""
        rows = list(self.rows)
        self.rows.clear()          # in place: the list may be shared
        return rows
