"""RecordingModel: wraps any ChatModel and keeps one usage row per call.

The session writes the rows to `.novel/index.db` (table `usage`) after each
tick, failed ones included, so tokens, cached tokens, latency and the JSON
format that worked are logged per call whatever the provider. Whoever drives
the model says which tick the calls are for (`tick`).
"""

from __future__ import annotations

from typing import Any

from .base import ChatModel, Completion, Request


class RecordingModel:
    """A ChatModel that records what each call cost, then passes the answer on."""

    def __init__(self, inner: ChatModel, tick: int = 0):
        self.inner = inner
        self.tick = tick
        self.rows: list[dict[str, Any]] = []

    def describe(self) -> str:
        return self.inner.describe()

    def complete(self, request: Request) -> Completion:
        completion = self.inner.complete(request)
        self.rows.append({
            "tick": self.tick,
            "stage": request.stage,
            "model": completion.model,
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
            "cached_tokens": completion.usage.cached_tokens,
            "latency": round(completion.latency, 4),
            "response_format": completion.response_format,
        })
        return completion

    def drain(self) -> list[dict[str, Any]]:
        """The rows recorded since the last drain."""
        rows, self.rows = self.rows, []
        return rows
