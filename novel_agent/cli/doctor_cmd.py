"""`novel doctor`: check a project and list every problem with its fix."""

from __future__ import annotations

import os
from pathlib import Path

import click

from novel_agent.cli.common import novel_errors, project_option, wait_option
from novel_agent.reports.doctor import diagnose, find_for_doctor, fix


@click.command("doctor")
@project_option
@click.option("--fix", "apply", is_flag=True, help="Apply the safe fixes, then check again.")
@wait_option
@novel_errors
def doctor_cmd(project_spec: str | None, apply: bool, wait: float) -> None:
    """Check a project: tick counter vs scenes, gaps, duplicates, front matter, stray
    files in scenes/, memory, ids, lore, summaries, index, temp files, links, steer.md,
    style.yaml, the outline, front matter, whether it can be written. Exit 0 when
    clean (notes alone, such as a stale lock, leave it clean), 1 otherwise.

    \b
    Example:
      novel doctor -p harbour
      novel doctor -p harbour --fix
    """
    project = find_for_doctor(project_spec, Path.cwd(), os.environ)
    problems = diagnose(project)
    if apply:
        fixed, problems = fix(project, wait)
        for problem in fixed:
            click.echo(f"fixed    {problem.what}: {problem.done}")
    notes = [problem for problem in problems if problem.note]
    problems = [problem for problem in problems if not problem.note]
    for problem in problems:
        tag = "problem " if problem.safe or not apply else "left    "
        click.echo(f"{tag} {problem.what}\n         fix: {problem.fix}"
                   + (" (--fix does it)" if problem.safe and not apply else ""))
    for note in notes:
        click.echo(f"note     {note.what}: {note.fix}")
    if problems:
        raise SystemExit(1)
    click.echo(f"{project.name}: clean" + (f" ({len(notes)} note{'s' if len(notes) > 1 else ''})"
                                           if notes else ""))
