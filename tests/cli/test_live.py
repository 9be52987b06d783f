"""The live progress line `novel tick` draws while a local stage streams."""

from __future__ import annotations

import io

from novel_agent.cli.live import CLEAR, LiveLine, progress_line
from novel_agent.cli.tick import stage_line
from novel_agent.models.base import Progress
from novel_agent.tick.events import StageEvent
from tests.support.clirunner import invoke


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
    line = stage_line(StageEvent("writer", 12.5, 1830, 412, 1024))
    assert line == "  write       12.5s    1830 → 412   tokens (1024 cached, 56%)"


class Drawn(LiveLine):
    """A live line that draws although CliRunner's output is no terminal."""

    def __init__(self, stream, **_):
        super().__init__(stream, interval=0.0, enabled=True)


def streaming_session(monkeypatch):
    """Session.open as a streaming model's would be: each open reports one progress."""
    from novel_agent.tick.session import Session
    real, heard = Session.open, []

    def opening(*args, on_progress=None, **kwargs):
        heard.append(on_progress)
        if on_progress is not None:
            on_progress(Progress("writer", seconds=3.0, tokens=12, generating=2.0))
        return real(*args, on_progress=on_progress, **kwargs)
    monkeypatch.setattr(Session, "open", opening)
    return heard


def test_novel_run_draws_the_live_line_and_clears_it_for_the_tick_line(project, monkeypatch):
    from novel_agent.cli import run_cmd
    heard = streaming_session(monkeypatch)
    monkeypatch.setattr(run_cmd, "LiveLine", Drawn)
    out = invoke("run", "-p", "harbour", "--ticks", "1").output
    assert heard and all(callable(h) for h in heard)
    drawn = out.index(CLEAR + "  write     12 tokens  5.5 tok/s  3s")
    assert out.index(CLEAR, drawn + 1) < out.index("tick 1 ")    # cleared before the line


def test_novel_summarize_draws_the_live_line(project, monkeypatch):
    from novel_agent.cli import summarize
    heard = streaming_session(monkeypatch)
    monkeypatch.setattr(summarize, "LiveLine", Drawn)
    out = invoke("summarize", "-p", "harbour").output
    assert len(heard) == 1 and callable(heard[0])
    assert out.startswith(CLEAR + "  write     12 tokens  5.5 tok/s  3s" + CLEAR)
    assert out.endswith("nothing to summarize: every checkpoint owed is made\n")


def test_novel_import_draws_the_live_line_beside_its_bar(project, monkeypatch, tmp_path):
    from novel_agent.cli import import_cmd
    heard = streaming_session(monkeypatch)
    monkeypatch.setattr(import_cmd, "LiveLine", Drawn)
    book = tmp_path / "book.md"
    book.write_text("# One\n\nMara Quill climbed to the lamp room and lit it.\n")
    out = invoke("import", str(book), "-p", "harbour").output
    assert len(heard) == 1 and callable(heard[0])
    drawn = out.index(CLEAR + "  write     12 tokens  5.5 tok/s  3s")
    assert out.index(CLEAR, drawn + 1) < out.index("imported 1 scene")
