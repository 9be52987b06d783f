"""The one runner policy above a tick, for `novel tick`, `novel run` and `novel fleet` alike.

A tick that failed because the model's answer could not be used (a TickError caused by a
ModelResponseError: a small model's scene that was mostly copies, twice) committed
nothing, and the next attempt usually lands: it runs again at once, up to TICK_AGAIN
times, and a note says so. Any other failure, or the same one again, is the caller's: a
failed tick, after which the next try waits `rest_after` (models/retry.py: the
configured failure_backoff doubling, never under the floor, at most REST_MAX). The
calls inside a tick are retried below, by the one call loop (models/served.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from novel_agent.errors import ModelResponseError, TickError
from novel_agent.models.retry import TICK_AGAIN, rest

T = TypeVar("T")

__all__ = ["rest_after", "run_tick", "unusable"]


def unusable(exc: BaseException) -> bool:
    """Whether a tick failed on an answer that could not be used (nothing committed)."""
    return isinstance(exc, TickError) and isinstance(exc.__cause__, ModelResponseError)


def run_tick(tick: Callable[[], T], on_note: Callable[[str], None],
             go_on: Callable[[], bool] = lambda: True) -> T:
    """`tick()`; after a failure on an unusable answer, `tick()` again (up to TICK_AGAIN
    times, while `go_on()`: a stop asked for ends it), telling `on_note` why."""
    for tried in range(TICK_AGAIN + 1):
        try:
            return tick()
        except TickError as exc:
            if not unusable(exc) or tried == TICK_AGAIN or not go_on():
                raise
            on_note(f"{exc}; nothing was committed: writing it again")
    raise AssertionError("not reached")     # pragma: no cover - the loop returns or raises


def rest_after(failures: int, failure_backoff: float, floor: float = 0.0) -> float:
    """Seconds before the next try after `failures` failed ticks in a row (see
    models/retry.rest): `novel run` passes its interval as the floor, a fleet none."""
    return rest(failures, failure_backoff, floor)
