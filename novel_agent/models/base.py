"""The one small interface every model implements: a request in, a completion out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Usage:
    """Tokens a call consumed, as the provider reported them (0 when unknown)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Request:
    """One chat call. `json_schema` set means the stage wants a JSON object back."""

    stage: str
    messages: list[dict[str, str]]
    max_tokens: int
    json_schema: dict[str, Any] | None = None
    schema_name: str = "answer"
    temperature: float | None = None


@dataclass(frozen=True)
class Completion:
    """The answer of one call."""

    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    model: str = ""
    latency: float = 0.0
    # How the JSON was asked for: "json_schema", "json_object", "text" or "" (prose).
    response_format: str = ""
    attempts: int = 1        # requests the client made for it (retries and fallbacks included)


@runtime_checkable
class ChatModel(Protocol):
    """What the pipeline needs of a model.

    `describe()` is the one line `novel tick` prints ("local model SmolLM2-135M ...").
    `complete()` raises ModelError when the call fails after retries.
    """

    def describe(self) -> str: ...

    def complete(self, request: Request) -> Completion: ...
