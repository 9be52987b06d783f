"""Every configuration key, as the documentation's reference gives it: its type and
bounds, its default, each built-in preset's value, and what it means, all read from the
declarations in config/settings.py (each key's `Field`). `markdown()` makes the page
(docs/hooks.py puts it into docs/reference/configuration.md when the site is built).
Pure; reads only the package's own files.
"""

from __future__ import annotations

import functools
import inspect
import types
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from annotated_types import Ge, Gt, Le, MaxLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from novel_agent.config.settings import SECTIONS
from novel_agent.config.values import unwrap
from novel_agent.files import load_yaml

PRESETS = ("conservative", "balanced", "aggressive")


@dataclass(frozen=True)
class Key:
    """One configuration key."""

    name: str                       # "generation.scene_max_words"
    type: str                       # "int > 0", "0 ≤ float ≤ 1", "list[float]", ...
    default: Any
    presets: dict[str, Any]         # built-in preset -> its value, when it sets one
    meaning: str


@functools.cache
def preset_values() -> dict[str, dict[str, Any]]:
    """Each built-in preset's values, as dotted keys."""
    out: dict[str, dict[str, Any]] = {}
    folder = resources.files("novel_agent") / "configs"
    for name in PRESETS:
        data = load_yaml((folder / f"{name}.yaml").read_text(encoding="utf-8"), pure=True) or {}
        out[name] = {f"{section}.{key}": value for section, values in data.items()
                     if isinstance(values, dict) for key, value in values.items()}
    return out


def type_name(hint: Any, metadata: Any = ()) -> str:
    """A declared type as the reference writes it, with its bounds: "int ≥ 0",
    "0 < float ≤ 1", "dict[str, float ≥ 0]", "one of auto, off", "mapping"."""
    hint, metadata = unwrap(hint, metadata)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):         # int | None: a key that may be left out
        return type_name(next(a for a in args if a is not type(None)), metadata)
    if origin is Literal:
        return f"one of {', '.join(map(str, args))}"
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return "mapping"
    name = f"{origin.__name__}[{', '.join(map(type_name, args))}]" if origin else hint.__name__
    found = {kind: getattr(m, kind.__name__.lower()) for m in metadata
             for kind in (Ge, Gt, Le) if isinstance(m, kind)}
    ge, gt, le = (f"{found[k]:,}" if k in found else "" for k in (Ge, Gt, Le))
    low = f"{ge} ≤ " if ge and le else f"{gt} < " if gt and le else ""
    high = f" ≤ {le}" if le else "" if low else f" ≥ {ge}" if ge else f" > {gt}" if gt else ""
    items = next((f", {m.max_length} items" for m in metadata if isinstance(m, MaxLen)), "")
    return f"{low}{name}{high}{items}"


def _rows(name: str, info: FieldInfo) -> list[Key]:
    """The key `name`, then the keys of a mapping declared as a model: context.embeddings.*,
    and llm.stages.<stage>.* those that are not llm's."""
    hint, default = info.annotation, info.get_default(call_default_factory=True)
    presets = {p: values[name] for p, values in preset_values().items() if name in values}
    key = Key(name, type_name(hint, info.metadata), default, presets, info.description or "")
    if isinstance(hint, type) and issubclass(hint, BaseModel):         # context.embeddings
        return [Key(name, key.type, default.model_dump(), presets, key.meaning),
                *(row for sub, field in hint.model_fields.items()
                  for row in _rows(f"{name}.{sub}", field))]
    inner = get_args(hint)[-1] if get_origin(hint) is dict else None
    if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
        return [key]
    section, each = SECTIONS[name.split(".")[0]].model_fields, name.rsplit(".", 1)[1].removesuffix("s")
    return [Key(name, key.type, default, presets, f"{key.meaning} Its keys: "
                f"{', '.join(inner.model_fields)}."),
            *(Key(f"{name}.<{each}>.{sub}", type_name(field.annotation, field.metadata), "—", {},
                  field.description or "") for sub, field in inner.model_fields.items()
              if sub not in section)]


def keys() -> list[Key]:
    """Every key of every section, in the order config/settings.py declares them."""
    return [row for section, model in SECTIONS.items() for key, info in model.model_fields.items()
            for row in _rows(f"{section}.{key}", info)]


def _value(value: Any) -> str:
    if value == "—" or value == "" or value == {} or value == []:
        return value if value == "—" else f"`{value!r}`"
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return f"`{text.removesuffix('...').strip()}`"


def markdown() -> str:
    """The reference: one table a section, a row a key."""
    lines: list[str] = []
    every = keys()
    for section, model in SECTIONS.items():
        lines += ["", f"## `{section}`", "", inspect.getdoc(model) or "", "",
                  "| key | type | default | presets | meaning |", "|---|---|---|---|---|"]
        for key in (k for k in every if k.name.startswith(f"{section}.")):
            presets = ", ".join(f"{p}: {_value(v)}" for p, v in key.presets.items()) or "—"
            meaning = key.meaning.replace("|", "\\|") or "—"
            lines.append(f"| `{key.name}` | `{key.type}` | {_value(key.default)} | {presets} | "
                         f"{meaning} |")
    return "\n".join(lines).strip() + "\n"
