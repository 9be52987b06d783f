"""`novel status`: where a project stands, and its summary tree."""

from __future__ import annotations

import click

from novel_agent.audit.held import read_held
from novel_agent.cli.common import load_config, novel_errors, open_project, project_option
from novel_agent.config.settings import Config
from novel_agent.daemon.heartbeat import read_heartbeat, status_lines
from novel_agent.errors import ConfigError
from novel_agent.history.store import status_line
from novel_agent.models import describe_provider
from novel_agent.reports.status import (
    SummaryStatus,
    outline_status,
    project_status,
    recall_status,
    steer_status,
    summary_status,
)


@click.command("status")
@project_option
@novel_errors
def status_cmd(project_spec: str | None) -> None:
    """Show ticks, words, characters, open loops, where the book stands against its
    outline (finished, with its counts, once its last beat has landed), the last scene,
    the model, the daemon (running or not, since, pace, last error), the author's note
    in force, the recall
    probe (the share of known facts about each scene that reached its writer), a tick
    held by the continuity audit with its findings, and the summary tree (levels,
    ranges, tokens, compression) with what tier 3 takes from it.

    \b
    Example:
      novel status -p harbour
    """
    project = open_project(project_spec)
    try:
        config, broken = load_config(project), None
    except ConfigError as exc:      # show what the files say, then the error
        config, broken = Config(), exc
    s = project_status(project, config.generation.loop_overdue_after)
    summaries = summary_status(project, config) if broken is None else None
    click.echo(f"project     {s.name}  ({s.root})")
    click.echo(f"ticks       {s.tick}  ({s.scenes} scenes, {s.words:,} words)")
    click.echo(f"branch      {status_line(project)}")
    click.echo(f"characters  {s.characters}    locations {s.locations}    facts {s.facts}")
    click.echo(f"loops       {s.open_loops} open, {s.resolved_loops} resolved")
    if broken is None and (book := outline_status(project, config.outline.curve)):
        click.echo(f"outline     {book}")
    if s.overdue:
        click.echo(f"overdue     {len(s.overdue)} open more than "
                   f"{config.generation.loop_overdue_after} ticks (the planner is asked to pay "
                   "them off):")
        for loop in s.overdue[:5]:
            click.echo(f"            [{loop.get('id')}] {str(loop.get('description'))[:70]} "
                       f"(since scene {loop.get('opened_in')})")
        if len(s.overdue) > 5:
            click.echo(f"            … and {len(s.overdue) - 5} more")
    if s.last_scene:
        last = s.last_scene
        where = ", ".join([*([f"pov {last.pov}"] if last.pov else []),
                           *([f"at {last.location}"] if last.location else [])])
        click.echo(f"last scene  {last.tick}: \"{last.title}\"" + (f"  ({where})" if where else ""))
    if broken is None:
        click.echo(f"model       {describe_provider(config)}  (preset {config.preset})")
    for line in status_lines(read_heartbeat(project)):
        click.echo(line)
    click.echo(f"steer       {steer_status(project)}")
    click.echo(f"recall      {recall_status(project.state())}")
    for line in held_lines(project):
        click.echo(line)
    if summaries is not None:
        for line in summary_lines(summaries):
            click.echo(line)
    if broken is not None:
        raise click.ClickException(f"{broken} (tick and run stop on it until it is fixed; "
                                   "the model and the summary tree are shown once it loads)")


def held_lines(project) -> list[str]:
    """A tick held by the continuity audit (audit.mode hold): its findings, for the author."""
    held = read_held(project.novel_dir)
    if held is None:
        return []
    data, findings = held
    lines = [f"held        tick {data.get('tick')} \"{data.get('title', '')}\" by the continuity "
             f"audit: {len(findings)} finding(s); the draft: {data.get('draft', '')} "
             "(`novel audit accept` lands it, `novel audit drop` discards it)"]
    lines += [f"            {f.line()}" for f in findings]
    return lines


def summary_lines(s: SummaryStatus) -> list[str]:
    """The summary tree for `novel status`: one line per level, then tier 3 and what is owed."""
    lines = [] if s.levels else ["summaries   none yet"]
    for n, level in enumerate(s.levels):
        docs = f"{level.docs} doc{'s' if level.docs != 1 else ''}"
        lines.append(f"{'summaries' if n == 0 else '':<12}{level.label:<12} {docs:>8}  ticks "
                     f"{f'{level.first}–{level.last}':<9} {level.tokens:>7,} tokens  "
                     f"compression {level.compression:.1f}×")
    names = ", ".join(d.name if d.kind == "overall" else f"{d.name} ({d.first}–{d.last})"
                      for d in s.tier3)
    if s.levels:
        lines.append(f"tier 3      {s.tier3_tokens:,} of {s.budget:,} tokens: "
                     f"{names or 'nothing fits'}")
    if s.edited:
        lines.append(f"hand-edited {', '.join(s.edited)} (kept; novel summarize --rebuild remakes)")
    if s.pending:
        lines.append(f"pending     checkpoints at ticks {', '.join(map(str, s.pending))} "
                     "(novel summarize makes them)")
    return lines
