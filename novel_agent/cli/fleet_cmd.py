"""`novel fleet run|status|stop`: many books from one process."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path

import click

from novel_agent.cli.common import flags, model_options, novel_errors
from novel_agent.cli.worker_cmd import leave_after, temporal_module
from novel_agent.errors import ProjectError
from novel_agent.fleet.scheduler import Fleet, FleetEvent, FleetOptions, fleet_projects, serve
from novel_agent.fleet.view import FleetState, lines, read_state, status_lines, stop_fleet
from novel_agent.story.project.folder import find_project, projects_dir

dir_option = click.option(
    "--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="The folder the fleet runs from (its --all DIR; default: the projects folder).")


@click.group("fleet")
def fleet_group() -> None:
    """Run many books from one process: one tick in flight per book, a shared limit.

    \b
    Example:
      novel new --premises premises.yaml
      novel fleet run --all projects --concurrency 16 --ticks 50
      novel fleet status
    """


@fleet_group.command("run")
@click.argument("projects", nargs=-1)
@click.option("--all", "all_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR", help="Run every project under DIR.")
@click.option("--concurrency", type=click.IntRange(1, None), default=4, show_default=True,
              metavar="N", help="Requests in flight in all (a book has one tick in flight).")
@click.option("--ticks", type=click.IntRange(0, None), default=0, metavar="N",
              help="Bring every book to N ticks (a rerun after a crash finishes the same job).")
@click.option("--until-words", type=click.IntRange(0, None), default=0, metavar="W",
              help="Bring every book to W words.")
@click.option("--max-cost", type=click.FloatRange(0, None), default=0.0, metavar="D",
              help="Start no tick that would take the fleet's spending this run past D dollars.")
@click.option("--book-max-cost", type=click.FloatRange(0, None), default=0.0, metavar="D",
              help="The same for each book (llm.max_cost still bounds each project's total).")
@click.option("--max-failures", type=click.IntRange(1, None), default=3, show_default=True,
              metavar="K", help="Park a book after K failed ticks in a row; the others go on.")
@click.option("-q", "--quiet", is_flag=True, help="Only failures and the final view.")
@click.option("--temporal", "address", default=None, metavar="ADDRESS",
              help="Submit the books to a Temporal server instead (host:port; run "
                   "`novel worker --temporal ADDRESS` where the projects are).")
@click.option("--heartbeat", type=click.FloatRange(1, None), default=60.0, show_default=True,
              metavar="S", help="With --temporal: a tick whose worker is silent S seconds "
                                "goes to another worker.")
@model_options
@novel_errors
def fleet_run_cmd(projects, all_dir, concurrency, ticks, until_words, max_cost, book_max_cost,
                  max_failures, quiet, address, heartbeat, provider, model_flag,
                  base_url) -> None:
    """Write many books at once until their bounds, Ctrl-C or `novel fleet stop`.

    Each book takes its project lock (a book `novel run` holds is left alone) and
    ticks strictly in order; at most --concurrency requests are in flight in all,
    and a 429 slows the whole fleet once. Ctrl-C (or SIGTERM) finishes the ticks in
    flight and exits 0. It exits 3 if a book was parked (failed --max-failures ticks in
    a row, or could not open), else 4 if a cost ceiling stopped one. On a terminal the
    view is redrawn live; else a line per tick, then the view.

    \b
    Example:
      novel fleet run --all projects --concurrency 16 --ticks 50
      novel fleet run saga-1 saga-2 --until-words 60000 --max-cost 5
      novel fleet run --all /shared/books --ticks 50 --temporal temporal.example:7233
    """
    if projects and all_dir:
        raise click.UsageError("name projects or give --all DIR, not both")
    folder = all_dir or projects_dir(Path.cwd(), os.environ)
    found = ([find_project(p, Path.cwd(), os.environ) for p in projects] if projects
             else fleet_projects(folder))
    if not found:
        raise ProjectError(f"no projects under {folder}: create some with `novel new "
                           "--premises FILE`", path=str(folder))
    if address:
        if max_cost or book_max_cost or provider or model_flag or base_url:
            raise click.UsageError("--max-cost, --book-max-cost and the model options are "
                                   "the single-machine fleet's; with --temporal the workers "
                                   "read each project's own configuration")
        return _submit(address, found, ticks, until_words, heartbeat, max_failures)
    options = FleetOptions(concurrency=concurrency, ticks=ticks, until_words=until_words,
                           max_cost=max_cost, book_max_cost=book_max_cost,
                           max_failures=max_failures)
    view = View(quiet)
    fleet = Fleet(found, options, os.environ, folder=folder,
                  flags=flags(provider, model_flag, base_url),
                  on_event=view.event, on_view=view.redraw)
    state = serve(fleet)
    view.done(state)
    ended = {b.state for b in state.books}
    sys.exit(3 if "parked" in ended else 4 if "ceiling" in ended else 0)


def _submit(address: str, found: list, ticks: int, until_words: int, heartbeat: float,
            max_failures: int) -> None:
    """`--temporal`: a workflow per book; wait for them and say what each landed."""
    if not ticks and not until_words:
        raise click.UsageError("--temporal needs a bound: --ticks N or --until-words W")
    temporal = temporal_module()
    jobs = [temporal.BookJob(str(p.root.resolve()), ticks=ticks, until_words=until_words,
                             heartbeat_timeout=heartbeat, max_attempts=max_failures + 2)
            for p in found]
    click.echo(f"submitted {len(jobs)} book{'s' if len(jobs) != 1 else ''} to {address}; "
               "waiting for their workflows")
    def work() -> int:
        results = asyncio.run(temporal.submit(address, jobs))
        failed = 0
        for project, job in zip(found, jobs):
            landed = results[job.root]
            if isinstance(landed, str):
                failed += 1
                click.echo(f"{project.name}: failed: {landed}")
            else:
                ticks_line = ", ".join(map(str, landed)) if landed else "none (already there)"
                click.echo(f"{project.name}: ticks landed: {ticks_line}")
        if failed:
            raise ProjectError(f"{failed} of {len(jobs)} books failed")
        return 0

    leave_after(address, work)


class View:
    """The live view: redrawn in place on a terminal; else a line per event."""

    def __init__(self, quiet: bool):
        self.quiet, self.tty = quiet, sys.stdout.isatty() and not quiet
        self.drawn = 0
        self.lock = threading.Lock()

    def event(self, event: FleetEvent) -> None:
        if self.tty or (self.quiet and event.kind in ("tick", "done", "stopping")):
            return
        with self.lock:
            click.echo(f"{event.book}: {event.message}" if event.book else event.message)

    def redraw(self, state: FleetState) -> None:
        if not self.tty:
            return
        with self.lock:
            shown = lines(state)
            up = f"\033[{self.drawn}F" if self.drawn else ""
            click.echo(up + "".join(f"\033[2K{line}\n" for line in shown), nl=False,
                       color=True)
            self.drawn = len(shown)

    def done(self, state: FleetState) -> None:
        if self.tty:
            self.redraw(state)
            return
        for line in lines(state):
            click.echo(line)


@fleet_group.command("status")
@dir_option
@novel_errors
def fleet_status_cmd(folder: Path | None) -> None:
    """Show the fleet running (or last run) from a folder: a line per book, the totals.

    \b
    Example:
      novel fleet status
      novel fleet status --dir /shared/books
    """
    folder = folder or projects_dir(Path.cwd(), os.environ)
    for line in status_lines(read_state(folder), folder):
        click.echo(line)


@fleet_group.command("stop")
@dir_option
@novel_errors
def fleet_stop_cmd(folder: Path | None) -> None:
    """Ask the fleet running from a folder to finish its ticks in flight and stop.

    \b
    Example:
      novel fleet stop
    """
    folder = folder or projects_dir(Path.cwd(), os.environ)
    pid = stop_fleet(folder)
    click.echo(f"asked novel fleet (pid {pid}) to finish its ticks in flight and stop")
