"""`novel import`: bring an existing manuscript into a project, to continue it."""

from __future__ import annotations

import os
import sys

import click

from novel_agent.books.importer import ImportProgress, ImportResult, import_manuscript, load_manuscript
from novel_agent.books.split import MODES
from novel_agent.cli.common import load_config, model_options, novel_errors, open_project, project_option, wait_option
from novel_agent.cli.live import LiveLine
from novel_agent.tick.session import Session


def result_lines(result: ImportResult, project_name: str) -> list[str]:
    """What an import did, and what to run next."""
    if not result.ticks:
        return [f"nothing to import: all {result.total} pieces are already imported"]
    lines = [f"imported {len(result.ticks)} scenes as ticks {result.ticks[0]}–{result.ticks[-1]}"
             f" ({result.words:,} words)" + (f", after {result.skipped} imported before"
                                              if result.skipped else "")]
    lines.append(f"memory: {result.characters} characters; summaries made: "
                 f"{', '.join(result.checkpoints) or 'none'}")
    lines += [f"warning: {w}" for w in result.warnings]
    lines.append(f"Next: novel tick -p {project_name}")
    return lines


@click.command("import")
@click.argument("source", type=click.Path(path_type=str))
@project_option
@click.option("--split", type=click.Choice(MODES), default="auto", show_default=True,
              help="Cut at chapter headings (chapters), also at scene breaks (scenes), "
                   "or at both and by length near scene_max_words (auto).")
@click.option("--no-extract", is_flag=True,
              help="Import the text only: no model call, titles as summaries.")
@wait_option
@model_options
@novel_errors
def import_cmd(source: str, project_spec: str | None, split: str, no_extract: bool, wait: float,
               provider: str | None, model_flag: str | None, base_url: str | None) -> None:
    """Import a manuscript (a .md/.txt file or a folder of them) as the next scenes, then
    read each with the extractor and make the summaries, so `novel tick` continues it.
    Run again after an interruption: it resumes where it stopped.

    \b
    Example:
      novel import draft.md -p harbour
      novel import chapters/ -p harbour --split chapters --no-extract
      novel import draft.md -p harbour --wait 600   # once the running daemon lets go
    """
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    manuscript = load_manuscript(source, split, config.generation.scene_max_words)
    seen: list[ImportProgress] = []
    live = LiveLine(sys.stderr)        # a local model's progress, in the bar's place

    def advance(progress: ImportProgress) -> None:
        seen.append(progress)
        live.clear()
        bar.update(progress.done - bar.pos)

    try:
        with project.locked(wait), \
                Session.open(project, config, os.environ, stand_in=no_extract,
                             on_progress=live.update) as session, \
                click.progressbar(length=len(manuscript.pieces), label="importing",
                                  file=sys.stderr) as bar:
            result = import_manuscript(session, manuscript, extract=not no_extract,
                                       on_progress=advance)
    except KeyboardInterrupt:
        live.clear()
        click.echo(interrupted_line(seen, len(manuscript.pieces)), err=True)
        raise SystemExit(130) from None
    live.clear()
    for line in result_lines(result, project.name):
        click.echo(line)


def interrupted_line(seen: list[ImportProgress], total: int) -> str:
    """What Ctrl-C left: the pieces imported (each committed whole), and how to go on."""
    if not seen:
        return "interrupted before the import began; run the same novel import again"
    return (f"interrupted: {seen[-1].done} of {total} pieces are imported ({len(seen) - 1} in "
            "this run); run the same novel import again to resume")
