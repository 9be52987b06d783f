"""The openai SDK's async client, as the sync client a tick's model talks to.

A tick is sync code (pipeline.tick) and runs on a worker thread; its model
(models/openai_compat.py, given this client) calls `chat.completions.create(...)`
as usual. Here that call is handed to the fleet's event loop, where one
`openai.AsyncOpenAI` per server makes it through the fleet's Gate, and the worker
thread waits for the answer. So every request of every book goes out from one
loop, one connection pool per server, within one limit and one backoff; the
model's own retries (5xx, timeouts) and its response-format ladder stay as they are.
"""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace
from typing import Any

from novel_agent.fleet.gate import Gate

NO_KEY = "not-needed"


def retry_after(exc: BaseException) -> float | None:
    """The pause a throttled request asks for: Retry-After's seconds, 0 for a 429 without
    it (the gate's own backoff then), None when `exc` is not a throttle."""
    import openai  # imported where it is used: the SDK takes 0.7 s, every command paid it
    if not isinstance(exc, openai.APIStatusError):
        return None
    header = exc.response.headers.get("retry-after")
    if exc.status_code != 429 and not header:
        return None
    try:
        return max(0.0, float(header)) if header else 0.0
    except ValueError:
        return 0.0


class BridgedClient:
    """A sync stand-in for `openai.OpenAI` whose calls run on `loop` through `gate`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, gate: Gate, client: Any):
        self._loop, self._gate, self._client = loop, gate, client
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **kwargs: Any) -> Any:
        """One chat completion (not streamed), made on the loop; called from a worker thread."""
        if kwargs.get("stream"):
            raise ValueError("the fleet's client does not stream")
        call = lambda: self._client.chat.completions.create(**kwargs)  # noqa: E731
        return asyncio.run_coroutine_threadsafe(self._gate.run(call), self._loop).result()

    async def aclose(self) -> None:
        """Close the async client's connection pool (on the loop)."""
        await self._client.close()


class Clients:
    """One AsyncOpenAI per (server, key, timeout), shared by the books that use it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, gate: Gate):
        self._loop, self._gate = loop, gate
        self._made: dict[tuple[str, str, float], BridgedClient] = {}
        self._lock = threading.Lock()     # books open their sessions on worker threads

    def for_server(self, base_url: str, api_key: str | None, timeout: float) -> BridgedClient:
        """The bridged client of a server (made on first use)."""
        key = (base_url, api_key or NO_KEY, timeout)
        with self._lock:
            if key in self._made:
                return self._made[key]
            import openai
            inner = openai.AsyncOpenAI(base_url=base_url, api_key=key[1], timeout=timeout,
                                       max_retries=0)
            made = self._made[key] = BridgedClient(self._loop, self._gate, inner)
            return made

    async def close(self) -> None:
        """Close every connection pool (on the loop)."""
        for bridged in self._made.values():
            await bridged.aclose()
        self._made.clear()
