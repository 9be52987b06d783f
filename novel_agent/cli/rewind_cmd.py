"""`novel rewind` (the project back as it was after a tick, and `--undo`) and `novel redo`."""

from __future__ import annotations

import os

import click

from novel_agent.cli.common import (
    load_config,
    model_options,
    novel_errors,
    open_project,
    project_option,
    wait_option,
)
from novel_agent.cli.tick import arm_test_crash, stage_line
from novel_agent.history.hooks import opened
from novel_agent.history.rewind import rewind, undo
from novel_agent.tick.redo_tick import redo_tick


@click.command("rewind")
@project_option
@click.argument("tick", type=click.IntRange(0, None), required=False)
@click.option("--undo", "undo_flag", is_flag=True,
              help="Bring back what the last rewind took away.")
@wait_option
@novel_errors
def rewind_cmd(project_spec: str | None, tick: int | None, undo_flag: bool, wait: float) -> None:
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
    with opened(project, wait):
        moved = undo(project) if tick is None else rewind(project, tick)   # (None: --undo)
    click.echo(("undone: " if undo_flag else "rewound ") + moved.line())


@click.command("redo")
@project_option
@click.argument("tick", type=click.IntRange(1, None), required=False)
@click.option("--note", default="", metavar="TEXT",
              help="An author's note for the planner and the writer, for this tick only.")
@wait_option
@model_options
@novel_errors
def redo_cmd(project_spec: str | None, tick: int | None, note: str, wait: float,
             provider: str | None, model_flag: str | None, base_url: str | None) -> None:
    """Write tick TICK again (default: the last): rewind to TICK−1, then tick, with
    --note as a one-tick author's note. The old scene stays in the history (a tag
    named in the message; `novel rewind --undo` brings it back).

    \b
    Example:
      novel redo 12 --note "Mara keeps the key to herself." -p harbour
    """
    arm_test_crash(os.environ.get("NOVEL_TEST_CRASH_AT"))
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    with opened(project, wait):
        _, result = redo_tick(project, config, os.environ, tick or project.tick(), note,
                              on_rewound=lambda moved: click.echo(f"rewound {moved.line()}"),
                              on_stage=lambda r: click.echo(stage_line(r)))
    rel = result.scene_path.relative_to(project.root.parent)
    click.echo(f"  → {rel}  {result.words} words  \"{result.title}\"")
