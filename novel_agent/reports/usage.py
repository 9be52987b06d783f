"""`novel usage`'s numbers: a project's usage rows, filtered, totalled, broken down,
set against the prose they paid for, and projected forward.

The rows come from the index (`.novel/index.db`), or from `.novel/usage.jsonl`
when the index has none (a deleted index); nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from novel_agent.config.settings import Config
from novel_agent.index.db import Index
from novel_agent.index.ledger import ledger_path, read_rows
from novel_agent.models.prices import describe_prices
from novel_agent.reports.costs import WINDOW, Row, Totals, breakdown, forecast, recent_costs, totals
from novel_agent.reports.counts import Counts, compare_counts
from novel_agent.reports.stats import tick_logs
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import scene_words

FORECAST_TICKS = 100


@dataclass
class UsageReport:
    """Totals, a breakdown, and the ratios `novel usage` prints."""

    project: str
    by: str
    since: str
    total: Totals
    groups: dict[Any, Totals]
    summarizer: Totals
    ticks: list[int]               # the ticks the rows worked for
    words: int                     # words of those ticks' scenes
    price: str                     # the price line (prices.describe_price)
    forecast: float | None         # dollars for the next FORECAST_TICKS ticks
    measured: int                  # ticks the forecast is the mean of
    ceiling: float = 0.0           # llm.max_cost (0 = none)
    spent: float = 0.0             # the project's known spending, all rows
    errors: list[str] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)   # the server's prompt counts against ours

    def per_thousand_words(self) -> tuple[float | None, float | None]:
        """(tokens, dollars) per 1,000 words of prose; None without prose or price."""
        if not self.words:
            return None, None
        cost = self.total.cost
        return (self.total.tokens * 1000 / self.words,
                None if cost is None else cost * 1000 / self.words)

    def summarizer_share(self) -> tuple[float, float | None]:
        """(share of the tokens, share of the dollars) spent by the summarizer."""
        tokens = self.summarizer.tokens / self.total.tokens if self.total.tokens else 0.0
        cost, whole = self.summarizer.cost, self.total.cost
        return tokens, (cost / whole if cost is not None and whole else None)

    def to_dict(self) -> dict[str, Any]:
        per_tokens, per_cost = self.per_thousand_words()
        share_tokens, share_cost = self.summarizer_share()
        return {
            "project": self.project, "by": self.by, "since": self.since, "price": self.price,
            "total": self.total.to_dict(),
            "groups": [{self.by: key, **t.to_dict()} for key, t in self.groups.items()],
            "ticks": len(self.ticks), "words": self.words,
            "per_1000_words": {"tokens": _round(per_tokens, 1), "cost": _round(per_cost, 6)},
            "summarizer_share": {"tokens": round(share_tokens, 4),
                                 "cost": _round(share_cost, 4)},
            "forecast": {"ticks": FORECAST_TICKS, "cost": _round(self.forecast, 6),
                         "from_last_ticks": self.measured},
            "ceiling": {"max_cost": self.ceiling, "spent": round(self.spent, 6)},
            "errors": self.errors,
            "counts": self.counts.to_dict(),
        }


def since_filter(text: str | None) -> Callable[[Row], bool]:
    """Which rows `--since T` keeps: a whole number is a tick (that tick and later), else
    an ISO date or time in UTC ("2026-11-01", "2026-11-01T12:00"). ValueError otherwise."""
    if not text:
        return lambda row: True
    if text.strip().isdigit():
        first = int(text)
        return lambda row: (row.get("tick") or 0) >= first
    try:
        start = (datetime.fromisoformat(text) if "T" in text or " " in text
                 else datetime.combine(date.fromisoformat(text), datetime.min.time()))
    except ValueError:
        raise ValueError(f"--since takes a tick number or a date (YYYY-MM-DD), "
                         f"not {text!r}") from None
    bound = start.replace(tzinfo=None).isoformat(timespec="seconds")
    return lambda row: bool(row.get("at")) and row["at"][:19] >= bound


def project_rows(project: Project) -> list[Row]:
    """Every usage row of the project: the index's, or the ledger file's if the index
    has none."""
    index = Index(project.index_db)
    try:
        rows = index.usage_rows()
    finally:
        index.close()
    return rows or read_rows(ledger_path(project))


def usage_report(project: Project, config: Config, rows: list[Row], *, by: str = "stage",
                 since: str | None = None) -> UsageReport:
    """The report of `rows` (kept by `since`), grouped `by` stage, tick, model or day."""
    kept = [row for row in rows if since_filter(since)(row)]
    ticks = sorted({row.get("tick") or 0 for row in kept} - {0})
    words = sum(scene_words(project.scene_path(t)) for t in ticks
                if project.scene_path(t).is_file())
    return UsageReport(
        project=project.name, by=by, since=since or "", total=totals(kept),
        groups=breakdown(kept, by),
        summarizer=totals(r for r in kept if r.get("stage") == "summarizer"),
        ticks=ticks, words=words, price=describe_prices(config),
        forecast=forecast(rows, FORECAST_TICKS), measured=len(recent_costs(rows, WINDOW)),
        ceiling=config.llm.max_cost, spent=totals(rows).known_cost,
        errors=[f"tick {r.get('tick')} {r.get('stage')}: {r['error']}" for r in kept
                if r.get("error")],
        counts=compare_counts(kept, tick_logs(project)))


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
