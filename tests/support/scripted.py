"""ScriptedModel: a fake model for tests. Enqueue answers, then inspect the calls.

    model = ScriptedModel()
    model.add("planner", {"title": ..., "intention": ...})   # dicts are sent as JSON
    model.add("writer", "The rain...")
    model.fail("extractor", ModelError("boom"))
    ...
    model.requests  # every Request received, in order

A call to a stage with nothing queued fails loudly (ScriptExhausted), unless the
test names a model to answer the rest (`otherwise=`, e.g. an OfflineModel), so a
test that scripts only the answers it cares about says so.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from typing import Any

from novel_agent.models.base import ChatModel, Completion, Request, Usage


class ScriptExhausted(AssertionError):
    """A ScriptedModel was called for a stage it had no answer queued for."""


class ScriptedModel:
    """A ChatModel that answers from queues, per stage."""

    def __init__(self, otherwise: ChatModel | None = None):
        self.queues: dict[str, deque[Any]] = defaultdict(deque)
        self.requests: list[Request] = []
        self.otherwise = otherwise

    def describe(self) -> str:
        return "scripted test model"

    def add(self, stage: str, answer: str | dict | Completion) -> ScriptedModel:
        """Queue an answer for the next call of `stage`."""
        self.queues[stage].append(answer)
        return self

    def fail(self, stage: str, error: Exception) -> ScriptedModel:
        """Queue an exception for the next call of `stage`."""
        self.queues[stage].append(error)
        return self

    def calls(self, stage: str) -> list[Request]:
        return [r for r in self.requests if r.stage == stage]

    def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        queue = self.queues.get(request.stage)
        if not queue:
            if self.otherwise is None:
                raise ScriptExhausted(f"ScriptedModel: no answer queued for a {request.stage} "
                                      f"call (call {len(self.requests)}); queue one with "
                                      f"add() or pass otherwise=")
            return self.otherwise.complete(request)
        answer = queue.popleft()
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, Completion):
            return answer
        text = json.dumps(answer) if isinstance(answer, (dict, list)) else str(answer)
        prompt = sum(len(m["content"]) for m in request.messages) // 4
        return Completion(text=text, usage=Usage(prompt, len(text) // 4), model="scripted")
