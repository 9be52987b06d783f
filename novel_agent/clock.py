"""The clock, at the edge: the one default for every `now=` parameter.

Core code never reads the clock itself; it takes `now` (and tests pass a fixed one).
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)
