"""Named points in a tick where a test can make the process die (the crash matrix).

Core code calls `hit("after_plan")` and the like; that does nothing unless a
callback was armed with `arm(name, callback)`. The CLI arms one only when the
test-only variable NOVEL_TEST_CRASH_AT names a point (it sends itself SIGKILL
there), so production ticks pass through untouched.

Points: after_plan, after_write, after_extract (each model stage answered and
applied), before_journal (staged files written, no journal yet), mid_commit
(the journal written, one file renamed into place), after_commit (before the
summarizer).
"""

from __future__ import annotations

from collections.abc import Callable

POINTS = ("after_plan", "after_write", "after_extract", "before_journal", "mid_commit",
          "after_commit")
_armed: dict[str, Callable[[], None]] = {}


def arm(name: str, callback: Callable[[], None]) -> None:
    """Call `callback` when the tick reaches point `name`."""
    if name not in POINTS:
        raise ValueError(f"no crash point {name!r} (known: {', '.join(POINTS)})")
    _armed[name] = callback


def disarm() -> None:
    """Forget every armed point."""
    _armed.clear()


def hit(name: str) -> None:
    """The tick reached point `name`."""
    callback = _armed.get(name)
    if callback is not None:
        callback()
