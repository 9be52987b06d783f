"""The one retry policy: what is tried again, how long to wait, and for how long at most.

Two levels, one module, so that `novel tick`, `novel run` and `novel fleet` behave alike:

- **A call** (models/served.py, every served provider): a request that fails with 408,
  409, 429, 529 or any 5xx, a lost connection or a timeout (unless the provider says a
  timeout must not be retried: the embedded model's same compute would time out again)
  is sent again, up to `llm.max_retries` times, after `call_delay`: the server's
  `retry-after-ms` / `Retry-After` in full when it gives one, else BACKOFF_BASE doubling
  to BACKOFF_MAX. A server that asks for more than RETRY_AFTER_MAX is not retried at all
  (sooner than asked would be throttled again); the error says what it asked. The fleet's
  gate pauses every book for the same `call_delay`.
- **A tick** (tick/runner.py): a tick that failed because the model's answer could not be
  used (nothing committed) runs once more at once (TICK_AGAIN); a tick that still fails
  is a failure, and the next try waits `rest(failures, failure_backoff, interval)`:
  `daemon.failure_backoff` doubling per failure in a row, never under the floor (the
  daemon's interval), never over REST_MAX.

RETRY_AFTER_MAX is REST_MAX: a call never waits longer for a server than the runner would
rest between two failed ticks.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime

RETRY_STATUSES = frozenset({408, 409, 429, 529})     # and every 5xx
BACKOFF_BASE, BACKOFF_MAX = 0.5, 20.0     # a call's wait before a retry: doubling, at most
REST_MAX = 600.0          # the longest rest between two failed ticks (10 minutes)
RETRY_AFTER_MAX = REST_MAX   # the longest Retry-After a call waits for; longer: not retried
# An SDK client's own retries: off everywhere (the call loop above retries; two loops
# would multiply each other's tries). The SDKs' machinery cannot be the one loop: a stream
# that fails after its first piece and an llm plugin are out of its reach, and it caps
# Retry-After, jitters its waits and does not say how many requests it made.
SDK_RETRIES = 0
TICK_AGAIN = 1            # times a tick whose answer could not be used runs again at once


def retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth the same request again: 408, 409, 429, 529, 5xx."""
    return status in RETRY_STATUSES or status >= 500


def backoff(attempt: int) -> float:
    """Seconds before retry `attempt` + 1 when the server said nothing: BACKOFF_BASE
    doubling, at most BACKOFF_MAX."""
    return float(min(BACKOFF_MAX, BACKOFF_BASE * 2 ** attempt))


def call_delay(attempt: int, retry_after: float | None = None) -> float:
    """Seconds before retry `attempt` + 1: the server's Retry-After in full when it gave
    one, else the backoff."""
    return backoff(attempt) if retry_after is None else retry_after


def waits_too_long(retry_after: float | None) -> bool:
    """Whether a server asked for a wait longer than a call makes (RETRY_AFTER_MAX)."""
    return retry_after is not None and retry_after > RETRY_AFTER_MAX


def retry_after(headers: Mapping[str, str] | None,
                wall: Callable[[], float] = time.time) -> float | None:
    """The wait a server asks for, in seconds: `retry-after-ms`, else `Retry-After` as
    seconds or as an HTTP date (`wall` is the time now); None when it asks for none (or
    says something that is neither)."""
    if not headers:
        return None
    said = {str(name).lower(): value for name, value in headers.items()}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        given = said.get(name)
        if not given:
            continue
        seconds: float | None
        try:
            seconds = float(given) / scale
        except ValueError:
            seconds = _date_seconds(given, wall) if scale == 1.0 else None
        if seconds is not None and math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def _date_seconds(text: str, wall: Callable[[], float]) -> float | None:
    try:
        return parsedate_to_datetime(text).timestamp() - wall()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def rest(failures: int, base: float, floor: float = 0.0) -> float:
    """Seconds to rest after the `failures`-th failed tick in a row: `base` doubling, never
    under `floor` (the daemon's interval), never over REST_MAX."""
    return float(min(REST_MAX, max(floor, base * 2 ** (failures - 1))))
