"""The settings in layers: defaults < preset < project.yaml < environment < flags.

A `Layer` is one source's values `{section: {key: value}}` with each key's line.
`merge_layers` lays them over each other (a MERGED mapping key by key), validates the
result against config/settings.py and turns the first problem into one ConfigError line
naming the file, the line and the key of the layer that set the value. The environment
is passed in; files are read through `load_yaml_layer`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from novel_agent.config.settings import SECTIONS, Config
from novel_agent.config.values import MERGED, Clash, refusal
from novel_agent.errors import ConfigError
from novel_agent.files import compose_yaml, load_yaml, yaml_problem
from novel_agent.paths import config_dir

Origins = dict[str, tuple[str, int | None]]     # dotted key -> (layer, line)
# Keys that were renamed: what an old project.yaml is told.
RENAMED = {"llm.model_path": "now llm.local_model, which takes a path to a .gguf or a name"}
# pydantic's errors of a value of the wrong type ("int_parsing"), by what it must be
TYPES = {"int": "int", "float": "float", "string": "str", "bool": "bool", "dict": "a mapping",
         "list": "a list"}


@dataclass
class Layer:
    """One source of settings: its values, where they came from, and their lines."""

    source: str
    values: dict[str, dict[str, Any]]
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)

    def line(self, *path: str) -> int | None:
        return self.lines.get(tuple(path))


def _key_lines(node: yaml.Node, source: str,
               prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], int]:
    """Map each key path of a composed YAML mapping to its 1-based line. A key given twice
    in one mapping is a ConfigError at the second (YAML would keep it and silently drop
    the first: two `llm:` blocks lose the first one's settings)."""
    lines: dict[tuple[str, ...], int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            path = prefix + (str(key_node.value),)
            line = key_node.start_mark.line + 1
            if path in lines and key_node.tag != "tag:yaml.org,2002:merge":
                raise ConfigError(f"duplicate key '{'.'.join(path)}' (first on line "
                                  f"{lines[path]}): keep one, merged by hand", file=source,
                                  key=".".join(path), line=line)
            lines[path] = line
            lines.update(_key_lines(value_node, source, path))
    return lines


def read_yaml_with_lines(path: Path) -> tuple[Any, dict[tuple[str, ...], int]]:
    """Parse a YAML file; return its data and the line of every mapping key."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", file=str(path)) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise ConfigError("not UTF-8 text: re-save the file as UTF-8", file=str(path),
                          line=line) from None
    return parse_yaml_with_lines(text, str(path))


def parse_yaml_with_lines(text: str, source: str) -> tuple[Any, dict[tuple[str, ...], int]]:
    """Parse YAML text (errors name `source`); return its data and every key's line."""
    try:
        data = load_yaml(text, pure=True)
        node = compose_yaml(text, pure=True)
    except yaml.YAMLError as exc:
        message, line = yaml_problem(exc)
        raise ConfigError(message, file=source, line=line) from None
    return data, (_key_lines(node, source) if node is not None else {})


def load_yaml_layer(path: Path, *, extra_keys: tuple[str, ...] = (),
                    text: str | None = None) -> Layer:
    """Read a preset or project.yaml as a layer; `extra_keys` are allowed top-level keys
    that are not configuration (a project's premise, genre, ...). With `text`, that text
    is read as if it were the file (to check an edit before it is saved)."""
    data, lines = (read_yaml_with_lines(path) if text is None
                   else parse_yaml_with_lines(text, str(path)))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping at the top level", file=str(path), line=1)
    values: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        if key in extra_keys:
            continue
        if key not in SECTIONS:
            allowed = ", ".join(sorted([*SECTIONS, *extra_keys]))
            raise ConfigError(f"unknown key '{key}' (expected one of: {allowed})",
                              file=str(path), key=str(key), line=lines.get((str(key),)))
        if value is None:
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"'{key}' must be a mapping of settings", file=str(path),
                              key=str(key), line=lines.get((str(key),)))
        values[key] = dict(value)
    return Layer(str(path), values, lines)


def env_layer(env: Mapping[str, str]) -> Layer:
    """Settings from variables named NOVEL_<SECTION>_<KEY>, e.g. NOVEL_LLM_MODEL: each value
    read as YAML, but kept as it is written for a key that takes text."""
    values: dict[str, dict[str, Any]] = {}
    for section, model in SECTIONS.items():
        for key, info in model.model_fields.items():
            raw = env.get(f"NOVEL_{section}_{key}".upper())
            if raw is None:
                continue
            try:
                value = load_yaml(raw, pure=True) if raw.strip() else ""
            except yaml.YAMLError:
                value = raw
            if not isinstance(value, str) and (info.annotation is str
                                               or get_origin(info.annotation) is Literal):
                value = raw
            values.setdefault(section, {})[key] = value
    return Layer("environment", values)


def flags_layer(flags: Mapping[str, Any]) -> Layer:
    """Settings from command-line flags, given as {"llm.model": "gpt-4o", ...}."""
    values: dict[str, dict[str, Any]] = {}
    for dotted, value in flags.items():
        if value is not None:
            section, _, key = dotted.partition(".")
            values.setdefault(section, {})[key] = value
    return Layer("command line", values)


def merge_layers(layers: list[Layer], *, preset: str = "balanced") -> Config:
    """Apply layers in order over the built-in defaults and validate the result; the first
    problem is a ConfigError naming the file, the line and the key of the layer at fault."""
    merged: dict[str, dict[str, Any]] = {}
    rank: dict[str, tuple[int, int]] = {}       # dotted key -> (its layer, its line)
    for number, layer in enumerate(layers):
        for section, values in layer.values.items():
            if section not in SECTIONS:
                raise ConfigError(f"unknown section '{section}'", file=layer.source,
                                  key=section, line=layer.line(section))
            fields, mine = SECTIONS[section].model_fields, merged.setdefault(section, {})
            for key, value in values.items():
                mine[key] = _merge(fields.get(key), mine.get(key), value)
        rank.update({key: (number, line or 0) for key, (_, line) in sources([layer]).items()})
    try:
        return Config.model_validate({**merged, "preset": preset})
    except ValidationError as exc:
        raise _one_line(exc.errors()[0], sources(layers), rank) from None


def _merge(info: FieldInfo | None, before: Any, value: Any) -> Any:
    """`value` over `before`: a MERGED mapping key by key (a mapping in it, such as one
    stage's keys, key by key too; a key set to null is left as it was), else `value`."""
    if info is None or MERGED not in info.metadata or not isinstance(value, dict):
        return value
    if not isinstance(before, dict):
        default = info.get_default(call_default_factory=True)
        before = dict(default) if isinstance(default, dict) else {}
    out = dict(before)
    for key, item in value.items():
        if item is not None:
            old = out.get(key)
            out[key] = {**old, **item} if isinstance(old, dict) and isinstance(item, dict) else item
    return out


def sources(layers: list[Layer]) -> Origins:
    """Which layer set each dotted key last, with its line: what `config show --sources`
    prints (keys no layer sets come from the built-in defaults); a key inside a mapping
    is named whole too (llm.stages.writer.model)."""
    origin: Origins = {}

    def walk(layer: Layer, path: tuple[str, ...], values: Mapping[Any, Any]) -> None:
        for key, value in values.items():
            here = (*path, str(key))
            origin[".".join(here)] = (layer.source, layer.line(*here))
            if isinstance(value, dict):
                walk(layer, here, value)

    for layer in layers:
        walk(layer, (), layer.values)
    return origin


def _one_line(error: ErrorDetails, origin: Origins, rank: dict[str, tuple[int, int]]
              ) -> ConfigError:
    """A pydantic error as one line, blamed on the layer that set the value."""
    path = [str(part) for part in error["loc"] if not isinstance(part, int) and part != "[key]"]
    cause, value = (error.get("ctx") or {}).get("error"), error["input"]
    if isinstance(cause, Clash):       # the key of the rule the latest layer set is blamed
        path.append(max(cause.blame, key=lambda k: rank.get(".".join([*path, k]), (-1, 0))))
    dotted = ".".join(path)
    owner, info = _declared(path)
    kind = error["type"]
    if kind == "extra_forbidden":
        known = RENAMED.get(dotted) or f"known keys: {', '.join(owner.model_fields)}"
        message = f"unknown key '{dotted}' ({known})"
    elif kind.endswith(("_type", "_parsing", "_from_float")):
        title = owner.model_config.get("title")           # "llm keys"
        told = TYPES.get(kind.split("_")[0]) or (f"a mapping of {title}" if title else "a mapping")
        message = f"{dotted} must be {told}, not {value!r}"
    elif error["loc"][-1] == "[key]":
        message = str(cause)            # "unknown stage 'llm.stages.x' (stages: ...)"
    else:
        told = cause.blame[path[-1]] if isinstance(cause, Clash) else refusal(
            error, info.annotation if info else None, info.metadata if info else ())
        shown = isinstance(value, str | int | float) and not isinstance(cause, Clash)
        message = f"{dotted}: {told}" + (f", not {value!r}" if shown else "")
    while path and ".".join(path) not in origin:
        path.pop()
    source, line = origin.get(".".join(path), ("built-in defaults", None))
    return ConfigError(message, file=source, key=dotted, line=line)


def _declared(path: list[str]) -> tuple[type[BaseModel], FieldInfo | None]:
    """The model that declares the last key of `path`, and that key's field (None when
    no such key is declared); a key inside a mapping of plain values is the mapping's."""
    owner: type[BaseModel] = Config
    info: FieldInfo | None = None
    keys = iter(path)
    for key in keys:
        if (info := owner.model_fields.get(key)) is None:
            break
        inner = info.annotation
        if get_origin(inner) is dict:
            next(keys, None)                    # a key of the mapping, not a field
            inner = get_args(inner)[1]
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            break
        owner = inner
    return owner, info


PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def check_preset_name(name: str) -> str:
    """A preset is named, never pathed: letters, digits, '-' and '_' (not 'models')."""
    if not PRESET_NAME.match(name or "") or name == "models":
        raise ConfigError(f"'{name}' is not a preset name (use letters, digits, '-' or '_'; "
                          "a name, not a file or a path)", key="preset")
    return name


def preset_path(name: str, directory: Path | None = None) -> Path:
    """The file of a named preset in `directory` (default: the built-in configs/)."""
    return (directory or config_dir()) / f"{check_preset_name(name)}.yaml"


def list_presets(directory: Path | None = None) -> list[str]:
    """Names of the presets in a folder (default: the built-in configs/; every YAML there
    with a preset's name, models.yaml aside)."""
    d = directory or config_dir()
    return sorted(p.stem for p in d.glob("*.yaml") if PRESET_NAME.match(p.stem)
                  and p.stem != "models") if d.is_dir() else []


def user_presets_dir(env: Mapping[str, str], projects_folder: Path) -> Path:
    """Where the user's own presets live: $NOVEL_PRESETS_DIR, else `presets/` in the
    folder that holds the projects."""
    configured = env.get("NOVEL_PRESETS_DIR")
    return Path(configured).expanduser() if configured else Path(projects_folder) / "presets"


def find_preset(name: str, directory: Path | None = None, user_dir: Path | None = None) -> Path:
    """The file of preset `name`: built in first, then the user's presets folder."""
    for folder in (directory or config_dir(), user_dir):
        if folder is not None and preset_path(name, folder).is_file():
            return preset_path(name, folder)
    names = ", ".join(sorted({*list_presets(directory), *list_presets(user_dir)})) or "none"
    raise ConfigError(f"unknown preset '{name}' (available: {names})", key="preset")


def load_preset(name: str, directory: Path | None = None, user_dir: Path | None = None) -> Layer:
    """Read a preset as a layer; an unknown name lists the ones there are."""
    return load_yaml_layer(find_preset(name, directory, user_dir))


def config_layers(project_layer: Layer | None = None, *, preset: str | None = None,
                  env: Mapping[str, str] | None = None, flags: Mapping[str, Any] | None = None,
                  preset_dir: Path | None = None, user_presets: Path | None = None
                  ) -> tuple[str, list[Layer]]:
    """The preset's name and every layer in order: preset, project, environment, flags."""
    name = preset or "balanced"
    layers = [load_preset(name, preset_dir, user_presets)]
    if project_layer is not None:
        layers.append(project_layer)
    layers.append(env_layer(env or {}))
    layers.append(flags_layer(flags or {}))
    return name, layers


def load_config(project_layer: Layer | None = None, *, preset: str | None = None,
                env: Mapping[str, str] | None = None, flags: Mapping[str, Any] | None = None,
                preset_dir: Path | None = None, user_presets: Path | None = None) -> Config:
    """Build a Config from every layer. `preset` defaults to balanced."""
    name, layers = config_layers(project_layer, preset=preset, env=env, flags=flags,
                                 preset_dir=preset_dir, user_presets=user_presets)
    return merge_layers(layers, preset=name)
