"""Many projects from one file of premises (`novel new --premises FILE`).

The file is YAML (a list of entries) or JSONL (one JSON object a line, by the
`.jsonl` suffix). Each entry is one book's foundation, as `novel new
--foundation` takes it (premise required; title, genre, tone, setting,
protagonist, style_guide), plus optionally its `name` (else made from the title,
else `<file stem>-NNN`), `preset`, `provider` and `model`:

    - name: lighthouse
      premise: A lighthouse keeper finds a drowned man's map.
      genre: mystery
    - title: The Salt Road
      premise: Two smugglers carry a letter neither can read.

Every entry is checked, and every folder it would make, before the first project
is made: a bad entry is an error naming the file, the line and the key, and no
project is created.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from novel_agent.config.providers import is_provider, provider_names
from novel_agent.errors import ConfigError
from novel_agent.files import compose_yaml, load_yaml
from novel_agent.story.project.folder import NAME_RE, PROJECT_FILE, Project, create_project, too_long

FOUNDATION_KEYS = ("title", "premise", "genre", "tone", "setting", "protagonist", "style_guide")
ENTRY_KEYS = ("name", *FOUNDATION_KEYS, "preset", "provider", "model")
MAX_NAME = 100


@dataclass
class Premise:
    """One entry: the project's name, its foundation, preset and model choice."""

    name: str
    story: dict[str, str]
    line: int
    preset: str = ""
    llm: dict[str, str] = field(default_factory=dict)


def read_premises(path: Path) -> list[Premise]:
    """The entries of a premises file, checked (ConfigError naming file, line and key)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the premises file: {exc.strerror or exc}",
                          file=str(path)) from None
    raw = _jsonl(path, text) if path.suffix.lower() == ".jsonl" else _yaml(path, text)
    if not raw:
        raise ConfigError("no premises in the file", file=str(path))
    premises = [_entry(path, data, line, n) for n, (data, line) in enumerate(raw, 1)]
    seen: dict[str, int] = {}
    for p in premises:
        if p.name in seen:
            raise ConfigError(f"name '{p.name}' is used twice (lines {seen[p.name]} and "
                              f"{p.line})", file=str(path), line=p.line, key="name")
        seen[p.name] = p.line
    return premises


def create_books(folder: Path, premises: list[Premise], *, preset: str,
                 llm: dict[str, str], check_preset: Callable[[str], object],
                 source: Path) -> list[Project]:
    """Make a project per entry under `folder` (the entry's preset and model over
    `preset` and `llm`), after checking every preset (`check_preset` raises at one it
    cannot load; what it returns is not used) and that no folder is taken."""
    for p in premises:
        check_preset(p.preset or preset)
        root = Path(folder) / p.name
        if (root / PROJECT_FILE).exists() or (root.exists() and any(root.iterdir())):
            raise ConfigError(f"a project '{p.name}' already exists at {root}",
                              file=str(source), line=p.line, key="name")
    made = []
    for p in premises:
        chosen = {**llm, **p.llm}
        made.append(create_project(Path(folder) / p.name,
                                   {"name": p.name, **p.story, "preset": p.preset or preset},
                                   config={"llm": chosen} if chosen else None))
    return made


def slug(text: str) -> str:
    """A project name made of a title: lower case, words joined by '-'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-")


def _jsonl(path: Path, text: str) -> list[tuple[Any, int]]:
    entries = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entries.append((json.loads(line), n))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"not JSON: {exc.msg}", file=str(path), line=n) from None
    return entries


def _yaml(path: Path, text: str) -> list[tuple[Any, int]]:
    try:
        node = compose_yaml(text, pure=True)
        data = load_yaml(text, pure=True)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                          file=str(path), line=mark.line + 1 if mark else None) from None
    if data is None or node is None:
        return []
    if not isinstance(data, list):
        raise ConfigError("expected a list of premises (each a mapping with at least "
                          "'premise')", file=str(path), line=1)
    return [(item, sub.start_mark.line + 1) for item, sub in zip(data, node.value)]


def _entry(path: Path, data: Any, line: int, n: int) -> Premise:
    def problem(message: str, key: str | None = None) -> ConfigError:
        return ConfigError(f"premise {n}: {message}", file=str(path), key=key, line=line)

    if not isinstance(data, dict):
        raise problem("expected a mapping with at least 'premise'")
    unknown = [k for k in data if k not in ENTRY_KEYS]
    if unknown:
        raise problem(f"unknown key '{unknown[0]}' (expected: {', '.join(ENTRY_KEYS)})",
                      key=str(unknown[0]))
    values = {k: str(v).strip() for k, v in data.items() if v is not None}
    if not values.get("premise"):
        raise problem("a 'premise' is needed", key="premise")
    if (long := too_long(values)) is not None:
        raise problem(long[1], key=long[0])
    name = values.pop("name", "") or slug(values.get("title", "")) or f"{path.stem}-{n:03d}"
    if not NAME_RE.match(name) or len(name) > MAX_NAME:
        raise problem(f"name '{name}' is not a folder name (use up to {MAX_NAME} letters, "
                      "digits, '.', '_' or '-')", key="name")
    provider = values.pop("provider", "")
    if provider and not is_provider(provider):
        raise problem(f"provider '{provider}' is not one of {', '.join(provider_names())}",
                      key="provider")
    llm = {k: v for k, v in (("provider", provider), ("model", values.pop("model", ""))) if v}
    preset = values.pop("preset", "")
    return Premise(name=name, story=values, line=line, preset=preset, llm=llm)
