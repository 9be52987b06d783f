"""The fleet's gate: at most N requests in flight in all, and one backoff shared by all.

Every request any book makes passes through one `Gate` on the fleet's event loop.
A request that the server throttles (HTTP 429, or any answer with Retry-After)
pauses the whole fleet: no request starts until the pause is over, and the ones
throttled in the same storm join that pause instead of each starting its own
(`pauses` counts the fleet's slow-downs, `throttled` the 429s). The pause is the
server's Retry-After when it gives one, else exponential in the pauses in a row;
a request that goes through ends the run of pauses. A throttled request is tried
again after the pause, up to `max_tries` times; then its error goes to the book.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
Throttle = Callable[[BaseException], "float | None"]   # seconds to pause, or None: not a 429

BACKOFF_BASE, BACKOFF_MAX = 1.0, 120.0


@dataclass
class GateStats:
    """What the gate has seen, for the live view and the benchmark."""

    requests: int = 0        # sent (tries included)
    in_flight: int = 0
    peak: int = 0            # the most in flight at once
    throttled: int = 0       # answers that asked the fleet to slow down
    pauses: int = 0          # times the fleet slowed down


class Gate:
    """The shared limit and backoff of one fleet (use it from the fleet's event loop)."""

    def __init__(self, concurrency: int, throttle: Throttle, *, max_tries: int = 8,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency, self.max_tries = concurrency, max_tries
        self._throttle, self._clock, self._sleep = throttle, clock, sleep
        self._slots = asyncio.Semaphore(concurrency)
        self.paused_until = 0.0
        self._in_a_row = 0       # pauses since the last request that went through
        self.stats = GateStats()

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """Make the request `call()` within the limit, after any pause, again after a 429."""
        tries = 0
        while True:
            tries += 1
            await self._wait_pause()
            async with self._slots:
                await self._wait_pause()     # a pause may have begun while this waited
                self._started()
                try:
                    result = await call()
                except Exception as exc:
                    pause = self._throttle(exc)
                    if pause is None or tries >= self.max_tries:
                        raise
                    self._throttled(pause)
                    continue
                finally:
                    self.stats.in_flight -= 1
            self._in_a_row = 0
            return result

    def paused_for(self) -> float:
        """Seconds the fleet's pause has still to run (0: not paused)."""
        return max(0.0, self.paused_until - self._clock())

    def _started(self) -> None:
        s = self.stats
        s.requests += 1
        s.in_flight += 1
        s.peak = max(s.peak, s.in_flight)

    def _throttled(self, hint: float) -> None:
        """Pause the fleet, unless a pause already runs (the same storm)."""
        self.stats.throttled += 1
        if self.paused_for() > 0:
            return
        self.stats.pauses += 1
        self._in_a_row += 1
        pause = hint if hint > 0 else BACKOFF_BASE * 2 ** (self._in_a_row - 1)
        self.paused_until = self._clock() + min(BACKOFF_MAX, pause)

    async def _wait_pause(self) -> None:
        while (left := self.paused_for()) > 0:
            await self._sleep(left)
