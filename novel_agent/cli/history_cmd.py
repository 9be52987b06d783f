"""`novel log` and `novel diff`: the book's history, read."""

from __future__ import annotations

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.history.store import History, describe

STORY_PATHS = ("scenes", "memory", "summaries", "lore", "steer.md", "project.yaml")


@click.command("log")
@project_option
@click.option("-n", "count", type=click.IntRange(1, None), default=None,
              help="Show only the last N entries.")
@novel_errors
def log_cmd(project_spec: str | None, count: int | None) -> None:
    """List the history's entries, newest first: tick, what it was, words, what changed.

    Every landed tick, import piece, summary, revision and edit by hand is one entry
    (plain git reads them too: git --git-dir=.novel/history.git log).

    \b
    Example:
      novel log -p harbour -n 5
    """
    project = open_project(project_spec)
    for entry in History(project).entries(limit=count):
        words = f"  {entry.words} words" if entry.words is not None else ""
        click.echo(f"{entry.short}  tick {entry.tick:<4} {entry.subject}{words}  "
                   f"[{describe(entry.changed)}]")


@click.command("diff")
@project_option
@click.argument("a", type=click.IntRange(0, None))
@click.argument("b", type=click.IntRange(0, None))
@click.option("--stat", is_flag=True, help="Only the files changed and how much.")
@novel_errors
def diff_cmd(project_spec: str | None, a: int, b: int, stat: bool) -> None:
    """Show what changed in the story (scenes, memory, summaries, lore, the note) from
    after tick A to after tick B, as a unified diff.

    \b
    Example:
      novel diff 8 10 -p harbour --stat
    """
    project = open_project(project_spec)
    history = History(project)
    text = history.diff(history.entry_at(a).sha, history.entry_at(b).sha, STORY_PATHS, stat)
    click.echo(text.rstrip("\n") or f"no change in the story from tick {a} to tick {b}")
