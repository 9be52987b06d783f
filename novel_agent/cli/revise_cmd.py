"""`novel revise N`: scene N's new text, and the memory and summaries that follow it."""

from __future__ import annotations

import os
from pathlib import Path

import click

import novel_agent.tick.pipeline as pipeline
from novel_agent.cli.common import (
    load_config,
    model_options,
    novel_errors,
    open_project,
    project_option,
    wait_option,
)
from novel_agent.cli.tick import arm_test_crash
from novel_agent.history.hooks import opened
from novel_agent.revision.revise import Revision, new_text, revise, take_away_after
from novel_agent.tick.session import Session


@click.command("revise")
@project_option
@click.argument("tick", type=click.IntRange(1, None))
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The new text of the scene (else: the scene as edited by hand).")
@click.option("--rewrite-after", is_flag=True,
              help="Then take the later scenes away (kept in the history) and write them "
                   "again from the revised scene.")
@wait_option
@model_options
@novel_errors
def revise_cmd(project_spec: str | None, tick: int, file: Path | None, rewrite_after: bool,
               wait: float, provider: str | None, model_flag: str | None,
               base_url: str | None) -> None:
    """Make memory follow scene TICK's new text: the extractor reads it again, what the
    scene added to memory is replaced, later ticks' recorded extractions are replayed on
    top, the summaries over it are remade, and later scenes that rely on what it no
    longer says are listed (not rewritten).

    \b
    Example:
      novel revise 5 -p harbour                    # after editing scenes/scene_005.md
      novel revise 5 --file new5.md -p harbour
      novel revise 5 --rewrite-after -p harbour    # and write 6.. again
    """
    arm_test_crash(os.environ.get("NOVEL_TEST_CRASH_AT"))
    text = new_text(file) if file is not None else None
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    with opened(project, wait):
        with Session.open(project, config, os.environ) as session:
            result = revise(session, tick, text)
            kept = take_away_after(session, result) if rewrite_after else ""
        report(result, tick)
        if kept:
            click.echo(f"ticks {tick + 1}–{result.last} taken away (kept as {kept}); "
                       "writing them again")
            with Session.open(project, config, os.environ) as session:
                for _ in range(result.last - tick):
                    done = pipeline.tick(session)
                    click.echo(f"  → scenes/{done.scene_path.name}  {done.words} words  "
                               f"\"{done.title}\"")


def report(result: Revision, tick: int) -> None:
    """What the revise did, one line each."""
    for notice in result.notices:
        click.echo(f"note: {notice}")
    if result.unchanged:
        click.echo(result.unchanged)
        return
    click.echo(f"revised scene {tick}: {len(result.lost)} changes to memory no longer made, "
               f"{len(result.gained)} new")
    for item in result.lost:
        click.echo(f"  no longer: {item}")
    for item in result.gained:
        click.echo(f"  now:       {item}")
    if result.changed:
        shown = ", ".join(path.removeprefix("memory/") for path in result.changed[:8])
        more = f" and {len(result.changed) - 8} more" if len(result.changed) > 8 else ""
        click.echo(f"  memory files changed: {shown}{more}")
    if result.summaries:
        click.echo(f"  remade: {', '.join(result.summaries)}")
    if result.skipped:
        click.echo(f"  kept (edited by hand): {', '.join(result.skipped)}")
    for reliance in result.relying:
        click.echo(f"  check: {reliance.line(tick)}")
    for act in result.acting:
        click.echo(f"  check: {act.line()}")
