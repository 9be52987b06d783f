"""`novel export`: the manuscript as one markdown, text, HTML, EPUB or Word (.docx) file."""

from __future__ import annotations

import click

from novel_agent.books.export import FORMATS, export
from novel_agent.cli.common import novel_errors, open_project, project_option


@click.command("export")
@project_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="md", show_default=True,
              help="The file to make.")
@click.option("-o", "--output", "out", type=click.Path(dir_okay=True), default=None,
              help="Where to write it (default: <project>/export/<name>.<format>).")
@click.option("--chapters", default="auto", show_default=True, metavar="SPEC",
              help="Chapter breaks: every:N scenes, checkpoints (the summaries' ranges), outline "
                   "(the outline's chapters, by their titles), auto (outline in a book with "
                   "one, else checkpoints) or none.")
@click.option("--range", "scene_range", default=None, metavar="A-B",
              help="Only scenes A to B (by tick).")
@novel_errors
def export_cmd(project_spec: str | None, fmt: str, out: str | None, chapters: str,
               scene_range: str | None) -> None:
    """Write the manuscript in scene order, with a title page and chapters. `docx` is a
    Word file in Standard Manuscript Format, to send to an agent or an editor.

    \b
    Example:
      novel export -p harbour --format epub
      novel export -p harbour --format docx
      novel export --format html --chapters every:5 --range 1-20 -o harbour.html
    """
    result = export(open_project(project_spec), fmt, out, chapters, scene_range)
    click.echo(f"wrote {result.path}")
    click.echo(f"{result.scenes} scenes, {result.words:,} words, {result.chapters} chapters")
