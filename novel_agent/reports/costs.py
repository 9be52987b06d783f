"""What the usage rows add up to: totals, breakdowns, per-tick costs, the forecast
and the cost ceiling.

Pure functions over usage rows (dicts as `Index.usage_rows` gives them), and
`cost_guard`, the check a tick loop calls before each tick (`novel tick -n`
and `novel run`). A row's `cost` is None when its price was unknown:
such calls are counted apart (`Totals.unknown`), never as 0 dollars.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from statistics import mean
from typing import TYPE_CHECKING, Any

from novel_agent.config.stages import names
from novel_agent.errors import ConfigError, CostCeilingError, NovelError
from novel_agent.models.prices import describe_price, stage_prices

if TYPE_CHECKING:
    from novel_agent.tick.session import Session

Row = dict[str, Any]
WINDOW = 10            # the last ticks an estimate or a forecast is made from
BY = ("stage", "tick", "model", "day")


@dataclass
class Totals:
    """Calls, tokens and dollars of a set of usage rows."""

    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0     # prompt tokens written to the provider's prompt cache
    completion_tokens: int = 0
    known_cost: float = 0.0     # dollars of the calls whose price is known
    unknown: int = 0            # calls whose price is unknown
    latency: float = 0.0

    def add(self, row: Row) -> Totals:
        self.calls += 1
        self.failed += bool(row.get("error"))
        self.prompt_tokens += row.get("prompt_tokens") or 0
        self.cached_tokens += row.get("cached_tokens") or 0
        self.cache_write_tokens += row.get("cache_write_tokens") or 0
        self.completion_tokens += row.get("completion_tokens") or 0
        self.latency += row.get("latency") or 0.0
        if row.get("cost") is None:
            self.unknown += 1
        else:
            self.known_cost += row["cost"]
        return self

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        """The dollars, None when no call's price is known (a lower bound if some are)."""
        return None if self.calls and self.unknown == self.calls else self.known_cost

    @property
    def cache_share(self) -> float:
        """The share of prompt tokens the provider's prompt cache served."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "failed": self.failed, "prompt_tokens": self.prompt_tokens,
                "cached_tokens": self.cached_tokens, "cache_write_tokens": self.cache_write_tokens,
                "completion_tokens": self.completion_tokens, "tokens": self.tokens,
                "cost": _round(self.cost), "unknown_price_calls": self.unknown,
                "cache_share": round(self.cache_share, 4), "latency": round(self.latency, 3)}


def totals(rows: Iterable[Row]) -> Totals:
    """The totals of `rows`."""
    total = Totals()
    for row in rows:
        total.add(row)
    return total


def group_key(row: Row, by: str) -> Any:
    """The group a row falls in: its stage, tick, model, or day (UTC, from `at`)."""
    if by == "day":
        return (row.get("at") or "")[:10] or "unknown"
    if by == "tick":
        return row.get("tick") or 0
    return row.get(by) or "unknown"


def breakdown(rows: Iterable[Row], by: str) -> dict[Any, Totals]:
    """Totals per group, in a natural order (stages in pipeline order, ticks rising)."""
    if by not in BY:
        raise ValueError(f"no breakdown by {by!r} (expected one of {', '.join(BY)})")
    groups: dict[Any, Totals] = {}
    for row in rows:
        groups.setdefault(group_key(row, by), Totals()).add(row)
    known = names()      # the stages in the order a tick meets them (config/stages.py)
    order = (lambda k: (known.index(k) if k in known else len(known), k)) if by == "stage" \
        else (lambda k: k)
    return {key: groups[key] for key in sorted(groups, key=order)}


def tick_costs(rows: Iterable[Row]) -> dict[int, float | None]:
    """Dollars per tick (summarizer calls included), None for a tick with a call of
    unknown price; rows of tick 0 (before any tick) are left out."""
    per_tick = {tick: t.cost if t.unknown == 0 else None
                for tick, t in breakdown(rows, "tick").items()}
    return {tick: cost for tick, cost in per_tick.items() if tick > 0}


def tick_prompts(rows: Iterable[Row]) -> dict[int, dict[str, int]]:
    """Prompt tokens per tick and stage as the model counted them (every call: repairs,
    continuations and summaries included): the same rows `novel usage` totals, so
    `novel stats` and `novel usage` agree. Summarizer stages ("summarizer_...") count
    as one."""
    out: dict[int, dict[str, int]] = {}
    for row in rows:
        tick, stage = row.get("tick") or 0, str(row.get("stage") or "unknown")
        stage = "summarizer" if stage.startswith("summarizer") else stage
        if tick > 0:
            stages = out.setdefault(tick, {})
            stages[stage] = stages.get(stage, 0) + (row.get("prompt_tokens") or 0)
    return out


def recent_costs(rows: Iterable[Row], window: int = WINDOW) -> list[float]:
    """The costs of the last `window` ticks whose price is known."""
    known = [cost for _, cost in sorted(tick_costs(rows).items()) if cost is not None]
    return known[-window:]


def estimate_next_tick(rows: Iterable[Row], window: int = WINDOW) -> float | None:
    """What the next tick may cost: the dearest of the last `window` ticks (a checkpoint
    tick among them included); None with no history."""
    recent = recent_costs(rows, window)
    return max(recent) if recent else None


def forecast(rows: Iterable[Row], ticks: int = 100, window: int = WINDOW) -> float | None:
    """The cost of the next `ticks` ticks at the mean of the last `window`; None with
    no history."""
    recent = recent_costs(rows, window)
    return mean(recent) * ticks if recent else None


# A tick may cost more than the dearest before it (the prompts grow as a book begins: a
# fleet book's second tick cost 15% more than its first and passed a $1.50 ceiling by
# $0.003): the ceiling's estimate allows this much more, so spending stays under it.
CEILING_HEADROOM = 1.25


def check_ceiling(rows: list[Row], ceiling: float, *, label: str = "llm.max_cost",
                  spent_after: int | None = None, next_tick: int | None = None,
                  window: int = WINDOW) -> None:
    """Raise CostCeilingError if the next tick's estimate would take the spending past
    `ceiling` dollars (0 = no ceiling). The spending is every row's cost, or only the
    rows after id `spent_after` (a run's own); the estimate comes from all `rows` (the
    dearest recent tick, and CEILING_HEADROOM). With no history the next tick is not
    estimated: it is the first measurement."""
    if ceiling <= 0:
        return
    spent = totals(r for r in rows if spent_after is None or r["id"] > spent_after).known_cost
    estimate = (estimate_next_tick(rows, window) or 0.0) * CEILING_HEADROOM
    if round(spent + estimate, 9) <= ceiling:    # sums of rounded dollars, not float noise
        return
    which = f"tick {next_tick}" if next_tick else "the next tick"
    measured = len(recent_costs(rows, window))
    basis = (f"the dearest of the last {measured} ticks, and "
             f"{CEILING_HEADROOM - 1:.0%} more" if measured else "none measured yet")
    raise CostCeilingError(
        f"cost ceiling: {money(spent)} spent of {label} {money(ceiling)}, and {which} would "
        f"cost about {money(estimate)} ({basis}): not started",
        spent=spent, estimate=estimate, ceiling=ceiling, tick=next_tick)


def cost_guard(session: Session, run_limit: float = 0.0, *,
               run_start: int | None = None,
               run_label: str = "--max-cost") -> Callable[[], None]:
    """The check to call before each tick: it raises CostCeilingError when the next
    tick would pass `llm.max_cost` (the project's total spending) or `run_limit`
    (dollars spent since usage row `run_start`, default: the last one now; `novel run
    --max-cost`; `run_label` names it in the error: `novel fleet`'s is --book-max-cost).

    A ceiling on a model whose price is unknown is a ConfigError here, at the start.
    """
    start = session.live_index.last_usage_id() if run_start is None else run_start
    ceilings = [(c, label, after) for c, label, after in (
        (session.config.llm.max_cost, "llm.max_cost", None),
        (run_limit, run_label, start)) if c > 0]
    if ceilings and (unpriced := session.unpriced()):
        raise ConfigError(f"{ceilings[0][1]} is set, but the "
                          f"{describe_price(None, unpriced[0])}",
                          key="llm.max_cost")

    def guard() -> None:
        if not ceilings:
            return
        session.flush()
        rows = session.live_index.usage_rows()
        for ceiling, label, after in ceilings:
            check_ceiling(rows, ceiling, label=label, spent_after=after,
                          next_tick=session.project.tick() + 1)

    return guard


def ceiling_hook(run_limit: float = 0.0) -> Callable[[Any], str]:
    """`novel run`'s before_tick hook: `cost_guard` on the daemon's session (made again
    when the daemon starts a new one, the run's spending still counted from its start).
    It raises CostCeilingError, which ends the run with exit code 4."""
    start: list[int] = []
    guards: dict[int, Callable[[], None]] = {}

    def hook(daemon: Any) -> str:
        session = daemon.session
        if not start:
            start.append(session.live_index.last_usage_id() or 0)
        if id(session) not in guards:
            guards.clear()
            guards[id(session)] = cost_guard(session, run_limit, run_start=start[0])
        guards[id(session)]()
        return ""

    return hook


def money(dollars: float | None) -> str:
    """Dollars for people: "$0.0123" under a dollar, "$12.34" above, "$0" for nothing,
    "unknown" for None."""
    if dollars is None:
        return "unknown"
    if dollars == 0:
        return "$0"
    return f"${dollars:,.4f}" if abs(dollars) < 1 else f"${dollars:,.2f}"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


DEFAULT_RUN_CEILING = 1.00    # dollars a `novel run` may spend on a priced model unless told


def run_terms(config: Any, max_cost: float | None) -> tuple[float, str]:
    """What a `novel run` may spend and how fast it goes: (the run's ceiling in dollars, 0
    for none; the line that says so, first in the run's output). On a model with a price
    and no ceiling asked for (`--max-cost`, `llm.max_cost`), the run stops at
    DEFAULT_RUN_CEILING: 75 scenes in 10 s is a surprise bill on a paid API."""
    d = config.daemon
    pace = (f"a tick every {d.interval:g} s" if d.interval
            else "ticks back to back (daemon.interval 0; --interval S to space them)")
    try:      # each stage's (llm.stages): paid when any is, known when all are
        prices = [price for _, price in stage_prices(config).values()]
    except NovelError:
        prices = [None]
    paid = any(p is not None and (p.input or p.output) for p in prices)
    price = None if None in prices else prices[0]
    ceiling = max_cost if max_cost is not None else (
        DEFAULT_RUN_CEILING if paid and not config.llm.max_cost else 0.0)
    if ceiling:
        why = ("the default on a priced model; --max-cost D to change it, 0 for none"
               if max_cost is None else "--max-cost")
        spend = f"this run stops before it spends more than {money(ceiling)} ({why})"
    elif config.llm.max_cost:
        spend = f"the project stops at llm.max_cost {money(config.llm.max_cost)}"
    elif paid:
        spend = "no cost ceiling (--max-cost 0)"
    else:
        spend = "no cost (a free model)" if price is not None else "no cost ceiling"
    return ceiling, f"pace: {pace}; {spend}"
