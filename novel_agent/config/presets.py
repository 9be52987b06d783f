"""Presets as the user manages them: list, show, new, check, save.

The built-in presets ship in `configs/`; the user's own live in their presets
folder (`config.user_presets_dir`: $NOVEL_PRESETS_DIR, else `presets/` beside
the projects), where `preset: NAME` in project.yaml finds them too. Built-in
names are taken: a new preset needs a name of its own, and built-in presets are
copied (`new NAME --from BASE`), never edited in place. A preset is named, never
pathed: names are checked before any file is touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from novel_agent.config.layers import (
    check_preset_name,
    find_preset,
    list_presets,
    load_yaml_layer,
    merge_layers,
    preset_path,
)
from novel_agent.config.settings import Config
from novel_agent.errors import ConfigError
from novel_agent.files import atomic_write
from novel_agent.paths import config_dir


@dataclass(frozen=True)
class PresetEntry:
    """One preset: its name, its file, whether it ships with novel_agent, its first comment."""

    name: str
    path: Path
    builtin: bool
    about: str = ""


def _about(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def entries(user_dir: Path) -> list[PresetEntry]:
    """Every preset, built-in ones first; a user file with a built-in name is shadowed."""
    builtin = list_presets()
    out = [PresetEntry(n, preset_path(n), True, _about(preset_path(n))) for n in builtin]
    out += [PresetEntry(n, preset_path(n, user_dir), False, _about(preset_path(n, user_dir)))
            for n in list_presets(user_dir) if n not in builtin]
    return out


def validate(path: Path, text: str | None = None) -> Config:
    """Check a preset file (or `text` as if it were that file): keys, types, ranges.
    Raises ConfigError naming the file, the key and the line."""
    return merge_layers([load_yaml_layer(Path(path), text=text)], preset=Path(path).stem)


def user_file(name: str, user_dir: Path) -> Path:
    """The file of the user's preset `name`, refusing built-in names."""
    check_preset_name(name)
    if name in list_presets():
        raise ConfigError(f"'{name}' is a built-in preset ({preset_path(name)}); make your own "
                          f"with `novel preset new my-{name} --from {name}`", key="preset")
    return preset_path(name, user_dir)


def create(name: str, base: str, user_dir: Path) -> Path:
    """A new user preset `name`, a copy of preset `base` with a first line saying so."""
    path = user_file(name, user_dir)
    if path.exists():
        raise ConfigError(f"preset '{name}' already exists ({path})", key="preset")
    source = find_preset(base, user_dir=user_dir)
    text = source.read_text(encoding="utf-8")
    atomic_write(path, f"# {name}: made from {base}\n{text}")
    return path


def save(path: Path, text: str) -> Config:
    """Write `text` to a user preset if it validates; else raise, the file untouched."""
    if Path(path).resolve().is_relative_to(config_dir().resolve()):
        raise ConfigError("built-in presets are not edited in place", file=str(path))
    config = validate(path, text)
    atomic_write(path, text)
    return config
