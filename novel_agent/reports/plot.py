"""`novel stats --plot`: a page of small charts of a project's Stats, PNG or SVG.

Needs the optional extra `plot` (matplotlib): `pip install 'novel_agent[plot]'`.
It draws on matplotlib's Agg canvas, never through pyplot's global state:
the writer's prompt per tick stacked by section under its budget (two columns
wide), each stage's prompt tokens, words per scene, the recall probe's share per
tick, and the cumulative tokens and cost; in a book with an outline, a row more:
the target tension per tick against the realized; in a book with scenes, a row of
the prose numbers per scene: slop and repeated n-grams, lexical diversity and
sentence spread, the dialogue share and the distance from style.yaml.
"""

from __future__ import annotations

from itertools import accumulate
from pathlib import Path
from typing import Any

from novel_agent.errors import MissingExtraError
from novel_agent.reports.prose import ECHO_SCENES
from novel_agent.reports.stats import Stats, shown_stages

FORMATS = {".png": "png", ".svg": "svg"}
INSTALL = "pip install 'novel_agent[plot]'"
# each stage's colour in the plot, by its place among the stages shown
COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3")


def _figure(rows: int = 2) -> Any:
    """A matplotlib Figure on the Agg canvas, or MissingExtraError saying how to install it."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtraError(f"--plot needs matplotlib, an optional extra: {INSTALL}",
                                extra="plot", package="matplotlib") from None
    figure = Figure(figsize=(12, 7.5 * rows / 2), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def plot_stats(stats: Stats, path: Path) -> Path:
    """Draw `stats` into `path` (.png or .svg); returns the path."""
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"--plot writes .png or .svg, not {path.name!r}")
    paced = any(t.tension_target is not None or t.tension is not None for t in stats.ticks)
    prose = bool(stats.prose.scenes)
    rows = 2 + paced + prose
    figure = _figure(rows=rows)
    figure.suptitle(f"{stats.project}: {len(stats.ticks)} ticks", fontsize=13)
    grid = figure.add_gridspec(rows, 3)
    _sections(figure.add_subplot(grid[0, :2]), stats)
    _stages(figure.add_subplot(grid[0, 2]), stats)
    _words(figure.add_subplot(grid[1, 0]), stats)
    _recall(figure.add_subplot(grid[1, 1]), stats)
    _cumulative(figure.add_subplot(grid[1, 2]), stats)
    if paced:
        _tension(figure.add_subplot(grid[2, :]), stats)
    if prose:
        _repetition(figure.add_subplot(grid[rows - 1, 0]), stats)
        _diversity(figure.add_subplot(grid[rows - 1, 1]), stats)
        _shares(figure.add_subplot(grid[rows - 1, 2]), stats)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format=kind)
    return path


def _sections(ax: Any, stats: Stats) -> None:
    """The writer's prompt per tick, stacked by section, with its budget."""
    ticks = stats.series("tick")
    layers = [[t.sections.get(name, 0) for t in stats.ticks] for name in stats.sections]
    colours = [_palette(i) for i in range(len(layers))]
    if layers:
        ax.stackplot(ticks, layers, labels=stats.sections, colors=colours, linewidth=0)
    tallest = max((sum(column) for column in zip(*layers)), default=0)
    budgets = [b for b in stats.series("budget") if b]
    title = "writer prompt tokens per tick, by section"
    if budgets and max(budgets) <= 3 * max(tallest, 1):
        ax.plot(ticks, [t.budget for t in stats.ticks], "k--", linewidth=1, label="budget")
    elif budgets:
        title += f"\n(budget {max(budgets):,} tokens, above the scale)"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left", ncols=3, frameon=False)
    _axes(ax, "tokens")
    drawn = max(budgets) if budgets and "above" not in title else tallest
    ax.set_ylim(top=max(ax.get_ylim()[1], drawn * 1.35))    # room for the legend


def _stages(ax: Any, stats: Stats) -> None:
    """Each stage's prompt tokens per tick (the summarizer's only where it ran)."""
    for n, stage in enumerate(shown_stages()):
        points = [(t.tick, t.prompt[stage]) for t in stats.ticks if stage in t.prompt]
        if points:
            xs, ys = zip(*points)
            style, label = ("o", "summarizer (its calls summed)") if stage == "summarizer" \
                else ("-", stage)
            ax.plot(xs, ys, style, label=label, color=COLOURS[n % len(COLOURS)], markersize=4)
    ax.set_title("prompt tokens per tick, by stage", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    _axes(ax, "tokens")


def _words(ax: Any, stats: Stats) -> None:
    """Words per scene, with their mean."""
    points = [(t.tick, t.words) for t in stats.ticks if t.words is not None]
    if points:
        xs, ys = zip(*points)
        ax.bar(xs, ys, color="#8172b3", width=0.8)
        average = sum(ys) / len(ys)
        ax.axhline(average, color="k", linestyle="--", linewidth=1,
                   label=f"mean {average:,.0f}")
        ax.legend(fontsize=7, loc="upper right", frameon=False)
    ax.set_title("words per scene", fontsize=10)
    _axes(ax, "words")
    tallest = max((t.words or 0 for t in stats.ticks), default=0)
    ax.set_ylim(top=max(ax.get_ylim()[1], tallest * 1.15))     # room for the legend


def _recall(ax: Any, stats: Stats) -> None:
    """The recall probe: the share of the facts relevant to each scene that reached its
    writer (ticks without a relevant fact left out), with the mean."""
    from matplotlib.ticker import PercentFormatter
    points = [(t.tick, t.recall["share"]) for t in stats.ticks
              if t.recall and t.recall["relevant"]]
    if points:
        xs, ys = zip(*points)
        ax.plot(xs, ys, "o-", color="#55a868", markersize=3, linewidth=1)
        average = sum(ys) / len(ys)
        ax.axhline(average, color="k", linestyle="--", linewidth=1,
                   label=f"mean {average:.0%} over {len(ys)} ticks")
        ax.legend(fontsize=7, loc="best", frameon=False)
    ax.set_title("recall probe: of the facts relevant to\neach scene, the share its writer got",
                 fontsize=10)
    _axes(ax, "relevant facts reached")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(0, 1.05)


def _cumulative(ax: Any, stats: Stats) -> None:
    """Prompt tokens sent so far, and dollars spent so far (on a second axis)."""
    ticks = stats.series("tick")
    prompt = list(accumulate(sum(t.prompt.values()) for t in stats.ticks))
    ax.plot(ticks, prompt, color="#4c72b0", label="prompt tokens")
    _axes(ax, "prompt tokens, cumulative")
    costs = stats.series("cost")
    money = ax.twinx()
    if costs and all(c is not None for c in costs):
        spent = sum(costs)
        money.plot(ticks, list(accumulate(costs)), color="#c44e52", label="cost")
        money.set_ylabel("dollars, cumulative", fontsize=8)
        money.tick_params(labelsize=7)
        money.set_ylim(0, spent * 1.1 or 1)
        note = f"${spent:,.4f}" if spent else "$0 (a local or offline model)"
    else:
        money.set_yticks([])
        note = "cost unknown for some ticks"
    ax.set_title(f"cumulative prompt tokens and cost\n{note}", fontsize=10)
    lines = ax.get_legend_handles_labels()[0] + money.get_legend_handles_labels()[0]
    ax.legend(lines, [line.get_label() for line in lines], fontsize=7, loc="upper left",
              frameon=False)


def _tension(ax: Any, stats: Stats) -> None:
    """The target tension per tick (as the planner was shown it) and the realized one."""
    for name, style, colour, label in (("tension_target", "--", "#8c8c8c", "target"),
                                       ("tension", "o-", "#c44e52", "realized")):
        points = [(t.tick, getattr(t, name)) for t in stats.ticks
                  if getattr(t, name) is not None]
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, ys, style, color=colour, label=label, markersize=3, linewidth=1)
    ax.set_title("tension per scene: the outline's target and the scene's, 0-10", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    _axes(ax, "tension")
    ax.set_ylim(0, 10.5)


def _prose_line(ax: Any, stats: Stats, name: str, style: str, colour: str, label: str) -> list:
    """One prose measure per scene (scenes without it left out)."""
    points = [(t, getattr(n, name)) for t, n in sorted(stats.prose.scenes.items())
              if getattr(n, name) is not None]
    if not points:
        return []
    xs, ys = zip(*points)
    return list(ax.plot(xs, ys, style, color=colour, label=label, markersize=2, linewidth=1))


def _legend(ax: Any, lines: list, *twins: Any) -> None:
    """The lines' legend at the top left, with room made for it above them."""
    for each in (ax, *twins):
        each.set_ylim(top=each.get_ylim()[1] * 1.3)
    ax.legend(lines, [line.get_label() for line in lines], fontsize=7, loc="upper left",
              frameon=False)


def _repetition(ax: Any, stats: Stats) -> None:
    """Slop and repeated 3- to 5-grams per 1,000 words, per scene."""
    lines = _prose_line(ax, stats, "repeats_per_1000", "-", "#4c72b0", "n-grams within the scene")
    lines += _prose_line(ax, stats, "echoes_per_1000", "-", "#8172b3",
                         f"n-grams from the last {ECHO_SCENES} scenes")
    _axes(ax, "repeated 3- to 5-grams per 1,000 words")
    slop = ax.twinx()
    lines += _prose_line(slop, stats, "slop_per_1000", "o-", "#c44e52", "slop phrases")
    slop.set_ylabel("slop per 1,000 words", fontsize=8)
    slop.tick_params(labelsize=7)
    slop.set_ylim(bottom=0, top=max(slop.get_ylim()[1], 1))
    ax.set_title("slop and repeated n-grams per 1,000 words, per scene", fontsize=10)
    _legend(ax, lines, slop)


def _diversity(ax: Any, stats: Stats) -> None:
    """Lexical diversity (MTLD) and the sentence-length spread, per scene."""
    lines = _prose_line(ax, stats, "mtld", "-", "#55a868", "MTLD")
    _axes(ax, "MTLD")
    spread = ax.twinx()
    lines += _prose_line(spread, stats, "sentence_sd", "-", "#dd8452",
                         "sentence-length spread (sd, words)")
    spread.set_ylabel("words", fontsize=8)
    spread.tick_params(labelsize=7)
    spread.set_ylim(bottom=0)
    ax.set_title("lexical diversity and sentence-length spread, per scene", fontsize=10)
    _legend(ax, lines, spread)


def _shares(ax: Any, stats: Stats) -> None:
    """The dialogue share, and the distance from style.yaml when there is one."""
    from matplotlib.ticker import PercentFormatter
    lines = _prose_line(ax, stats, "dialogue_share", "-", "#937860", "dialogue share")
    lines += _prose_line(ax, stats, "distance", "-", "#c44e52", "distance from style.yaml")
    _axes(ax, "share, distance")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(0, 1.05)
    ax.set_title("dialogue share" + (" and distance from the style" if stats.prose.style else "")
                 + ", per scene", fontsize=10)
    _legend(ax, lines)
    ax.set_ylim(0, 1.3)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])


def _axes(ax: Any, ylabel: str) -> None:
    from matplotlib.ticker import FuncFormatter, MaxNLocator
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:,.0f}"))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("tick", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3, linewidth=0.5)
    ax.set_ylim(bottom=0)


def _palette(i: int) -> str:
    """A colour per section, distinct for up to 20 sections."""
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3",
               "#8c8c8c", "#ccb974", "#64b5cd", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
               "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    return colours[i % len(colours)]
