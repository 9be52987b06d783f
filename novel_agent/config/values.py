"""The kinds of value a setting takes (a share, a price, a stage's name; every float
finite), and what a value out of them is told (`refusal`: a kind's `Rule`, else the words
of its bounds). `MERGED` marks a mapping the layers merge key by key; `Clash` is a rule
across keys, naming each that may be at fault.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic import AfterValidator, BeforeValidator, Field, FiniteFloat, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from novel_agent.config.providers import is_provider, provider_names
from novel_agent.config.stages import names

MAX_INTERVAL = 604_800      # seconds: a week between two ticks at most
INTERVAL_RULE = f"must be a number of seconds from 0 to {MAX_INTERVAL:,} (a week)"
PRICE_KEYS = ("input", "cached_input", "output", "cache_write")


@dataclass(frozen=True)
class Rule:
    """What a value out of its key's bounds is told, where the bounds alone say it badly."""

    text: str


class Merged:
    """Marks a mapping that layers merge key by key (a layer may set one share, one stage's
    model); any other value a layer sets replaces the one before."""


MERGED = Merged()


class Clash(ValueError):
    """Keys of one section that do not go together: each key that may be at fault and what
    it is told (config/layers.py blames the one the latest layer set)."""

    def __init__(self, **blame: str):
        super().__init__("; ".join(f"{key}: {told}" for key, told in blame.items()))
        self.blame = blame


def _provider(name: str) -> str:
    if not is_provider(name):
        raise ValueError(f"must be one of {', '.join(provider_names())}")
    return name


def _prices(prices: dict[str, float]) -> dict[str, float]:
    if unknown := [key for key in prices if key not in PRICE_KEYS]:
        raise ValueError(f"unknown key '{unknown[0]}' (expected {', '.join(PRICE_KEYS)})")
    if prices and not {"input", "output"} <= set(prices):
        raise ValueError("needs input and output (dollars per million tokens; cached_input and "
                         "cache_write optional)")
    return prices


def _stage(name: str) -> str:
    if name not in names(own_model=True):
        raise ValueError(f"unknown stage 'llm.stages.{name}' (stages: "
                         f"{', '.join(names(own_model=True))})")
    return name


def _rising(values: list[float]) -> list[float]:
    if values != sorted(values):
        raise ValueError("not rising")
    return values


OFF = BeforeValidator(lambda value: "off" if value is False else value)  # YAML 1.1 reads off: false
Share = Annotated[FiniteFloat, Field(ge=0, le=1), Rule("must be a share from 0 to 1")]
Fill = Annotated[FiniteFloat, Field(gt=0, le=1), Rule("must be a share above 0, at most 1")]
Auto = Annotated[int, Field(ge=0), Rule("must be 0 (auto) or more")]
Seconds = Annotated[FiniteFloat, Field(ge=0, le=MAX_INTERVAL), Rule(INTERVAL_RULE)]
Provider = Annotated[str, AfterValidator(_provider)]
Prices = Annotated[dict[str, Annotated[FiniteFloat, Field(ge=0)]], AfterValidator(_prices)]
StageName = Annotated[str, AfterValidator(_stage)]
Thresholds = Annotated[list[Annotated[FiniteFloat, Field(gt=0, le=1)]],
                       Field(min_length=3, max_length=3), AfterValidator(_rising),
                       Rule("must be three rising shares between 0 and 1")]
SECONDS = TypeAdapter(Seconds)


def interval_seconds(value: Any) -> float:
    """`value` (a number, or its text) as seconds between ticks, checked as daemon.interval
    is (`Seconds`): `novel run --interval` and the live page's interval. ValueError, naming
    the value, unless it is a number from 0 to MAX_INTERVAL (not NaN, nor infinity: `1e400`)."""
    try:
        if not isinstance(value, bool):
            return float(SECONDS.validate_python(value, strict=False))
    except ValidationError:
        pass
    raise ValueError(f"{INTERVAL_RULE}, not {value!r}")


def unwrap(hint: Any, metadata: Iterable[Any] = ()) -> tuple[Any, list[Any]]:
    """A declared type without its Annotated layers, and every constraint on it, those of
    a `Field(...)` among them included: Share -> (float, [AllowInfNan, Ge(0), Le(1), Rule])."""
    found = [c for m in metadata for c in (unwrap(Any, m.metadata)[1]
                                           if isinstance(m, FieldInfo) else [m])]
    if get_origin(hint) is Annotated:
        inner, *more = get_args(hint)
        inner, extra = unwrap(inner, more)
        return inner, found + extra
    return hint, found


def refusal(error: ErrorDetails, hint: Any, metadata: Iterable[Any] = ()) -> str:
    """What a value of this declared type is told when pydantic refuses it (`error`): the
    type's Rule, else its validator's words, its choices or the words of its bounds ("must
    be at least 1", "must be a finite number, positive"), an item's for a mapping or a list."""
    hint, found = unwrap(hint, metadata)
    rule = next((m.text for m in found if isinstance(m, Rule)), "")
    if error["type"] == "value_error":
        return rule or str((error.get("ctx") or {})["error"])
    if error["type"] == "literal_error":
        return f"must be one of {', '.join(map(str, get_args(hint)))}"
    if get_origin(hint) in (dict, list):
        hint, found = unwrap(get_args(hint)[-1])
    if rule := next((m.text for m in found if isinstance(m, Rule)), rule):
        return rule
    bounds = {k: f"{v:,g}" for m in found for k in ("ge", "gt", "le")
              if (v := getattr(m, k, None)) is not None}
    ge, gt, le = bounds.get("ge"), bounds.get("gt"), bounds.get("le")
    words = (f"from {ge} to {le}" if ge and le else f"above {gt}, at most {le}" if gt and le else
             "0 or more" if ge == "0" else f"at least {ge}" if ge else "positive" if gt == "0" else
             f"above {gt}" if gt else f"at most {le}" if le else "")
    said = ["a finite number"] * (hint is float) + [words] * bool(words)
    return f"must be {', '.join(said)}" if said else "must be valid"
