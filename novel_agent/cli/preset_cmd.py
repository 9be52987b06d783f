"""`novel preset list|show|edit|validate|new`: the built-in presets and your own."""

from __future__ import annotations

import os
from pathlib import Path

import click

from novel_agent.cli.common import edit_until_valid, novel_errors
from novel_agent.config import presets
from novel_agent.config.layers import find_preset, user_presets_dir
from novel_agent.errors import ConfigError
from novel_agent.story.project.folder import projects_dir


def user_dir() -> Path:
    """$NOVEL_PRESETS_DIR, else presets/ in the projects folder."""
    return user_presets_dir(os.environ, projects_dir(Path.cwd(), os.environ))


@click.group("preset")
def preset_group() -> None:
    """The configuration presets: built in (configs/) and your own (projects/presets/, or
    $NOVEL_PRESETS_DIR), which `preset: NAME` in project.yaml finds.

    \b
    Example:
      novel preset list
      novel preset new slow --from conservative && novel preset edit slow
    """


@preset_group.command("list")
@novel_errors
def list_cmd() -> None:
    """List every preset: name, built in or yours, its file and its first comment.

    \b
    Example:
      novel preset list
    """
    for e in presets.entries(user_dir()):
        click.echo(f"{e.name:<16} {'built in' if e.builtin else 'yours':<9} {e.path}"
                   + (f"  ({e.about})" if e.about else ""))


@preset_group.command("show")
@click.argument("name")
@novel_errors
def show_cmd(name: str) -> None:
    """Print a preset's file.

    \b
    Example:
      novel preset show balanced
    """
    path = find_preset(name, user_dir=user_dir())
    click.echo(f"# {path}")
    click.echo(path.read_text(encoding="utf-8").rstrip())


@preset_group.command("new")
@click.argument("name")
@click.option("--from", "base", default="balanced", show_default=True,
              help="The preset to start from.")
@novel_errors
def new_cmd(name: str, base: str) -> None:
    """Make your own preset NAME as a copy of another.

    \b
    Example:
      novel preset new slow --from conservative
    """
    path = presets.create(name, base, user_dir())
    click.echo(f"made preset {name}: {path} (edit it with `novel preset edit {name}`)")


@preset_group.command("edit")
@click.argument("name")
@novel_errors
def edit_cmd(name: str) -> None:
    """Open one of your presets in $EDITOR; it is saved only once it validates (on an
    error you are asked to reopen it).

    \b
    Example:
      EDITOR=nano novel preset edit slow
    """
    path = presets.user_file(name, user_dir())
    if not path.is_file():
        raise ConfigError(f"no preset '{name}' of yours: make it with "
                          f"`novel preset new {name} --from balanced`", key="preset")
    if edit_until_valid(path, lambda text: presets.save(path, text), name) is not None:
        click.echo(f"saved {path}")


@preset_group.command("validate")
@click.argument("file", required=False)
def validate_cmd(file: str | None) -> None:
    """Check a preset file (a path or a name), or every preset: keys, types, ranges,
    with the file and line of each error.

    \b
    Example:
      novel preset validate
      novel preset validate projects/presets/slow.yaml
    """
    if file is None:
        paths = [e.path for e in presets.entries(user_dir())]
    else:
        try:
            paths = [Path(file) if Path(file).is_file() else find_preset(file, user_dir=user_dir())]
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None
    bad = 0
    for path in paths:
        try:
            presets.validate(path)
            click.echo(f"ok     {path}")
        except ConfigError as exc:
            bad += 1
            click.echo(f"error  {exc}")
    if bad:
        raise click.ClickException(f"{bad} of {len(paths)} presets do not validate")
