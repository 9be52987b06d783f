"""The live progress line `novel tick` draws while a local stage streams."""

from __future__ import annotations

import io

from novel_agent.cli.live import CLEAR, LiveLine, progress_line
from novel_agent.cli.tick import stage_line
from novel_agent.models.base import Progress
from novel_agent.pipeline import StageReport


def test_progress_line_says_reading_then_writing():
    assert progress_line(Progress("writer", seconds=0.2)) == \
        "  write     waiting for the model  0s"
    assert progress_line(Progress("writer", seconds=14.2, prompt_done=512, prompt_total=1830,
                                  cached=1024)) == \
        "  write     reading the prompt 512/1,830 tokens (1,024 cached)  14s"
    assert progress_line(Progress("planner", seconds=21.0, tokens=123, generating=7.1)) == \
        "  plan      123 tokens  17.2 tok/s  21s"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_live_line_redraws_a_few_times_a_second_and_clears():
    out, clock = io.StringIO(), Clock()
    live = LiveLine(out, interval=0.25, clock=clock, enabled=True)
    for n in range(1, 11):                     # ten tokens in 0.5 s: drawn at 1 and 6
        clock.now = n * 0.05
        live.update(Progress("writer", seconds=clock.now, tokens=n, generating=clock.now))
    assert out.getvalue().count(CLEAR) == 2
    assert out.getvalue().endswith(CLEAR + "  write     6 tokens  16.7 tok/s  0s")
    live.clear()
    assert out.getvalue().endswith(CLEAR) and out.getvalue().count(CLEAR) == 3
    live.clear()                               # nothing drawn since: nothing written
    assert out.getvalue().count(CLEAR) == 3


def test_off_a_terminal_nothing_is_drawn():
    out = io.StringIO()                        # isatty() is False
    live = LiveLine(out)
    live.update(Progress("writer", seconds=1.0, tokens=5, generating=1.0))
    live.clear()
    assert out.getvalue() == ""


def test_the_stage_line_gives_the_cached_share():
    line = stage_line(StageReport("writer", 12.5, 1830, 412, 1024))
    assert line == "  write       12.5s    1830 → 412   tokens (1024 cached, 56%)"
