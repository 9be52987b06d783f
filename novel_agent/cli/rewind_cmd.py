"""`novel rewind`: the project back as it was after a tick, and `--undo`."""

from __future__ import annotations

import os

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.cli.tick import arm_test_crash
from novel_agent.revision.rewind import rewind, undo


@click.command("rewind")
@project_option
@click.argument("tick", type=click.IntRange(0, None), required=False)
@click.option("--undo", "undo_flag", is_flag=True,
              help="Bring back what the last rewind took away.")
@novel_errors
def rewind_cmd(project_spec: str | None, tick: int | None, undo_flag: bool) -> None:
    """Put the project back exactly as it was after tick TICK: scenes, plans, memory,
    summaries, lore, the note, state. What it takes away is kept (a tag named in the
    message) and `novel rewind --undo` brings it back. Refused while a daemon runs.

    \b
    Example:
      novel rewind 7 -p harbour
      novel rewind --undo -p harbour
    """
    if (tick is None) == (not undo_flag):
        raise click.UsageError("give a tick to rewind to, or --undo")
    arm_test_crash(os.environ.get("NOVEL_TEST_CRASH_AT"))
    project = open_project(project_spec)
    with project:
        moved = undo(project) if undo_flag else rewind(project, tick)
    click.echo(("undone: " if undo_flag else "rewound ") + moved.line())
