"""The fleet's gate: at most N in flight, one pause per 429 storm, Retry-After obeyed; the
throttled request's error goes back to its caller, whose call loop tries it again."""

from __future__ import annotations

import asyncio

import openai
import pytest

from novel_agent.fleet.bridge import retry_after
from novel_agent.fleet.gate import Gate
from novel_agent.models.retry import RETRY_AFTER_MAX

try:                            # the SDK's HTTP library: httpx, or httpx2 in newer releases
    import httpx2 as httpx  # type: ignore[import-not-found]
except ImportError:             # pragma: no cover - depends on the installed SDK
    import httpx  # type: ignore[no-redef]


class Throttled(Exception):
    def __init__(self, seconds: float = 0.0):
        self.seconds = seconds


def throttle(exc: BaseException) -> float | None:
    return exc.seconds if isinstance(exc, Throttled) else None


class FakeTime:
    """A clock that only the gate's sleeps move: a sleep lets the other tasks run first,
    then the clock is at least where the sleep was to end."""

    def __init__(self):
        self.now, self.slept = 100.0, []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        until = self.now + seconds
        for _ in range(5):
            await asyncio.sleep(0)
        self.now = max(self.now, until)


def test_at_most_n_requests_are_in_flight():
    async def main():
        gate = Gate(3, throttle)

        async def call():
            for _ in range(3):
                await asyncio.sleep(0)
            return "ok"

        results = await asyncio.gather(*(gate.run(call) for _ in range(10)))
        return gate, results

    gate, results = asyncio.run(main())
    assert results == ["ok"] * 10
    assert gate.stats.peak == 3 and gate.stats.requests == 10 and gate.stats.in_flight == 0


async def again(gate: Gate, call):
    """A throttled request tried again, as a book's call loop (models/served.py) does."""
    while True:
        try:
            return await gate.run(call)
        except Throttled:
            continue


def test_a_storm_of_429s_pauses_the_fleet_once_for_the_retry_after():
    time = FakeTime()

    async def main():
        gate = Gate(4, throttle, clock=time.clock, sleep=time.sleep)
        tried: dict[int, int] = {}
        started = asyncio.Event()
        arrived = 0

        async def call(n: int):
            nonlocal arrived
            tried[n] = tried.get(n, 0) + 1
            if tried[n] == 1:          # the storm: all four first tries are throttled together
                arrived += 1
                if arrived == 4:
                    started.set()
                await started.wait()
                raise Throttled(2.5)
            return n

        results = await asyncio.gather(*(again(gate, lambda n=n: call(n)) for n in range(4)))
        return gate, results, tried

    gate, results, tried = asyncio.run(main())
    assert results == [0, 1, 2, 3]
    assert gate.stats.throttled == 4 and gate.stats.pauses == 1
    assert time.now == pytest.approx(102.5)       # one pause, as long as Retry-After
    assert tried == {0: 2, 1: 2, 2: 2, 3: 2}


def test_pauses_in_a_row_grow_and_a_success_resets_them():
    time = FakeTime()

    async def main():
        gate = Gate(1, throttle, clock=time.clock, sleep=time.sleep)
        answers = iter([Throttled(), Throttled(), "ok", Throttled(), "ok"])

        async def call():
            answer = next(answers)
            if isinstance(answer, Exception):
                raise answer
            return answer

        return gate, [await again(gate, call), await again(gate, call)]

    gate, results = asyncio.run(main())
    assert results == ["ok", "ok"]
    assert time.slept == [0.5, 1.0, 0.5]     # no Retry-After: the policy's backoff; reset after ok
    assert gate.stats.pauses == 3


def test_a_long_retry_after_pauses_the_fleet_at_most_the_longest_a_call_waits():
    time = FakeTime()

    async def main():
        gate = Gate(1, throttle, clock=time.clock, sleep=time.sleep)

        async def throttled():
            raise Throttled(3600.0)

        with pytest.raises(Throttled):
            await gate.run(throttled)
        return gate

    gate = asyncio.run(main())
    assert gate.paused_for() == RETRY_AFTER_MAX


def test_the_gate_retries_nothing_and_other_errors_pass_through_untouched():
    async def main():
        time = FakeTime()
        gate = Gate(2, throttle, clock=time.clock, sleep=time.sleep)

        async def broken():
            raise ValueError("bad answer")

        async def always_throttled():
            raise Throttled(0.0)

        with pytest.raises(ValueError, match="bad answer"):
            await gate.run(broken)
        assert gate.stats.pauses == 0
        with pytest.raises(Throttled):
            await gate.run(always_throttled)
        return gate

    gate = asyncio.run(main())
    assert gate.stats.throttled == 1 and gate.stats.requests == 2 and gate.stats.in_flight == 0
    assert gate.stats.pauses == 1


def status_error(status: int, headers: dict[str, str]) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    return openai.APIStatusError("error", response=response, body=None)


def test_retry_after_reads_the_servers_pause():
    assert retry_after(status_error(429, {"Retry-After": "7"})) == 7.0
    assert retry_after(status_error(429, {})) == 0.0
    assert retry_after(status_error(503, {"Retry-After": "3"})) == 3.0
    assert retry_after(status_error(429, {"retry-after-ms": "1500"})) == 1.5
    assert retry_after(status_error(500, {})) is None
    assert retry_after(ValueError("no")) is None
