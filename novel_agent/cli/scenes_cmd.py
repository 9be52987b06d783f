"""`novel scenes list|show`: read the scenes without changing them."""

from __future__ import annotations

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.errors import ProjectError
from novel_agent.story.scenes import load_scene, recorded_mends, scene_ticks


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
@click.option("--mends", is_flag=True,
              help="Also print each sentence the mend wrote again, before and after.")
@project_option
@novel_errors
def scenes_show(tick: int, mends: bool, project_spec: str | None) -> None:
    """Print one scene: its title, summary and prose (with --mends, the sentences the
    mend wrote again, from its plan record).

    \b
    Example:
      novel scenes show 3 -p harbour
      novel scenes show 3 --mends -p harbour
    """
    project = open_project(project_spec)
    path = project.scene_path(tick)
    if not path.is_file():
        count = len(scene_ticks(project.scenes_dir))
        raise ProjectError(f"no scene {tick} in {project.name} (it has {count} scenes)",
                           path=str(path))
    scene = load_scene(path)
    where = [f"scene {scene.tick}", *([f"pov {scene.pov}"] if scene.pov else []),
             *([f"at {scene.location}"] if scene.location else [])]
    click.echo(f"# {scene.title}  ({', '.join(where)})")
    click.echo(scene.summary_text())
    click.echo("")
    click.echo(scene.body)
    if mends:
        said = recorded_mends(project.plan_path(tick))
        click.echo("")
        click.echo(f"mends: {len(said)}" + ("" if said else " (no sentence was written again)"))
        for before, after in said:
            click.echo(f"  - {before}\n  + {after}")
