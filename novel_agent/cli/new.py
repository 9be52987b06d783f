"""`novel new`: create a story project."""

from __future__ import annotations

import os
from pathlib import Path

import click

from novel_agent.cli.common import ProviderName, novel_errors
from novel_agent.config.layers import load_config, user_presets_dir
from novel_agent.errors import ConfigError
from novel_agent.files import read_yaml, yaml_line
from novel_agent.fleet.premises import create_books, read_premises
from novel_agent.models import missing_key
from novel_agent.story.project.folder import (
    NAME_RE,
    check_story_lengths,
    create_project,
    projects_dir,
    remember_project,
)
from novel_agent.story.style import STYLE_FILE, learned_text, read_samples

MAX_NAME = 100   # a folder name every file system takes, with room for the path under it
FOUNDATION_KEYS = ("title", "premise", "genre", "tone", "setting", "protagonist", "style_guide")


def read_foundation(path: Path) -> dict[str, str]:
    """A foundation file: premise, genre, tone, setting, protagonist (and title, style_guide)."""
    data = read_yaml(path, None)
    if data is None:
        raise ConfigError("file is missing or empty", file=str(path))
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping of premise, genre, tone, setting, protagonist",
                          file=str(path), line=1)
    unknown = [k for k in data if k not in FOUNDATION_KEYS]
    if unknown:
        raise ConfigError(f"unknown key '{unknown[0]}' (expected: {', '.join(FOUNDATION_KEYS)})",
                          file=str(path), key=str(unknown[0]))
    if not str(data.get("premise") or "").strip():
        raise ConfigError("a foundation needs a 'premise'", file=str(path), key="premise")
    check_story_lengths(data, str(path), lambda key: yaml_line(path, key))
    return {k: str(v).strip() for k, v in data.items() if v is not None}


@click.command("new")
@click.argument("name", required=False)
@click.option("--preset", default="balanced", show_default=True,
              help="Configuration preset: built in (conservative, balanced, aggressive) or your own "
                   "(novel preset list).")
@click.option("--premise", default=None, help="One or two sentences: what the book is about.")
@click.option("--foundation", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A YAML file with premise, genre, tone, setting, protagonist.")
@click.option("--model", default=None, help="Model name to write into project.yaml (llm.model).")
@click.option("--provider", default=None, type=ProviderName(),
              help="Which model answers (llm.provider); default: auto.")
@click.option("--premises", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Many projects at once: a YAML list or a JSONL file, one foundation "
                   "(with an optional name, preset, provider, model) per entry.")
@click.option("--style-sample", "samples", multiple=True, metavar="FILE",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A sample of your prose to learn the book's style from (style.yaml; "
                   "repeat for more files).")
@novel_errors
def new_cmd(name: str | None, preset: str, premise: str | None, foundation: Path | None,
            model: str | None, provider: str | None, premises: Path | None,
            samples: tuple[Path, ...]) -> None:
    """Create a new story project under ./projects (or $NOVEL_PROJECTS_DIR).

    \b
    Example:
      novel new harbour --premise "A lighthouse keeper finds a drowned man's map."
      novel new saga --foundation saga.yaml --preset aggressive
      novel new quay --premise "A ferryman keeps a ledger." --style-sample mine.md
      novel new --premises premises.yaml --provider openai    # one project per entry
    """
    if premises:
        if samples:
            raise click.UsageError("--style-sample learns one book's style: give it with NAME, "
                                   "not --premises")
        return _new_books(premises, name, premise, foundation, preset, model, provider)
    if name is None:
        raise click.UsageError("give the project a NAME (or --premises FILE for many)")
    if premise and foundation:
        raise click.UsageError("give --premise or --foundation, not both")
    if not NAME_RE.match(name) or len(name) > MAX_NAME:
        raise click.BadParameter(f"use up to {MAX_NAME} letters, digits, '.', '_' or '-'",
                                 param_hint="NAME")
    if name == "presets":
        raise click.BadParameter("'presets' is the folder of your own presets", param_hint="NAME")
    folder = projects_dir(Path.cwd(), os.environ)
    # an unknown or invalid preset fails before anything is written
    load_config(preset=preset, user_presets=user_presets_dir(os.environ, folder))
    story = read_foundation(foundation) if foundation else {}
    if premise:
        story["premise"] = premise.strip()
        check_story_lengths({"premise": story["premise"]}, "the command line")
    story.setdefault("premise", "An unnamed story, waiting for its first scene.")
    llm = {k: v for k, v in (("provider", provider), ("model", model)) if v}
    root = folder / name
    style = {STYLE_FILE: learned_text(read_samples(samples), [s.name for s in samples])} \
        if samples else None
    project = create_project(root, {"name": name, **story, "preset": preset},
                             config={"llm": llm} if llm else None, files=style)
    remember_project(project, folder)
    click.echo(f"Created project '{name}' at {project.root} (preset {preset}).")
    if style:
        click.echo(f"Learned its style from {', '.join(s.name for s in samples)}: "
                   f"{STYLE_FILE} (novel style show).")
    missing = missing_key(project.config(env=os.environ), os.environ)
    if missing:
        click.echo(f"Before the first tick: {missing}")
    click.echo(f"Next: novel tick -p {name}")


def _new_books(path: Path, name: str | None, premise: str | None, foundation: Path | None,
               preset: str, model: str | None, provider: str | None) -> None:
    """`novel new --premises FILE`: a project per entry, all checked before any is made."""
    if name or premise or foundation:
        raise click.UsageError("--premises makes many projects: give no NAME, --premise or "
                               "--foundation with it")
    folder = projects_dir(Path.cwd(), os.environ)
    check = lambda p: load_config(preset=p, user_presets=user_presets_dir(os.environ, folder))  # noqa: E731
    llm = {k: v for k, v in (("provider", provider), ("model", model)) if v}
    made = create_books(folder, read_premises(path), preset=preset, llm=llm,
                        check_preset=check, source=path)
    click.echo(f"Created {len(made)} project{'s' if len(made) != 1 else ''} under {folder}: "
               f"{', '.join(p.name for p in made)}.")
    click.echo(f"Next: novel fleet run --all {folder}")
