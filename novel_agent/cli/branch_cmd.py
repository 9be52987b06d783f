"""`novel branch list|new|switch|delete`: alternate continuations of one book."""

from __future__ import annotations

import os

import click

from novel_agent.cli.common import novel_errors, open_project, project_option, wait_option
from novel_agent.cli.tick import arm_test_crash
from novel_agent.history import branches
from novel_agent.history.hooks import opened


@click.group("branch")
def branch_group() -> None:
    """Alternate continuations of one book ("what if" from scene 40), each with its own
    scenes, memory and summaries. `novel status` shows the branch the project is on.

    \b
    Example:
      novel branch new darker --at 40 -p harbour
      novel tick -n 5 -p harbour
      novel branch switch main -p harbour
    """


@branch_group.command("list")
@project_option
@novel_errors
def list_cmd(project_spec: str | None) -> None:
    """List the branches, the current one marked with *, each with its last tick.

    \b
    Example:
      novel branch list -p harbour
    """
    project = open_project(project_spec)
    for b in branches.branches(project):
        click.echo(f"{'*' if b.current else ' '} {b.name:<20} tick {b.head.tick:<5} "
                   f"{b.head.subject}")


@branch_group.command("new")
@project_option
@click.argument("name")
@click.option("--at", "at", type=click.IntRange(0, None), default=None, metavar="N",
              help="Start from the project as it was after tick N (default: as it is).")
@wait_option
@novel_errors
def new_cmd(project_spec: str | None, name: str, at: int | None, wait: float) -> None:
    """Make branch NAME (from after tick N with --at) and switch to it.

    \b
    Example:
      novel branch new darker --at 20 -p harbour
    """
    arm_test_crash(os.environ.get("NOVEL_TEST_CRASH_AT"))
    project = open_project(project_spec)
    with opened(project, wait):
        made, _ = branches.new(project, name, at)
    click.echo(f"on new branch {made.name}, at tick {made.head.tick}")


@branch_group.command("switch")
@project_option
@click.argument("name")
@wait_option
@novel_errors
def switch_cmd(project_spec: str | None, name: str, wait: float) -> None:
    """Put the project on branch NAME: its scenes, memory, summaries and state.

    \b
    Example:
      novel branch switch main -p harbour
    """
    arm_test_crash(os.environ.get("NOVEL_TEST_CRASH_AT"))
    project = open_project(project_spec)
    with opened(project, wait):
        now_on, changed = branches.switch(project, name)
    click.echo(f"on branch {now_on.name}, at tick {now_on.head.tick} "
               f"({len(changed)} files changed)")


@branch_group.command("delete")
@project_option
@click.argument("name")
@wait_option
@novel_errors
def delete_cmd(project_spec: str | None, name: str, wait: float) -> None:
    """Delete branch NAME (not the one the project is on); it is kept as a tag.

    \b
    Example:
      novel branch delete darker -p harbour
    """
    project = open_project(project_spec)
    with opened(project, wait):
        tag = branches.delete(project, name)
    click.echo(f"deleted branch {name}; its entries are kept as the tag {tag}")
