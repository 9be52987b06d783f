"""Model context windows: the table in `configs/models.yaml` and its lookup.

The file holds two tables: `models` (windows, read here) and `prices` (read by
prices.py); `read_table` checks the file's shape for both. A name is matched
exactly first, then by the longest table prefix after stripping a provider
prefix ("openai/") and an Ollama ":tag". Unknown models get a conservative
default and a warning the caller may show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from novel_agent.config.budget import ModelLimits
from novel_agent.config.layers import read_yaml_with_lines
from novel_agent.config.settings import Config
from novel_agent.errors import ConfigError
from novel_agent.paths import config_dir

DEFAULT_WINDOW = 8192
DEFAULT_MAX_OUTPUT = 4096
_ENTRY_KEYS = ("window", "max_output")
TABLES = ("models", "prices")     # the top-level keys of models.yaml; `models` is required


def default_table_path() -> Path:
    """Where the package's model table lives."""
    return config_dir() / "models.yaml"


def read_table(path: Path) -> tuple[dict[str, Any], dict[tuple[str, ...], int]]:
    """Read a models.yaml: its data and key lines, checked to hold a `models` mapping and,
    optionally, a `prices` mapping (ConfigError naming the file and line otherwise)."""
    path = Path(path)
    data, lines = read_yaml_with_lines(path)
    if (not isinstance(data, dict) or "models" not in data or set(data) - set(TABLES)
            or not all(isinstance(data[key], dict) for key in data)):
        extra = next((k for k in data if k not in TABLES), None) if isinstance(data, dict) else None
        raise ConfigError("expected a top-level key 'models' (and optionally 'prices') "
                          "holding a mapping", file=str(path),
                          line=lines.get((str(extra),), lines.get(("models",), 1)))
    return data, lines


def load_model_table(path: Path) -> dict[str, tuple[int, int]]:
    """Read a models.yaml: lower-cased name -> (window, max_output).

    Raises ConfigError naming the file and line of anything malformed. Read
    anew on every call (a small file), so an edit is seen at the next tick.
    """
    path = Path(path)
    data, lines = read_table(path)
    table: dict[str, tuple[int, int]] = {}
    for name, entry in data["models"].items():
        table[str(name).lower()] = _entry(path, lines, str(name), entry)
    return table


def _entry(path: Path, lines: dict[tuple[str, ...], int], name: str, entry: object) -> tuple[int, int]:
    """Validate one model's entry: exactly `window` and `max_output`, positive ints."""
    where = {"file": str(path), "key": f"models.{name}"}
    if not isinstance(entry, dict):
        raise ConfigError(f"'{name}' must be a mapping with window and max_output",
                          line=lines.get(("models", name)), **where)
    for key in entry:
        if key not in _ENTRY_KEYS:
            raise ConfigError(f"unknown key '{key}' in '{name}' (expected window, max_output)",
                              line=lines.get(("models", name, str(key))), **where)
    values = []
    for key in _ENTRY_KEYS:
        value = entry.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"'{name}.{key}' must be a positive integer, not {value!r}",
                              line=lines.get(("models", name, key), lines.get(("models", name))),
                              **where)
        values.append(value)
    return values[0], values[1]


def match_model(model: str, table: dict[str, tuple[int, int]]) -> str | None:
    """The table entry for `model`: exact, else the longest prefix of its base name."""
    name = model.strip().lower()
    if name in table:
        return name
    base = name.rsplit("/", 1)[-1].removeprefix("ft:")
    if base in table:
        return base
    base = base.split(":", 1)[0]
    return max((key for key in table if base.startswith(key)), key=len, default=None)


def model_limits(model: str, window_override: int = 0,
                 table_path: Path | None = None) -> ModelLimits:
    """The window and max output of `model`; `window_override` (> 0) wins.

    An unknown model gets an 8,192-token window, 4,096 output tokens and a
    one-line `warning`, unless the window is overridden.
    """
    table = load_model_table(table_path or default_table_path())
    matched = match_model(model, table)
    if matched is None:
        window, max_output = DEFAULT_WINDOW, DEFAULT_MAX_OUTPUT
        warning = "" if window_override > 0 else (
            f"unknown model '{model}': assuming an {DEFAULT_WINDOW:,}-token window "
            "(set context.window in project.yaml)")
    else:
        (window, max_output), warning = table[matched], ""
    if window_override > 0:
        window = window_override
    return ModelLimits(model=model, window=window, max_output=min(max_output, window),
                       known=matched is not None, warning=warning, matched=matched or "")


def limits_for(config: Config, table_path: Path | None = None) -> ModelLimits:
    """The configured model's limits; a provider that sets or finds its own window gives
    it (the local provider's is the n_ctx llama.cpp runs it with, the model's fitted to
    memory: models/local_setup.py; the openai provider's, for a model the table does not
    know, the one a llama.cpp server says it runs with: models/served_window.py)."""
    from novel_agent.models.providers import provider_for
    provider = provider_for(config)
    model = config.llm.model or provider.default_model(config)
    override = config.context.window
    if not override and provider.window is not None and not (
            provider.window_unknown_only
            and match_model(model, load_model_table(table_path or default_table_path()))):
        override = provider.window(config)
    return model_limits(model, override, table_path)
