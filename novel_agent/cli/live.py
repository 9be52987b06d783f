"""The live progress line of a streaming stage: rewritten in place on a terminal.

A local stage can take a minute (the 1.5B model reads ~40 prompt tokens and writes
~17 tokens a second on two cores); while it thinks, one line says how far it is:

      write     reading the prompt 512/1,830 tokens (1,024 cached)  14s
      write     123 tokens  17.2 tok/s  21s

`progress_line` makes the text (pure); `LiveLine` draws it on a terminal, at most a
few times a second, and clears it before the stage's own line is printed. Off a
terminal (a pipe, a log, CliRunner) it draws nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from novel_agent.config.stages import verb
from novel_agent.models.base import Progress

CLEAR = "\r\033[K"


def progress_line(p: Progress) -> str:
    """One line: the stage, then how far the prompt is read or how many tokens came."""
    line = f"  {verb(p.stage):<9} "
    if p.tokens:
        speed = f"  {p.tokens_per_second:.1f} tok/s" if p.tokens_per_second else ""
        line += f"{p.tokens} tokens{speed}"
    elif p.prompt_total:
        cached = f" ({p.cached:,} cached)" if p.cached else ""
        line += f"reading the prompt {p.prompt_done:,}/{p.prompt_total:,} tokens{cached}"
    else:
        line += "waiting for the model"
    return f"{line}  {p.seconds:.0f}s"


class LiveLine:
    """Draws progress lines in place on `stream` if it is a terminal."""

    def __init__(self, stream: TextIO, *, interval: float = 0.25,
                 clock: Callable[[], float] = time.monotonic, enabled: bool | None = None):
        self.stream, self.interval, self.clock = stream, interval, clock
        self.enabled = stream.isatty() if enabled is None else enabled
        self._drawn, self._last = False, float("-inf")

    def update(self, progress: Progress) -> None:
        """Redraw with `progress`, unless the last draw was under `interval` ago."""
        now = self.clock()
        if not self.enabled or now - self._last < self.interval:
            return
        self._last = now
        self.stream.write(CLEAR + progress_line(progress))
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        """Take the line away (before a line that stays is printed)."""
        if self._drawn:
            self.stream.write(CLEAR)
            self.stream.flush()
            self._drawn, self._last = False, float("-inf")
