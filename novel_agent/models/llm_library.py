"""What the llm provider asks of Simon Willison's `llm` library: its plugins loaded, its
models found by id or alias, the key each needs, and the list `novel models list` shows.

Importing this module imports `llm` (the optional extra `llm`); models/providers.py
imports it only when the provider is used, and says how to install it when it is not.

- **Plugins**: llm loads every installed plugin (the entry point group `llm`, or the
  distributions its LLM_LOAD_PLUGINS names) and stops at the first that fails to import,
  so one broken plugin leaves no model at all. `load_plugins` first tries each one llm
  would load; one that fails is blocked in llm's plugin manager (pluggy's `set_blocked`,
  so llm passes it by) and said in one line (`skipped`), the others load as llm loads
  them. A user's own LLM_LOAD_PLUGINS is kept, less the plugins that fail.
- **Keys**: as llm finds them: the key stored under the model's key name by
  `llm keys set NAME` (llm's keys.json under LLM_USER_PATH), else the model's own
  variable in the environment given. They are read, handed to llm with the request, and
  never written anywhere or said in a message.
"""

from __future__ import annotations

import importlib.metadata
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import llm
from llm import plugins as llm_plugins

from novel_agent.errors import ConfigError
from novel_agent.models.base import one_line

GROUP = "llm"                   # llm's entry point group
_lock = threading.Lock()
_skipped: list[str] | None = None   # the plugins this process skipped, once loaded


def _canonical(name: str) -> str:
    """A distribution's name as packaging compares them."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def block_broken(manager: Any, wanted: str | None,
                 distributions: Iterable[importlib.metadata.Distribution] | None = None
                 ) -> tuple[list[str], set[str]]:
    """Try each llm plugin llm would load (those of the distributions `wanted` names,
    comma-separated as LLM_LOAD_PLUGINS; None: every installed one) and block in
    `manager`, llm's pluggy plugin manager, each that fails to import. Returns a line for
    each skipped (its distribution, its entry point and why) and the distributions'
    names (canonical)."""
    names = None if wanted is None else {_canonical(n) for n in wanted.split(",") if n.strip()}
    skipped: list[str] = []
    broken: set[str] = set()
    for dist in distributions if distributions is not None else importlib.metadata.distributions():
        name = str(dist.metadata["Name"] or "")
        if names is not None and _canonical(name) not in names:
            continue
        for entry in dist.entry_points:
            if entry.group != GROUP or manager.has_plugin(entry.name) \
                    or manager.is_blocked(entry.name):
                continue
            try:      # a third party's import: whatever it raises, the plugin is skipped
                entry.load()
            except Exception as exc:  # noqa: BLE001
                manager.set_blocked(entry.name)
                broken.add(_canonical(name))
                skipped.append(f"llm plugin {name} ({entry.name}) skipped: it failed to "
                               f"import: {type(exc).__name__}: {one_line(str(exc), None, 160)}")
    return skipped, broken


def load_plugins() -> list[str]:
    """Load llm's plugins once for this process, skipping those that fail to import;
    the lines saying which were skipped and why."""
    global _skipped
    with _lock:
        if _skipped is None:
            wanted = llm_plugins.LLM_LOAD_PLUGINS      # the user's, read by llm at import
            skipped, broken = block_broken(llm_plugins.pm, wanted)
            if wanted is not None and broken:
                llm_plugins.LLM_LOAD_PLUGINS = ",".join(
                    n for n in wanted.split(",") if _canonical(n) not in broken)
            llm_plugins.load_plugins()
            _skipped = skipped
        return list(_skipped)


def find(name: str) -> llm.Model:
    """The model llm knows by id or alias as `name` ("": llm's default model, `llm models
    default`); a one-line ConfigError naming llm.model when no plugin offers it."""
    entries = registered()
    wanted = name or llm.get_default_model()
    by_name: dict[str, llm.Model] = {}
    for entry in entries:               # as llm.get_model finds one: an id over an alias
        by_name.update(dict.fromkeys(entry.aliases, entry.model))
    by_name.update((entry.model.model_id, entry.model) for entry in entries)
    if wanted not in by_name:
        said = f"{name!r}" if name else f"{wanted!r} (llm's default model)"
        raise ConfigError(f"llm.model: llm knows no model {said}: `llm models` lists the ids "
                          "and aliases its plugins offer (`llm install PLUGIN` adds more)",
                          key="llm.model")
    return by_name[wanted]


def registered() -> list[llm.models.ModelWithAliases]:
    """The models llm's plugins register (each with a sync model), plugins loaded first; a
    one-line ConfigError when a plugin, or a file of llm's it reads, fails."""
    load_plugins()
    try:
        found = llm.get_models_with_aliases()
    except Exception as exc:  # noqa: BLE001 - a plugin's code, or what it read
        raise ConfigError(f"llm's plugins could not list their models: {type(exc).__name__}: "
                          f"{one_line(str(exc), None, 200)}", key="llm.model") from None
    return [entry for entry in found if entry.model is not None]


def stored_keys() -> dict[str, str]:
    """The keys `llm keys set` stored (llm's keys.json); a ConfigError naming the file (and
    nothing of what it holds) when it cannot be read."""
    try:
        keys = llm.load_keys()
    except (OSError, ValueError):
        raise ConfigError("llm's key store cannot be read (is it JSON?): `llm keys path` "
                          "says where it is", file=str(llm.user_dir() / "keys.json")) from None
    return keys if isinstance(keys, dict) else {}


def key_for(model: llm.Model, env: Mapping[str, str]) -> str | None:
    """The key `model` is called with, found as llm finds it: none for a model that needs
    none, one the plugin set, the key stored under its name, else its variable in `env`."""
    if not model.needs_key:
        return None
    if model.key:
        return model.key
    stored = stored_keys().get(model.needs_key)
    return stored or (env.get(model.key_env_var) if model.key_env_var else None) or None


def key_missing(model: llm.Model, env: Mapping[str, str]) -> str:
    """What `model` lacks before it can answer: the key it needs and how to give it ("" when
    it needs none or has one)."""
    if not model.needs_key or key_for(model, env):
        return ""
    also = f" (or export {model.key_env_var})" if model.key_env_var else ""
    return (f"llm.model {model.model_id} needs a key: run `llm keys set {model.needs_key}`"
            f"{also}")


@dataclass(frozen=True)
class Known:
    """One model llm knows, as `novel models list` shows it."""

    model_id: str
    aliases: tuple[str, ...]
    key_name: str           # the name `llm keys set` stores its key under; "" = needs none
    key_set: bool           # its key is stored, or in its variable
    schema: bool            # it takes a JSON schema (else JSON is asked for in words)


def known_models(env: Mapping[str, str]) -> tuple[list[Known], list[str]]:
    """Every model llm's plugins offer, in llm's order, and the lines of the plugins
    skipped."""
    found = [Known(entry.model.model_id, tuple(entry.aliases), entry.model.needs_key or "",
                   bool(key_for(entry.model, env)), bool(entry.model.supports_schema))
             for entry in registered()]
    return found, load_plugins()
