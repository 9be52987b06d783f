"""`novel revise N`: scene N's new text, and the memory and summaries that follow it."""

from __future__ import annotations

import os
from pathlib import Path

import click

from novel_agent.cli.common import (load_config, model_options, novel_errors, open_project,
                                    project_option)
from novel_agent.cli.tick import arm_test_crash
from novel_agent.revision.revise import new_text, revise
from novel_agent.session import Session


@click.command("revise")
@project_option
@click.argument("tick", type=click.IntRange(1, None))
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The new text of the scene (else: the scene as edited by hand).")
@model_options
@novel_errors
def revise_cmd(project_spec: str | None, tick: int, file: Path | None, provider: str | None,
               model_flag: str | None, base_url: str | None) -> None:
    """Make memory follow scene TICK's new text: the extractor reads it again, what the
    scene added to memory is replaced, later ticks' recorded extractions are replayed on
    top, the summaries over it are remade, and later scenes that rely on what it no
    longer says are listed (not rewritten).

    \b
    Example:
      novel revise 5 -p harbour                    # after editing scenes/scene_005.md
      novel revise 5 --file new5.md -p harbour
    """
    arm_test_crash(os.environ.get("NOVEL_TEST_CRASH_AT"))
    text = new_text(file) if file is not None else None
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    with project, Session.open(project, config, os.environ) as session:
        result = revise(session, tick, text)
    for notice in result.notices:
        click.echo(f"note: {notice}")
    click.echo(f"revised scene {tick}: {len(result.lost)} things no longer said, "
               f"{len(result.gained)} new")
    for item in result.lost:
        click.echo(f"  no longer: {item}")
    for item in result.gained:
        click.echo(f"  now:       {item}")
    if result.summaries:
        click.echo(f"  remade: {', '.join(result.summaries)}")
    if result.skipped:
        click.echo(f"  kept (edited by hand): {', '.join(result.skipped)}")
    for reliance in result.relying:
        click.echo(f"  check: {reliance.line(tick)}")
