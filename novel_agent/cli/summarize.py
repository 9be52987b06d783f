"""`novel summarize`: make checkpoint, arc and overall summaries on demand."""

from __future__ import annotations

import sys

import click

from novel_agent.cli.common import (
    load_config,
    model_options,
    novel_errors,
    open_project,
    project_option,
    wait_option,
    working_session,
)
from novel_agent.cli.live import LiveLine
from novel_agent.history.hooks import after_summaries
from novel_agent.tick.stages.summarize import SummaryReport, summarize_project


def report_lines(report: SummaryReport) -> list[str]:
    """What a summarize step made, kept, warned about and still owes."""
    lines = []
    for doc in report.made:
        line = (f"{doc.name:<16} ticks {f'{doc.first}–{doc.last}':<9} "
                f"{doc.meta.get('tokens', 0):>6} tokens")
        if "coverage" in doc.meta:
            line += f"  coverage {doc.meta['coverage']:.0%}"
        if doc.covers:
            line += f"  covers {', '.join(doc.covers)}"
        lines.append(line)
    lines += [f"kept {name}: edited by hand (--rebuild overwrites it)" for name in report.skipped]
    lines += [f"warning: {w}" for w in report.warnings]
    if report.pending:
        lines.append("pending: checkpoints at ticks " + ", ".join(map(str, report.pending)))
    if not lines:
        lines.append("nothing to summarize: every checkpoint owed is made")
    return lines


@click.command("summarize")
@project_option
@click.option("--checkpoint", type=click.IntRange(1, None), default=None, metavar="T",
              help="Make (or remake) the checkpoint that ends at tick T.")
@click.option("--pending", is_flag=True, help="Make the checkpoints owed (the default).")
@click.option("--rebuild", is_flag=True,
              help="Remake every checkpoint, arc and the overall summary, hand edits included.")
@wait_option
@model_options
@novel_errors
def summarize_cmd(project_spec: str | None, checkpoint: int | None, pending: bool, rebuild: bool,
                  wait: float, provider: str | None, model_flag: str | None,
                  base_url: str | None) -> None:
    """Make checkpoint, arc and overall summaries now (ticks make them on their own).

    \b
    Example:
      novel summarize -p harbour                 # the checkpoints still owed
      novel summarize -p harbour --checkpoint 20 # remake checkpoint_020
      novel summarize -p harbour --rebuild       # remake all, hand edits too
      novel summarize -p harbour --wait 600      # once the running daemon lets go
    """
    if (checkpoint is not None) + pending + rebuild > 1:
        raise click.UsageError("give one of --checkpoint T, --pending, --rebuild")
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    live = LiveLine(sys.stdout)
    with working_session(project, config, wait, live) as session:
        try:
            report = summarize_project(session, checkpoint=checkpoint, rebuild=rebuild)
        finally:
            live.clear()
        after_summaries(project, report.made, now=session.now)   # the history's entry
    for line in report_lines(report):
        click.echo(line)
    if report.failure is not None:
        raise report.failure
