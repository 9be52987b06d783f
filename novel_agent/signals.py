"""Stop requests: SIGINT and SIGTERM as a `StopFlag` the daemon's loop reads.

The first request asks the run to end after the tick in flight; the second,
if it comes while the tick is still only asking the model (`interruptible`),
raises `Interrupted` from the handler, so the tick is abandoned before its
commit. The commit and what follows it are never interrupted.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class Interrupted(BaseException):
    """A second signal abandoned the tick in flight (before its commit)."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signum)


@dataclass
class StopFlag:
    """The signals as the loop sees them: how many stop requests came, and which."""

    level: int = 0
    signum: int = 0
    interruptible: bool = False     # True while the tick only talks to the model
    wake: threading.Event = field(default_factory=threading.Event)

    def request(self, signum: int) -> None:
        """A stop request (the signal handler): the second one may abandon the tick."""
        self.level += 1
        self.signum = signum
        self.wake.set()
        if self.level >= 2 and self.interruptible:
            self.interruptible = False
            raise Interrupted(signum)

    def sleep(self, seconds: float) -> None:
        """Sleep that a stop request cuts short."""
        self.wake.wait(max(0.0, seconds))


def install_signals(stop: StopFlag, notify: Callable[[int, int], None] | None = None
                    ) -> Callable[[], None]:
    """Route SIGINT and SIGTERM to `stop`; `notify(signum, level)` is told first.
    Returns a function that puts the previous handlers back."""

    def handler(signum: int, frame: Any) -> None:
        if notify:
            notify(signum, stop.level + 1)
        stop.request(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for signum, old in previous.items():
            signal.signal(signum, old)

    return restore


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
