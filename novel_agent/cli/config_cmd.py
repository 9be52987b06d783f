"""`novel config show`: the configuration in force, and where each value came from."""

from __future__ import annotations

import json
import os

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.config.layers import merge_layers, sources
from novel_agent.config.settings import PROVIDER_KEYS, Config
from novel_agent.config.stages import names
from novel_agent.daemon.reload import flatten
from novel_agent.models import model_id, resolve_provider

# Where a key of llm.stages.<stage> falls back to when the stage leaves it out.
FALLBACK = {"window": "context.window"}


def source_label(key: str, source: tuple[str, int | None] | None, root) -> str:
    """A layer's name as `config show --sources` prints it: a file (and line), relative to
    the project when it is in it, the environment variable, or "built-in default"."""
    if source is None:
        return "built-in default"
    name, line = source
    if name == "environment":
        return f"environment (NOVEL_{key.replace('.', '_').upper()})"
    if name.startswith(str(root)):
        name = name[len(str(root)) + 1:]
    return f"{name}:{line}" if line else name


@click.group("config")
def config_group() -> None:
    """The merged configuration of a project.

    \b
    Example:
      novel config show -p harbour --sources
    """


@config_group.command("show")
@project_option
@click.option("--sources", "with_sources", is_flag=True,
              help="Say which layer set each value (preset, project.yaml, environment, ...).")
@novel_errors
def show_cmd(project_spec: str | None, with_sources: bool) -> None:
    """Print every setting in force: defaults < preset < project.yaml < environment.
    API keys are never shown: the configuration holds only the variable's name.

    \b
    Example:
      novel config show -p harbour
      novel config show --sources
    """
    project = open_project(project_spec)
    name, layers = project.config_layers(os.environ)
    config, origin = merge_layers(layers, preset=name), sources(layers)
    for key, value in flatten(config).items():
        line = f"{key} = {json.dumps(value)}"
        if with_sources:
            where = ("project.yaml" if project.story_data().get("preset") else "built-in default"
                     ) if key == "preset" else source_label(key, origin.get(key), project.root)
            line = f"{line:<52} {where}"
        click.echo(line)
    if with_sources:
        for stage in names(own_model=True):
            for key, value, where in stage_sources(config, stage, origin, project.root):
                click.echo(f"{f'llm.stages.{stage}.{key} = {json.dumps(value)}':<52} {where}")


def stage_sources(config: Config, stage: str, origin: dict, root) -> list[tuple[str, object, str]]:
    """What `stage` uses: its provider (auto resolved), model and base URL, and every other
    key its llm.stages entry sets, each with where it came from (the stage's own line, or
    the llm key it falls back to and that key's source)."""
    mine, own = config.for_stage(stage), config.llm.stage_keys(stage)
    values = {"provider": resolve_provider(mine), "model": model_id(mine),
              "base_url": mine.llm.base_url, **own}
    out = []
    for key, value in values.items():
        if key in own:
            dotted = f"llm.stages.{stage}.{key}"
            where = source_label(dotted, origin.get(dotted), root)
        elif key in PROVIDER_KEYS and config.other_provider(stage):
            where = f"the {values['provider']} provider's default (not llm's: another provider)"
        else:
            dotted = FALLBACK.get(key, f"llm.{key}")
            shown = source_label(dotted, origin.get(dotted), root)
            where = f"{dotted} ({shown})"
        out.append((key, value, where))
    return out
