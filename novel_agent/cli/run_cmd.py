"""`novel run`: the daemon in the foreground, one status line per tick."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any

import click

from novel_agent.cli.common import (
    flags,
    model_options,
    novel_errors,
    open_project,
    project_option,
    wait_option,
)
from novel_agent.cli.live import LiveLine
from novel_agent.cli.tick import stage_line
from novel_agent.config.values import interval_seconds
from novel_agent.daemon.heartbeat import ProgressFile
from novel_agent.daemon.log import close_log, open_log
from novel_agent.daemon.loop import Event, book_words, serve
from novel_agent.daemon.reload import Reloader
from novel_agent.daemon.signals import signal_name
from novel_agent.models.base import Progress
from novel_agent.reports.costs import ceiling_hook, run_terms


def notify(signum: int, level: int) -> None:
    """Said at once when a stop signal comes (os.write: safe in a signal handler)."""
    name = signal_name(signum)
    text = (f"\n{name}: finishing the tick in flight, then stopping ({name} again stops now)\n"
            if level == 1 else f"\n{name} again: stopping at the next safe point\n")
    os.write(sys.stderr.fileno(), text.encode())


class Console:
    """Log lines, the progress bar and a local model's live line on one terminal: the
    live line takes the bar's place while a stage streams; a line clears either, then
    the bar is drawn again below it."""

    def __init__(self, bar=None, by_words: bool = False, live: LiveLine | None = None):
        self.bar, self.by_words = bar, by_words
        self.tty = sys.stdout.isatty()
        self.live = live or LiveLine(sys.stdout, enabled=False)

    def echo(self, line: str) -> None:
        self.live.clear()
        if self.bar is not None and self.tty:
            click.echo("\r\033[K", nl=False)
        click.echo(line)
        if self.bar is not None and self.tty:
            self.bar.render_progress()

    def advance(self, event: Event) -> None:
        if self.bar is not None and event.kind == "tick":
            self.bar.update(event.data.words if self.by_words else 1)


def progress(reloader: Reloader):
    """A progress bar with an ETA when the run is bounded (by ticks, else by words)."""
    d = reloader.config.daemon
    book = book_words(reloader.project) if d.stop_at_words else 0
    if d.max_ticks:
        label = f"writing {d.max_ticks} tick{'s' if d.max_ticks != 1 else ''}"
        return click.progressbar(length=d.max_ticks, label=label, show_eta=True), False
    if d.stop_at_words and d.stop_at_words > book:
        return click.progressbar(length=d.stop_at_words - book, label=f"writing to {d.stop_at_words:,} words",
                                 show_eta=True), True
    return contextlib.nullcontext(), False


class Seconds(click.ParamType):
    """--interval: a number of seconds between ticks, as daemon.interval takes it."""

    name = "seconds"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            return interval_seconds(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@click.command("run")
@project_option
@click.option("--ticks", type=click.IntRange(0, None), default=None, metavar="N",
              help="Stop after N ticks (daemon.max_ticks; 0 = no limit).")
@click.option("--until-words", type=click.IntRange(0, None), default=None, metavar="W",
              help="Stop once the book holds W words (daemon.stop_at_words).")
@click.option("--interval", type=Seconds(), default=None, metavar="S",
              help="Seconds between ticks, 0 to 604,800 (daemon.interval).")
@click.option("--max-failures", type=click.IntRange(1, None), default=None, metavar="K",
              help="Give up (exit 3) after K failed ticks in a row (daemon.max_failures).")
@click.option("--max-cost", type=click.FloatRange(0, None), default=None, metavar="D",
              help="Stop (exit 4) rather than start a tick that would take this run's "
                   "spending past D dollars (default on a priced model with no llm.max_cost: "
                   "$1; 0 = no ceiling; llm.max_cost bounds the project's).")
@wait_option
@click.option("-v", "--verbose", is_flag=True, help="Also show each stage of each tick.")
@click.option("-q", "--quiet", is_flag=True, help="Only warnings, errors and the last line.")
@model_options
@novel_errors
def run_cmd(project_spec, ticks, until_words, interval, max_failures, max_cost, wait, verbose,
            quiet, provider, model_flag, base_url) -> None:
    """Write scene after scene until a bound, Ctrl-C or `novel stop`; take edits live.

    Edits of project.yaml, the preset, configs/models.yaml, lore/, templates/ and
    steer.md take effect from the next tick. Ctrl-C (or SIGTERM) finishes the tick
    in flight and exits 0; a second one stops at once, nothing half-written. After
    --max-failures failed ticks in a row it exits 3; before a tick that would pass
    --max-cost (this run) or llm.max_cost (the project), it exits 4. On a model with a
    price and no ceiling set, a run stops before it spends $1 (--max-cost 0: no ceiling);
    the first line says the pace and the ceiling. A book with an outline is finished when
    its last beat lands: the run stops there and says so (exit 0).

    \b
    Example:
      novel run -p harbour                         # until Ctrl-C or `novel stop`
      novel run -p harbour --ticks 20 --interval 60
      novel run -p harbour --until-words 50000
      novel run -p harbour --max-cost 2.50
    """
    project = open_project(project_spec)
    layer = {"daemon.max_ticks": ticks, "daemon.stop_at_words": until_words,
             "daemon.interval": interval, "daemon.max_failures": max_failures,
             **flags(provider, model_flag, base_url)}
    reloader = Reloader(project, os.environ, layer)
    max_cost, terms = run_terms(reloader.config, max_cost)
    if not quiet:
        click.echo(terms)
    bar, by_words = (contextlib.nullcontext(), False) if quiet else progress(reloader)
    with bar as shown:
        console = Console(shown, by_words, LiveLine(sys.stdout, enabled=False if quiet else None))
        shared = ProgressFile(project, time.monotonic)      # for novel serve's live page
        log = open_log(project, console.echo, verbose=verbose, quiet=quiet)

        def on_progress(update: Progress) -> None:
            console.live.update(update)
            shared.update(update)

        try:
            summary = serve(project, reloader, os.environ, wait=wait, notify=notify,
                            on_event=lambda e: _report(log, console, e),
                            before_tick=[ceiling_hook(max_cost)], on_progress=on_progress)
            log.info(summary.line())
        finally:
            close_log(log)
    if quiet:
        click.echo(summary.line())
    sys.exit(summary.exit_code)


def _report(log, console: Console, event: Event) -> None:
    log.log(event.level, stage_line(event.data) if event.kind == "stage" else event.message)
    console.advance(event)
