"""`novel inspect`: the project folder as a short tree."""

from __future__ import annotations

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.reports.status import folder_tree


@click.command("inspect")
@project_option
@novel_errors
def inspect_cmd(project_spec: str | None) -> None:
    """Show the project's folder as a short tree with file counts.

    \b
    Example:
      novel inspect -p harbour
    """
    project = open_project(project_spec)
    for line in folder_tree(project.root):
        click.echo(line)
