"""Optional embeddings: a second relevance signal from an OpenAI-compatible `/embeddings`.

Off unless `context.embeddings.model` is set. Texts are embedded in batches of
`batch_size` through the `openai` SDK and cached in the index by the hash of
model and text, so a scene or a fact is embedded once in its life. Every call
is a usage row (stage "embeddings"), priced from the table when its model is
listed. A failing endpoint never stops a tick: retrieval goes on with BM25 and
the other signals, and the tick says so in a note.
"""

from __future__ import annotations

import array
import hashlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from novel_agent.config.settings import Config
from novel_agent.errors import ConfigError, ModelError
from novel_agent.index.db import Index
from novel_agent.models.base import NO_KEY
from novel_agent.models.prices import Price


@dataclass(frozen=True)
class EmbeddingSettings:
    """`context.embeddings`, with its defaults filled from `llm`."""

    model: str = ""
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    batch_size: int = 64

    @property
    def enabled(self) -> bool:
        return bool(self.model)

    @classmethod
    def of(cls, config: Config) -> EmbeddingSettings:
        given = config.context.embeddings
        return cls(model=given.model, base_url=given.base_url or config.llm.base_url,
                   api_key_env=given.api_key_env or config.llm.api_key_env,
                   batch_size=given.batch_size)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity (0 for an empty or zero vector)."""
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _key(model: str, text: str) -> str:
    return hashlib.sha1(f"{model}\0{text}".encode()).hexdigest()


class Embedder:
    """Embeds texts through an OpenAI-compatible endpoint, cached in the index."""

    def __init__(self, settings: EmbeddingSettings, index: Index, env: Mapping[str, str], *,
                 price: Price | None = None, timeout: float = 60.0, cached_only: bool = False,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC),
                 clock: Callable[[], float] = time.monotonic):
        if not settings.base_url:
            raise ConfigError("context.embeddings.model is set but no endpoint is: set "
                              "context.embeddings.base_url (or llm.base_url)",
                              key="context.embeddings")
        self.settings, self.index, self.price = settings, index, price
        self._key = env.get(settings.api_key_env) or NO_KEY
        import openai  # here, not at the top: the SDK takes 0.7 s to import, every command paid it
        self._client = openai.OpenAI(base_url=settings.base_url, api_key=self._key,
                                     timeout=timeout, max_retries=2)
        self.now, self.clock = now, clock
        self.cached_only = cached_only      # `novel context`: no call, only what is cached
        self.rows: list[dict[str, Any]] = []
        self.tick = 0

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text (cached ones from the index, the rest embedded now; with
        `cached_only`, [] for those not cached)."""
        model = self.settings.model
        keys = [_key(model, t) for t in texts]
        known = self._cached(set(keys))
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in known))
        if self.cached_only:
            return [known.get(k, []) for k in keys]
        size = self.settings.batch_size
        for start in range(0, len(missing), size):
            batch = missing[start:start + size]
            for text, vector in zip(batch, self._embed(batch)):
                known[_key(model, text)] = vector
        return [known[k] for k in keys]

    def _cached(self, keys: set[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        wanted = sorted(keys)
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ", ".join("?" for _ in chunk)
            for key, blob in self.index.db.execute(
                    f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", chunk):
                found[key] = array.array("f", blob).tolist()
        return found

    def _embed(self, batch: list[str]) -> list[list[float]]:
        import openai
        started = self.clock()
        try:
            answer = self._client.embeddings.create(model=self.settings.model, input=batch)
        except openai.OpenAIError as exc:
            message = " ".join(str(exc).split()).replace(self._key, "***") \
                if self._key != NO_KEY else " ".join(str(exc).split())
            self._row(0, self.clock() - started, error=message[:300])
            raise ModelError(f"embeddings ({self.settings.model} at {self.settings.base_url}) "
                             f"failed: {message[:300]}") from None
        vectors = [list(item.embedding) for item in sorted(answer.data, key=lambda d: d.index)]
        if len(vectors) != len(batch):
            raise ModelError(f"embeddings: asked for {len(batch)} vectors, got {len(vectors)}")
        usage = getattr(answer, "usage", None)
        self._row(getattr(usage, "prompt_tokens", 0) or 0, self.clock() - started)
        with self.index.writing():
            self.index.db.executemany(
                "INSERT OR REPLACE INTO embeddings (key, vector) VALUES (?, ?)",
                [(_key(self.settings.model, t), array.array("f", v).tobytes())
                 for t, v in zip(batch, vectors)])
        return vectors

    def _row(self, tokens: int, latency: float, error: str = "") -> None:
        cost = None if self.price is None else round(self.price.cost(tokens, 0, 0), 8)
        self.rows.append({"tick": self.tick, "stage": "embeddings", "model": self.settings.model,
                          "provider": "openai", "prompt_tokens": tokens, "cached_tokens": 0,
                          "completion_tokens": 0, "latency": round(latency, 4), "attempts": 1,
                          "finish_reason": "error" if error else "stop", "cost": cost,
                          "error": error, "response_format": "",
                          "at": self.now().isoformat(timespec="seconds")})

    def drain(self) -> list[dict[str, Any]]:
        """The usage rows since the last drain."""
        rows, self.rows = self.rows, []
        return rows

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine similarity of each text with `query`."""
        if not texts:
            return []
        vectors = self.vectors([query, *texts])
        return [cosine(vectors[0], v) for v in vectors[1:]]
