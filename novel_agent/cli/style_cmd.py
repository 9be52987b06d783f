"""`novel style learn|show`: the book's style (style.yaml), measured from a sample."""

from __future__ import annotations

from pathlib import Path

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.errors import ProjectError
from novel_agent.files import atomic_write, read_text
from novel_agent.story.style import (
    STYLE_FILE,
    kept_avoid,
    learned_text,
    read_samples,
    read_style,
    style_lines,
)
from novel_agent.yaml_comments import text_of

samples_argument = click.argument(
    "files", nargs=-1, required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path))


@click.group("style")
def style_group() -> None:
    """The book's style (style.yaml): learned from your sample, told to the writer."""


@style_group.command("learn")
@samples_argument
@click.option("--replace", is_flag=True,
              help="Measure again over an existing style.yaml (its avoid list, your "
                   "comments and its key order are kept).")
@project_option
@novel_errors
def style_learn(files: tuple[Path, ...], replace: bool, project_spec: str | None) -> None:
    """Measure a sample of your prose (FILES: .txt or .md) and write the project's
    style.yaml: person, tense, sentence and paragraph length, dialogue, punctuation,
    words to favour, and a passage for the writer. Edit it as you like.

    \b
    Example:
      novel style learn chapter1.md chapter2.md -p harbour
    """
    project = open_project(project_spec)
    path = project.root / STYLE_FILE
    if path.exists() and not replace:
        raise ProjectError(f"{path} exists: `novel style learn --replace` measures the "
                           "sample again over it (its avoid list is kept)", path=str(path))
    texts = read_samples(files)
    atomic_write(path, learned_text(texts, [f.name for f in files],
                                    kept_avoid(project.root) if replace else (),
                                    was=text_of(path) if replace else None))
    click.echo(f"wrote {path.relative_to(project.root.parent)} from {len(files)} "
               f"file{'s' if len(files) != 1 else ''}; the writer is told:")
    for line in style_lines(read_style(project.root) or {}):
        click.echo(f"  {line}")


@style_group.command("show")
@project_option
@novel_errors
def style_show(project_spec: str | None) -> None:
    """Print the project's style.yaml, then what the writer is told of it.

    \b
    Example:
      novel style show -p harbour
    """
    project = open_project(project_spec)
    style = read_style(project.root)
    if style is None:
        click.echo(f"no style yet: `novel style learn FILE…` measures one from your prose "
                   f"({project.root / STYLE_FILE})")
        return
    click.echo(read_text(project.root / STYLE_FILE).rstrip())
    click.echo("")
    click.echo("The writer is told:")
    for line in style_lines(style):
        click.echo(f"  {line}")
    if style.get("sample"):
        click.echo(f"  and the sample passage ({len(str(style['sample']).split())} words).")
