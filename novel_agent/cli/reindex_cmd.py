"""`novel reindex`: build `.novel/index.db` again from the project's files."""

from __future__ import annotations

import click

from novel_agent.cli.common import novel_errors, open_project, project_option, wait_option
from novel_agent.index.sync import rebuild


@click.command("reindex")
@project_option
@wait_option
@novel_errors
def reindex_cmd(project_spec: str | None, wait: float) -> None:
    """Build the index (search, token counts, usage) again from the files.

    The index is a cache: every command heals it on its own when it is missing,
    damaged or behind a hand edit. This rebuilds it from scratch: the search
    index from the scenes, memory, lore and summaries, the usage rows from
    .novel/usage.jsonl; token counts are made again as they are needed.

    \b
    Example:
      novel reindex -p harbour
    """
    project = open_project(project_spec)
    with project.locked(wait):
        report, restored = rebuild(project)
    click.echo(f"rebuilt {project.index_db.relative_to(project.root.parent)} in "
               f"{report.seconds:.1f}s: {report.totals() or 'no documents'}; "
               f"{restored:,} usage rows from usage.jsonl")
    for problem in report.skipped:
        click.echo(f"warning: not indexed: {problem}")
