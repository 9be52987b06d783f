"""`novel usage`: what the model calls cost, and what the next ones will."""

from __future__ import annotations

import json

import click

from novel_agent.cli.common import load_config, novel_errors, open_project, project_option
from novel_agent.reports.costs import BY, Totals, money
from novel_agent.reports.usage import FORECAST_TICKS, UsageReport, project_rows, since_filter, usage_report

HEADER = ("calls", "prompt", "cached", "completion", "cost")


def cost_cell(t: Totals) -> str:
    """The dollars of a group: "unknown" when no price is known, "≥ $x" when some are."""
    return ("≥ " if 0 < t.unknown < t.calls else "") + money(t.cost)


def table_lines(report: UsageReport) -> list[str]:
    """The breakdown as a table, with the total last."""
    def line(label: str, t: Totals) -> str:
        return (f"{label:<12} {t.calls:>6,} {t.prompt_tokens:>11,} {t.cached_tokens:>10,} "
                f"{t.completion_tokens:>11,} {cost_cell(t):>12}")
    head = f"{report.by:<12} " + " ".join(f"{h:>{w}}" for h, w in zip(HEADER, (6, 11, 10, 11, 12)))
    return [head, *(line(str(k), t) for k, t in report.groups.items()), line("total", report.total)]


def summary_lines(report: UsageReport) -> list[str]:
    """Cache hits, prose, the summarizer's share, the forecast and the ceiling."""
    t = report.total
    lines = [f"prompt cache    {t.cache_share:.0%} of prompt tokens were cached"]
    tokens, cost = report.per_thousand_words()
    if tokens is not None:
        lines.append(f"per 1,000 words {tokens:,.0f} tokens, {money(cost)} "
                     f"({report.words:,} words in {len(report.ticks)} scenes)")
    share_tokens, share_cost = report.summarizer_share()
    cost_part = f", {share_cost:.0%} of the cost" if share_cost is not None else ""
    lines.append(f"summarizer      {share_tokens:.0%} of the tokens{cost_part}")
    if report.measured:
        lines.append(f"forecast        next {FORECAST_TICKS} ticks ≈ {money(report.forecast)} "
                     f"(the mean of the last {report.measured} ticks)")
    if report.ceiling:
        left = report.ceiling - report.spent
        lines.append(f"ceiling         llm.max_cost {money(report.ceiling)}: "
                     f"{money(report.spent)} spent, {money(max(left, 0.0))} left")
    if report.counts.line():
        lines.append(f"token counts    {report.counts.line()}")
    if t.unknown:
        lines.append(f"note: {t.unknown} call(s) of unknown price are not in the dollars")
    if t.failed:
        lines.append(f"failed calls    {t.failed} (their errors: --json)")
    return lines


@click.command("usage")
@project_option
@click.option("--by", type=click.Choice(BY), default="stage", show_default=True,
              help="Break the totals down by stage, tick, model or day (UTC).")
@click.option("--since", metavar="T", default=None,
              help="Only calls from tick T on, or from a date (YYYY-MM-DD) on.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@novel_errors
def usage_cmd(project_spec: str | None, by: str, since: str | None, as_json: bool) -> None:
    """What the model calls cost: tokens, cache hits, dollars, and a forecast.

    \b
    Example:
      novel usage -p harbour
      novel usage -p harbour --by tick --since 20
      novel usage -p harbour --by day --json
    """
    try:
        since_filter(since)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    project = open_project(project_spec)
    report = usage_report(project, load_config(project), project_rows(project), by=by,
                          since=since)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1, ensure_ascii=False))
        return
    if not report.total.calls:
        click.echo(f"no model calls recorded for {project.name}"
                   + (f" since {since}" if since else "") + " yet")
        return
    click.echo(f"usage of {project.name}" + (f" since {since}" if since else ""))
    click.echo(report.price)
    for line in ["", *table_lines(report), "", *summary_lines(report)]:
        click.echo(line)
