"""A provider SDK's async client, as the sync client a tick's model talks to.

A tick is sync code (pipeline.tick) and runs on a worker thread; its model
(models/openai_compat.py or models/anthropic_model.py, given this client) calls
`chat.completions.create(...)` or `messages.create(...)` as usual (the provider's
`calls`). Here that call is handed to the fleet's event loop, where one async client
per server (the provider's `async_client`) makes it through the fleet's Gate, and the
worker thread waits for the answer. So every request of every book goes out from one
loop, one connection pool per server, within one limit and one pause; the model's
call loop (models/served.py) retries as it does outside a fleet, and its
response-format ladder stays as it is.
"""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace
from typing import Any

from novel_agent.fleet.gate import Gate
from novel_agent.models.providers import OPENAI, Provider
from novel_agent.models.retry import retry_after as asked_wait


def retry_after(exc: BaseException) -> float | None:
    """The pause a throttled request asks for: Retry-After's seconds (models/retry.py
    reads it), 0 for a 429 without it (the gate's own backoff then), None when `exc` is
    not a throttle. Any SDK's status error will do (openai's and anthropic's carry
    `status_code` and `response`)."""
    status, response = getattr(exc, "status_code", None), getattr(exc, "response", None)
    if not isinstance(status, int) or response is None:
        return None
    asked = asked_wait(response.headers)
    if status != 429 and asked is None:
        return None
    return asked or 0.0


class BridgedClient:
    """A sync stand-in for an SDK client whose `<calls>.create` runs on `loop` through `gate`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, gate: Gate, client: Any,
                 calls: str = OPENAI.calls):
        self._loop, self._gate, self._client, self._calls = loop, gate, client, calls
        tree: Any = SimpleNamespace(create=self.create)
        for name in reversed(calls.split(".")):
            tree = SimpleNamespace(**{name: tree})
        self.__dict__.update(vars(tree))

    def create(self, **kwargs: Any) -> Any:
        """One request (not streamed), made on the loop; called from a worker thread."""
        if kwargs.get("stream"):
            raise ValueError("the fleet's client does not stream")
        target = self._client
        for name in self._calls.split("."):
            target = getattr(target, name)
        call = lambda: target.create(**kwargs)  # noqa: E731
        return asyncio.run_coroutine_threadsafe(self._gate.run(call), self._loop).result()

    async def aclose(self) -> None:
        """Close the async client's connection pool (on the loop)."""
        await self._client.close()


class Clients:
    """One async client per (provider, server, key, timeout), shared by the books that use it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, gate: Gate):
        self._loop, self._gate = loop, gate
        self._made: dict[tuple[str, str, str, float], BridgedClient] = {}
        self._lock = threading.Lock()     # books open their sessions on worker threads

    def for_server(self, base_url: str, api_key: str | None, timeout: float,
                   provider: Provider = OPENAI) -> BridgedClient:
        """The bridged client of a server (made on first use), spoken to as `provider`
        speaks (an OpenAI-compatible one unless said)."""
        if provider.async_client is None:
            raise ValueError(f"the {provider.name} provider has no client a fleet can share")
        key = (provider.name, base_url, api_key or "", timeout)
        with self._lock:
            if key in self._made:
                return self._made[key]
            inner = provider.async_client(base_url, api_key, timeout)
            made = self._made[key] = BridgedClient(self._loop, self._gate, inner, provider.calls)
            return made

    async def close(self) -> None:
        """Close every connection pool (on the loop)."""
        for bridged in self._made.values():
            await bridged.aclose()
        self._made.clear()
