"""Every configuration key, as the documentation's reference gives it: its type, its
default, each built-in preset's value, and what it means.

The meaning is the comment that stands beside the field in config/settings.py (on its
line, or on the lines just above it), so the settings stay the one place a key is
described; `keys()` reads it from the source with `tokenize`, and `markdown()` makes
the reference page (docs/hooks.py puts it into docs/reference/configuration.md when the
site is built). Pure; reads only the package's own files.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import io
import tokenize
import typing
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from novel_agent.config.settings import SECTIONS

PRESETS = ("conservative", "balanced", "aggressive")


@dataclass(frozen=True)
class Key:
    """One configuration key."""

    name: str                       # "generation.scene_max_words"
    type: str                       # "int", "float", "list[float]", ...
    default: Any
    presets: dict[str, Any]         # built-in preset -> its value, when it sets one
    meaning: str


def comments(cls: type) -> dict[str, str]:
    """Each field of a settings dataclass and the comment that describes it: the comment on
    its line, after the lines of comment just above it."""
    source = inspect.getsource(cls)
    above: list[str] = []
    found: dict[str, str] = {}
    line_names: dict[int, tuple[str, list[str]]] = {}    # line -> (field, comment above it)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            text = tok.string.lstrip("#").strip()
            if tok.start[0] in line_names:
                name, before = line_names[tok.start[0]]
                found[name] = " — ".join(t for t in (" ".join(before), text) if t)
            else:
                above.append(text)
        elif tok.type == tokenize.NAME and tok.start[1] == 4 and tok.start[0] not in line_names:
            line_names[tok.start[0]] = (tok.string, above)
            found.setdefault(tok.string, " ".join(above).strip())
            above = []
        elif tok.type == tokenize.NL and tok.start[1] == 0:
            above = []          # a blank line ends a block of comment
    return found


@functools.cache
def preset_values() -> dict[str, dict[str, Any]]:
    """Each built-in preset's values, as dotted keys."""
    out: dict[str, dict[str, Any]] = {}
    folder = resources.files("novel_agent") / "configs"
    for name in PRESETS:
        data = yaml.safe_load((folder / f"{name}.yaml").read_text(encoding="utf-8")) or {}
        out[name] = {f"{section}.{key}": value for section, values in data.items()
                     if isinstance(values, dict) for key, value in values.items()}
    return out


def type_name(hint: Any) -> str:
    """A field's type as the reference writes it ("int", "dict[str, float]")."""
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


def keys() -> list[Key]:
    """Every key of every section, in the order settings.py declares them."""
    presets = preset_values()
    out = []
    for section, cls in SECTIONS.items():
        hints = typing.get_type_hints(cls)
        meanings = comments(cls)
        for f in dataclasses.fields(cls):
            default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
            name = f"{section}.{f.name}"
            out.append(Key(name, type_name(hints[f.name]), default,
                           {p: presets[p][name] for p in PRESETS if name in presets[p]},
                           meanings.get(f.name, "")))
    return out


def _value(value: Any) -> str:
    if value == "" or value == {} or value == []:
        return f"`{value!r}`"
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return f"`{text.removesuffix('...').strip()}`"


def markdown() -> str:
    """The reference: one table a section, a row a key."""
    lines: list[str] = []
    section = ""
    for key in keys():
        head = key.name.split(".")[0]
        if head != section:
            section = head
            doc = inspect.getdoc(SECTIONS[head]) or ""
            lines += ["", f"## `{head}`", "", doc, "",
                      "| key | type | default | presets | meaning |", "|---|---|---|---|---|"]
        presets = ", ".join(f"{p}: {_value(v)}" for p, v in key.presets.items()) or "—"
        meaning = key.meaning.replace("|", "\\|") or "—"
        lines.append(f"| `{key.name}` | `{key.type}` | {_value(key.default)} | {presets} | "
                     f"{meaning} |")
    return "\n".join(lines).strip() + "\n"
