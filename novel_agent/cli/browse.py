"""`novel status`, `novel scenes`, `novel inspect`: read a project without changing it."""

from __future__ import annotations


import click

from ..errors import ProjectError
from ..models import describe_provider
from ..scenes import load_scene, scene_ticks
from ..status import SummaryStatus, folder_tree, project_status, summary_status
from .common import load_config, novel_errors, open_project, project_option


@click.command("status")
@project_option
@novel_errors
def status_cmd(project_spec: str | None) -> None:
    """Show ticks, words, characters, open loops, the last scene, the model, and the
    summary tree (levels, ranges, tokens, compression) with what tier 3 takes from it.

    \b
    Example:
      novel status -p harbour
    """
    project = open_project(project_spec)
    config = load_config(project)
    s = project_status(project)
    summaries = summary_status(project, config)  # before printing: a broken file is one error
    click.echo(f"project     {s.name}  ({s.root})")
    click.echo(f"ticks       {s.tick}  ({s.scenes} scenes, {s.words:,} words)")
    click.echo(f"characters  {s.characters}    locations {s.locations}    facts {s.facts}")
    click.echo(f"loops       {s.open_loops} open, {s.resolved_loops} resolved")
    if s.last_scene:
        click.echo(f"last scene  {s.last_scene.tick}: \"{s.last_scene.title}\"  "
                   f"(pov {s.last_scene.pov}, at {s.last_scene.location})")
    click.echo(f"model       {describe_provider(config)}  (preset {config.preset})")
    for line in summary_lines(summaries):
        click.echo(line)


def summary_lines(s: SummaryStatus) -> list[str]:
    """The summary tree for `novel status`: one line per level, then tier 3 and what is owed."""
    lines = [] if s.levels else ["summaries   none yet"]
    for n, level in enumerate(s.levels):
        docs = f"{level.docs} doc{'s' if level.docs != 1 else ''}"
        lines.append(f"{'summaries' if n == 0 else '':<12}{level.label:<12} {docs:>8}  ticks "
                     f"{f'{level.first}–{level.last}':<9} {level.tokens:>7,} tokens  "
                     f"compression {level.compression:.1f}×")
    names = ", ".join(d.name if d.kind == "overall" else f"{d.name} ({d.first}–{d.last})"
                      for d in s.tier3)
    if s.levels:
        lines.append(f"tier 3      {s.tier3_tokens:,} of {s.budget:,} tokens: "
                     f"{names or 'nothing fits'}")
    if s.edited:
        lines.append(f"hand-edited {', '.join(s.edited)} (kept; novel summarize --rebuild remakes)")
    if s.pending:
        lines.append(f"pending     checkpoints at ticks {', '.join(map(str, s.pending))} "
                     "(novel summarize makes them)")
    return lines


@click.group("scenes")
def scenes_group() -> None:
    """List scenes or show one."""


@scenes_group.command("list")
@project_option
@novel_errors
def scenes_list(project_spec: str | None) -> None:
    """One line per scene: tick, words, POV, title.

    \b
    Example:
      novel scenes list -p harbour
    """
    project = open_project(project_spec)
    ticks = scene_ticks(project.scenes_dir)
    if not ticks:
        click.echo("no scenes yet: run `novel tick`")
    for tick in ticks:
        scene = load_scene(project.scene_path(tick))
        click.echo(f"{tick:>4}  {scene.words:>5} words  {scene.pov[:18]:<18}  {scene.title}")


@scenes_group.command("show")
@click.argument("tick", type=int)
@project_option
@novel_errors
def scenes_show(tick: int, project_spec: str | None) -> None:
    """Print one scene: its title, summary and prose.

    \b
    Example:
      novel scenes show 3 -p harbour
    """
    project = open_project(project_spec)
    path = project.scene_path(tick)
    if not path.is_file():
        raise ProjectError(f"no scene {tick} in {project.name} (it has "
                           f"{len(scene_ticks(project.scenes_dir))} scenes)")
    scene = load_scene(path)
    click.echo(f"# {scene.title}  (scene {scene.tick}, pov {scene.pov}, at {scene.location})")
    click.echo(scene.summary_text())
    click.echo("")
    click.echo(scene.body)


@click.command("inspect")
@project_option
@novel_errors
def inspect_cmd(project_spec: str | None) -> None:
    """Show the project's folder as a short tree with file counts.

    \b
    Example:
      novel inspect -p harbour
    """
    project = open_project(project_spec)
    for line in folder_tree(project.root):
        click.echo(line)
