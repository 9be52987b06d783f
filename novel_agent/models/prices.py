"""What a model call costs: the price table in `configs/models.yaml`, its lookup,
the project's override (`llm.prices`) and the arithmetic.

Prices are US dollars per million tokens: `input`, `cached_input` (prompt
tokens the provider's prompt cache served) and `output`, with the date they
were `checked`; and `cache_write` (prompt tokens written to the provider's
cache, which Anthropic bills at 1.25 times the input price) where a write does
not cost the input price. They are estimates: providers change them, and batch
or priority tiers bill differently.

A price is looked up more strictly than a window: the model's name exactly
(after lower-casing and stripping a provider prefix "openai/"), or that name
less a snapshot suffix ("-2024-07-18", "-20250929", "-0613", "-latest"). Anything
else is unknown, and an unknown price is None everywhere, never 0. A provider that
is not paid (local, offline: models/providers.py) costs nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from novel_agent.config.settings import Config
from novel_agent.errors import ConfigError
from novel_agent.models.limits import default_table_path, read_table

PRICE_KEYS = ("input", "cached_input", "output")
OPTIONAL_KEYS = ("cache_write",)
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$")


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens, and where the numbers came from."""

    input: float
    cached_input: float
    output: float
    checked: str = ""        # the date the table's numbers were checked
    source: str = ""         # "configs/models.yaml: gpt-4o-mini", "llm.prices", "offline"
    cache_write: float | None = None    # None: a write costs the input price
    free: bool = False       # the provider's calls cost nothing (source names the provider)

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int,
             cache_write_tokens: int = 0) -> float:
        """The dollars of one call; cached tokens and cache writes are part of the prompt
        tokens."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        written = min(max(cache_write_tokens, 0), prompt_tokens - cached)
        write = self.input if self.cache_write is None else self.cache_write
        return ((prompt_tokens - cached - written) * self.input + cached * self.cached_input
                + written * write + completion_tokens * self.output) / 1_000_000


def load_price_table(path: Path) -> dict[str, Price]:
    """Read the `prices` table of a models.yaml: lower-cased name -> Price.

    Each entry holds exactly input, cached_input, output (dollars per million
    tokens, 0 or more) and checked (a date), and may hold cache_write; anything
    else is a ConfigError naming the file and the line.
    """
    path = Path(path)
    data, lines = read_table(path)
    return {str(name).lower(): _price(path, lines, str(name), entry)
            for name, entry in (data.get("prices") or {}).items()}


def _price(path: Path, lines: dict[tuple[str, ...], int], name: str, entry: object) -> Price:
    """Validate one model's price entry."""
    def fail(message: str, *key: str) -> ConfigError:
        return ConfigError(message, file=str(path), key=f"prices.{name}",
                           line=lines.get(("prices", name, *key), lines.get(("prices", name))))

    if not isinstance(entry, dict):
        raise fail(f"'{name}' must be a mapping with {', '.join(PRICE_KEYS)} and checked")
    for key in entry:
        if key not in (*PRICE_KEYS, *OPTIONAL_KEYS, "checked"):
            raise fail(f"unknown key '{key}' in '{name}' (expected {', '.join(PRICE_KEYS)}, "
                       f"checked, {', '.join(OPTIONAL_KEYS)})", str(key))
    dollars: dict[str, float] = {}
    for key in (*PRICE_KEYS, *OPTIONAL_KEYS):
        value = entry.get(key)
        if key in OPTIONAL_KEYS and value is None:
            continue
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise fail(f"'{name}.{key}' must be a number of dollars (0 or more), not {value!r}",
                       key)
        dollars[key] = float(value)
    checked = entry.get("checked")
    if not isinstance(checked, dt.date):
        raise fail(f"'{name}.checked' must be the date the price was checked (YYYY-MM-DD), "
                   f"not {checked!r}", "checked")
    return Price(dollars["input"], dollars["cached_input"], dollars["output"],
                 checked=checked.isoformat(), source=f"configs/models.yaml: {name}",
                 cache_write=dollars.get("cache_write"))


def match_price(model: str, table: dict[str, Price]) -> str | None:
    """The price entry for `model`: its name, or its name less a snapshot suffix."""
    name = model.strip().lower()
    if name in table:
        return name
    if name.startswith("ft:"):
        return None      # fine-tuned models bill differently
    base = name.rsplit("/", 1)[-1]
    for candidate in (base, _SNAPSHOT.sub("", base)):
        if candidate in table:
            return candidate
    return None


def price_for(config: Config, table_path: Path | None = None) -> Price | None:
    """The price of the configured model: 0 for a provider that is not paid (local,
    offline), `llm.prices` when set, else the table's entry; None when unknown."""
    from novel_agent.models import model_id, provider_for
    provider = provider_for(config)
    if not provider.paid:
        return Price(0.0, 0.0, 0.0, source=provider.name, free=True)
    override = config.llm.prices
    if override:
        return Price(override["input"], override.get("cached_input", override["input"]),
                     override["output"], source="llm.prices",
                     cache_write=override.get("cache_write"))
    table = load_price_table(table_path or default_table_path())
    matched = match_price(model_id(config), table)
    return table[matched] if matched else None


def stage_prices(config: Config, table_path: Path | None = None
                 ) -> dict[str, tuple[str, Price | None]]:
    """Each stage's model and its price (llm.stages; a stage of none of its own: llm's),
    by the name of each stage that may have a model of its own (config/stages.py)."""
    from novel_agent.config.stages import names
    from novel_agent.models import model_id
    return {stage: (model_id(mine), price_for(mine, table_path))
            for stage in names(own_model=True) for mine in (config.for_stage(stage),)}


def describe_prices(config: Config, table_path: Path | None = None) -> str:
    """`describe_price` of llm's model, or of each stage's when llm.stages gives them
    models or prices of their own ("planner, writer: ...; extractor: ...")."""
    from novel_agent.models import model_id
    if not config.llm.stages:
        return describe_price(price_for(config, table_path), model_id(config))
    said: dict[str, list[str]] = {}
    for stage, (model, price) in stage_prices(config, table_path).items():
        said.setdefault(f"{model} {describe_price(price, model)}" if price is not None
                        and not price.free else describe_price(price, model), []).append(stage)
    if len(said) == 1:
        return next(iter(said))
    return "; ".join(f"{', '.join(stages)}: {line}" for line, stages in said.items())


def model_price(model: str, table_path: Path | None = None) -> Price | None:
    """The table's price of a model by name (an embeddings model, say); None when unknown."""
    table = load_price_table(table_path or default_table_path())
    matched = match_price(model, table)
    return table[matched] if matched else None


def describe_price(price: Price | None, model: str) -> str:
    """One line: the price in use and where it came from, or that it is unknown."""
    if price is None:
        return (f"price of {model}: unknown (add llm.prices to project.yaml: "
                "input, cached_input, output in dollars per million tokens)")
    if price.free:
        return f"price: 0 ({price.source} model)"
    checked = f", checked {price.checked}" if price.checked else ""
    written = f", ${price.cache_write:g} cache write" if price.cache_write is not None else ""
    return (f"price per million tokens: ${price.input:g} input, ${price.cached_input:g} cached"
            f"{written}, ${price.output:g} output ({price.source}{checked})")
