"""Taking an edit while the daemon runs: reload, compare, keep the last good.

`Reloader` holds the configuration in force. Given the paths that changed it
loads the configuration again (a reload *is* a load: every layer, checked the
same way), compares it with the one in force and says what changed
("reloaded project.yaml: llm.temperature 0.8 → 0.9"). An edit that does not
validate is reported with its file and line, and the configuration in force
stays. Edits of `steer.md`, `lore/` and `templates/` are checked and reported;
the next tick reads those files itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from novel_agent.config.budget import ModelLimits
from novel_agent.config.layers import find_preset
from novel_agent.config.settings import Config
from novel_agent.context.prompts import environment
from novel_agent.errors import ConfigError, FileFormatError, NovelError
from novel_agent.files import read_text
from novel_agent.models.limits import default_table_path, limits_for
from novel_agent.story.lore import read_lore_file
from novel_agent.story.project.folder import Project
from novel_agent.story.steer import read_steer


@dataclass
class Reload:
    """What one batch of edits did: a line to log, and whether it failed."""

    message: str
    error: NovelError | None = None
    rebuild: bool = False          # the model, its limits or the budgets may differ
    about: str = "config"          # what was reloaded: "config", or the path checked


def flatten(config: Config) -> dict[str, Any]:
    """A Config as {"section.key": value}."""
    out: dict[str, Any] = {"preset": config.preset}
    for section, values in config.to_dict().items():
        if isinstance(values, dict):
            out.update({f"{section}.{key}": value for key, value in values.items()})
    return out


def diff(old: Config, new: Config) -> list[str]:
    """The settings that differ, as "key old → new"."""
    a, b = flatten(old), flatten(new)
    return [f"{key} {a.get(key)!r} → {b.get(key)!r}".replace("'", "")
            for key in b if a.get(key) != b.get(key)]


def limits_diff(old: ModelLimits, new: ModelLimits) -> list[str]:
    """What an edit of configs/models.yaml changed for the model in use."""
    return [f"{new.model} {name} {getattr(old, name):,} → {getattr(new, name):,}"
            for name in ("window", "max_output") if getattr(old, name) != getattr(new, name)]


@dataclass
class Reloader:
    """The configuration in force for a running daemon, and how edits change it."""

    project: Project
    env: Mapping[str, str]
    flags: Mapping[str, Any] = field(default_factory=dict)
    config: Config = field(init=False)
    limits: ModelLimits = field(init=False)

    def __post_init__(self) -> None:
        self.config, self.limits = self.load()

    def load(self) -> tuple[Config, ModelLimits]:
        """The configuration from the files as they are now, and the model's limits from
        configs/models.yaml (raises on a bad edit of either)."""
        config = self.project.config(self.env, self.flags)
        return config, limits_for(config)

    def preset_file(self) -> Path:
        return find_preset(self.config.preset,
                           user_dir=self.project.presets_dir(self.env)).resolve()

    @staticmethod
    def models_file() -> Path:
        return default_table_path().resolve()

    def apply(self, paths: set[Path], kinds: Mapping[Path, str]) -> list[Reload]:
        """Reload for the changed `paths` (kind of each in `kinds`); one Reload per report."""
        out: list[Reload] = []
        config_paths = sorted(p for p in paths if kinds.get(p) == "config")
        if config_paths:
            out.append(self._reload_config(config_paths))
        for path in sorted(p for p in paths if kinds.get(p) != "config"):
            out.append(self._check(path, kinds.get(path, "")))
        return out

    def _name(self, path: Path) -> str:
        root = self.project.root
        return str(path.relative_to(root)) if path.is_relative_to(root) else path.name

    def _reload_config(self, paths: list[Path]) -> Reload:
        names = ", ".join(self._name(p) for p in paths)
        try:
            new, limits = self.load()
        except NovelError as exc:
            return Reload(f"not reloaded: {exc}; the configuration in force stays", error=exc)
        changes = diff(self.config, new) + limits_diff(self.limits, limits)
        self.config, self.limits = new, limits
        models = any(p == self.models_file() for p in paths)
        said = "; ".join(changes) if changes else "no setting changed"
        return Reload(f"reloaded {names}: {said}", rebuild=bool(changes) or models)

    def _check(self, path: Path, kind: str) -> Reload:
        reload = self._checked(path, kind)
        reload.about = str(path)
        return reload

    def _checked(self, path: Path, kind: str) -> Reload:
        name = self._name(path)
        try:
            if kind == "steer":
                note = read_steer(path)
                return Reload(f"{name}: the author's note " +
                              ("removed" if not note.text else "changed") +
                              "; the next tick reads it")
            if kind == "templates" and path.suffix == ".j2" and path.is_file():
                environment(self.project.templates_dir).parse(read_text(path),
                                                              filename=str(path))
            elif kind == "lore" and path.suffix in (".yaml", ".yml") and path.is_file():
                entries, problems = read_lore_file(path)
                if problems:
                    return Reload(f"invalid edit: {problems[0]}",
                                  error=FileFormatError(problems[0]))
                return Reload(f"{name} changed ({len(entries)} lore "
                              f"entr{'y' if len(entries) == 1 else 'ies'}); the next tick "
                              "reads it")
        except NovelError as exc:
            return Reload(f"invalid edit: {exc}", error=exc)
        except jinja2.TemplateSyntaxError as exc:
            err = ConfigError(f"template error: {exc.message}", file=str(path), line=exc.lineno)
            return Reload(f"invalid edit: {err}", error=err)
        return Reload(f"{name} changed; the next tick reads it")
