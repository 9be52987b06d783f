"""`novel stop`: ask a running daemon to stop after its tick."""

from __future__ import annotations

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.daemon.heartbeat import stop_daemon


@click.command("stop")
@project_option
@novel_errors
def stop_cmd(project_spec: str | None) -> None:
    """Ask the project's `novel run` to finish its tick and stop (SIGTERM to the pid in
    .novel/daemon.json, once it is checked to be a novel process).

    \b
    Example:
      novel stop -p harbour
    """
    project = open_project(project_spec)
    pid = stop_daemon(project)
    click.echo(f"asked novel run (pid {pid}) on {project.name} to stop after its tick")
