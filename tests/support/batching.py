"""The test server as a batching server: K parallel slots and a fixed latency per request.

`Batching(inner, slots=K, latency=s)` is a FakeOpenAIServer responder: a request
takes a slot (waiting while all K are busy), holds it `latency` seconds, then
`inner` answers. It counts what a fleet test and bench/fleet.py need: requests,
the most in flight at once, and each answer's time. So one book alone (one
request at a time) uses 1/K of the server, and capacity is K / latency requests/s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


class Batching:
    """A responder with K slots and a fixed latency (see the module docstring)."""

    def __init__(self, inner: Callable[[dict], Any], *, slots: int = 0, latency: float = 0.0):
        self.inner, self.slots, self.latency = inner, slots, latency
        self._slots = threading.Semaphore(slots) if slots else None
        self._lock = threading.Lock()
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.arrivals: list[float] = []    # when each request came (time.monotonic)
        self.times: list[float] = []       # when each answer was given

    @property
    def capacity(self) -> float:
        """Requests per second the server can answer with every slot busy."""
        return self.slots / self.latency

    def rate(self) -> float:
        """Requests per second answered, from the first arrival to the last answer."""
        span = max(self.times) - min(self.arrivals) if self.times else 0.0
        return len(self.times) / span if span > 0 else 0.0

    def reset(self) -> None:
        """Forget the counts (between two runs against one server)."""
        with self._lock:
            self.requests = self.in_flight = self.peak = 0
            self.arrivals, self.times = [], []

    def __call__(self, body: dict) -> Any:
        with self._lock:
            self.arrivals.append(time.monotonic())
        if self._slots is not None:
            self._slots.acquire()
        try:
            with self._lock:
                self.requests += 1
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
            if self.latency:
                time.sleep(self.latency)
            answer = self.inner(body)
            with self._lock:
                self.in_flight -= 1
                self.times.append(time.monotonic())
            return answer
        finally:
            if self._slots is not None:
                self._slots.release()
