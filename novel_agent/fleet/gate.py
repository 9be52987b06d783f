"""The fleet's gate: at most N requests in flight in all, and one pause shared by all.

Every request any book makes passes through one `Gate` on the fleet's event loop.
A request that the server throttles (HTTP 429, or any answer with Retry-After)
pauses the whole fleet: no request starts until the pause is over, and the ones
throttled in the same storm join that pause instead of each starting its own
(`pauses` counts the fleet's slow-downs, `throttled` the 429s). The pause is the one
policy's (models/retry.py): the server's Retry-After in full when it gives one, else
the backoff, growing with the pauses in a row; a request that goes through ends the
run of pauses. The gate retries nothing: the throttled request's error goes back to
its book's model, whose call loop (models/served.py) tries it again as it would
outside a fleet, and that try waits here until the pause is over. One loop, not two.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from novel_agent.models.retry import RETRY_AFTER_MAX, backoff

T = TypeVar("T")
Throttle = Callable[[BaseException], "float | None"]   # Retry-After's seconds (0: none), None: no throttle


@dataclass
class GateStats:
    """What the gate has seen, for the live view and the benchmark."""

    requests: int = 0        # sent (tries included)
    in_flight: int = 0
    peak: int = 0            # the most in flight at once
    throttled: int = 0       # answers that asked the fleet to slow down
    pauses: int = 0          # times the fleet slowed down


class Gate:
    """The shared limit and pause of one fleet (use it from the fleet's event loop)."""

    def __init__(self, concurrency: int, throttle: Throttle, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self._throttle, self._clock, self._sleep = throttle, clock, sleep
        self._slots = asyncio.Semaphore(concurrency)
        self.paused_until = 0.0
        self._in_a_row = 0       # pauses since the last request that went through
        self.stats = GateStats()

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """Make the request `call()` within the limit, after any pause; a throttled one
        pauses the fleet, and its error goes back to the caller."""
        await self._wait_pause()
        async with self._slots:
            await self._wait_pause()     # a pause may have begun while this waited
            self._started()
            try:
                result = await call()
            except Exception as exc:
                pause = self._throttle(exc)
                if pause is not None:
                    self._throttled(pause)
                raise
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
        pause = min(RETRY_AFTER_MAX, hint) if hint > 0 else backoff(self._in_a_row - 1)
        self.paused_until = self._clock() + pause

    async def _wait_pause(self) -> None:
        while (left := self.paused_for()) > 0:
            await self._sleep(left)
