"""`novel stats`: the story's numbers per tick, as text, JSON or a page of charts."""

from __future__ import annotations

import json
from pathlib import Path

import click

from novel_agent.cli.common import load_config, novel_errors, open_project, project_option
from novel_agent.reports.costs import money
from novel_agent.reports.prose import ECHO_SCENES, ChapterNumbers
from novel_agent.reports.stats import Stats, collect_stats, shown_stages, summary
from novel_agent.reports.usage import project_rows


def _spread(values: dict, unit: str = "") -> str:
    if values["mean"] is None:
        return "none yet"
    return (f"mean {values['mean']:,.0f}{unit}, min {values['min']:,}, max {values['max']:,}, "
            f"last {values['last']:,}")


def stats_lines(stats: Stats) -> list[str]:
    """What `novel stats` prints: one line per measure."""
    s = summary(stats)
    lines = [f"stats of {stats.project}: {s['scenes']} scenes, {s['words']:,} words",
             f"words per scene   {_spread(s['words_per_scene'])}"]
    for stage in shown_stages():
        values = s["prompt_tokens_per_tick"][stage]
        if values["mean"] is not None and stage == "summarizer":   # 4-5 calls, not one prompt
            lines.append(f"{'summarizer calls':<17} {_spread(values)} tokens a checkpoint "
                         "tick, all its calls summed")
        elif values["mean"] is not None:
            lines.append(f"{stage + ' prompt':<17} {_spread(values)} tokens")
    if stats.counts.line():
        lines.append(f"{'token counts':<17} {stats.counts.line()}")
    shares = sorted(s["writer_sections_last_tick"].items(), key=lambda kv: -kv[1])
    if shares:
        lines.append("writer sections   " + ", ".join(f"{name} {share:.0%}"
                                                      for name, share in shares if share))
    levels = s["compaction_levels"]
    if levels:
        lines.append("compaction        " + ", ".join(f"level {k}: {n} ticks"
                                                      for k, n in levels.items()))
    prefix = s["prefix_share"]
    if prefix["mean"] is not None:
        lines.append(f"prefix shared     mean {prefix['mean']:.0%}, last {prefix['last']:.0%}")
    recall = s["recall"]
    if recall["ticks"]:
        lines.append(f"recall            mean {recall['mean']:.0%}, min {recall['min']:.0%}, "
                     f"last {recall['last']:.0%} of the relevant facts reached the writer "
                     f"({recall['ticks']} tick{'s' if recall['ticks'] != 1 else ''} had one)")
    tension = s["tension"]
    if tension["ticks"]:
        lines.append(f"{'tension':<17} target vs realized: last {tension['last_target']} vs "
                     f"{tension['last_realized']}, mean {tension['target_mean']:.1f} vs "
                     f"{tension['realized_mean']:.1f}, off by {tension['mean_gap']:.1f} on "
                     f"average ({tension['ticks']} scene{'s' if tension['ticks'] != 1 else ''} "
                     "rated)")
    lines += prose_lines(stats)
    for level in stats.levels:
        docs = f"{level.docs} doc{'s' if level.docs != 1 else ''}"
        lines.append(f"summaries         {level.label:<12} {docs:>8}  "
                     f"{level.tokens:>7,} tokens  compression {level.compression:.1f}×")
    cost = s["cost_per_tick"]
    if cost["mean"] is not None or cost["unknown_ticks"]:
        lines.append(f"cost per tick     mean {money(cost['mean'])}, last {money(cost['last'])}, "
                     f"total {money(cost['total'])}"
                     + (f" ({cost['unknown_ticks']} ticks of unknown price)"
                        if cost["unknown_ticks"] else ""))
    return lines


CHAPTERS_SHOWN = 12      # more chapters than this: the first and last six, --json has all


def _change(name: str, values: dict, form: str) -> str | None:
    worse = values["degradation"]
    if worse is None:
        return None
    return f"{name} {format(worse['first'], form)} → {format(worse['last'], form)}"


def _chapter_line(chapter: ChapterNumbers) -> str:
    n = chapter.numbers
    span = f"scene {chapter.first}" if chapter.first == chapter.last else \
        f"scenes {chapter.first}–{chapter.last}"
    title = chapter.title if "scene" in chapter.title else f"{chapter.title} ({span})"
    return (f"{'chapter':<17} {title}: slop {n.slop_per_1000:.1f}, n-grams "
            f"{n.repeats_per_1000:.1f}, MTLD {n.mtld:.0f}, spread {n.sentence_sd:.1f}, "
            f"dialogue {n.dialogue_share:.0%}"
            + (f", distance {n.distance:.2f}" if n.distance is not None else ""))


def prose_lines(stats: Stats) -> list[str]:
    """The prose numbers' lines: the scenes' means, the degradation, each chapter."""
    p = stats.prose.summary()
    if not p["scenes"]:
        return []
    slop, grams, echoes = p["slop_per_1000"], p["repeats_per_1000"], p["echoes_per_1000"]
    used = ", ".join(f"\"{phrase}\" ×{n}" for phrase, n in p["overused"])
    lines = [f"{'slop':<17} mean {slop['mean']:.1f} per 1,000 words, last {slop['last']:.1f}"
             + (f"; most used: {used}" if used else ""),
             f"{'repeated n-grams':<17} 3- to 5-grams per 1,000 words: within a scene mean "
             f"{grams['mean']:.1f}"
             + (f", from the last {ECHO_SCENES} scenes mean {echoes['mean']:.1f}"
                if echoes["mean"] is not None else ""),
             f"{'MTLD':<17} mean {p['mtld']['mean']:.0f}, last {p['mtld']['last']:.0f} "
             "(lexical diversity)",
             f"{'sentence length':<17} mean {p['sentence_mean']['mean']:.1f} words, spread "
             f"{p['sentence_sd']['mean']:.1f} (standard deviation), last spread "
             f"{p['sentence_sd']['last']:.1f}",
             f"{'dialogue share':<17} mean {p['dialogue_share']['mean']:.0%}, last "
             f"{p['dialogue_share']['last']:.0%}"]
    far = p["distance"]
    if far["mean"] is not None:
        last = stats.prose.scenes[max(stats.prose.scenes)]
        lines.append(f"{'style distance':<17} mean {far['mean']:.2f}, last {far['last']:.2f}"
                     + (f" (farthest: {last.farthest})" if last.farthest else ""))
    changes = [_change("slop", slop, ".1f"), _change("n-grams", grams, ".1f"),
               _change("echoes", echoes, ".1f"), _change("MTLD", p["mtld"], ".0f"),
               _change("spread", p["sentence_sd"], ".1f"),
               _change("dialogue", p["dialogue_share"], ".0%"),
               _change("distance", far, ".2f")]
    if any(changes) and len(stats.prose.scenes) >= 4:
        lines.append(f"{'degradation':<17} last quarter of the scenes against the first: "
                     + ", ".join(c for c in changes if c))
    chapters = stats.prose.chapters
    shown = chapters if len(chapters) <= CHAPTERS_SHOWN else chapters[:6] + chapters[-6:]
    for i, chapter in enumerate(shown):
        if i == 6 and len(shown) < len(chapters):
            lines.append(f"{'chapter':<17} … {len(chapters) - 12} more (--json has them all)")
        lines.append(_chapter_line(chapter))
    return lines


@click.command("stats")
@project_option
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE.png|FILE.svg",
              help="Draw a page of charts (needs: pip install 'novel_agent[plot]').")
@click.option("--json", "as_json", is_flag=True, help="Print every tick's numbers as JSON.")
@novel_errors
def stats_cmd(project_spec: str | None, plot_file: Path | None, as_json: bool) -> None:
    """The story's numbers: words, prompt tokens by stage and section, compaction,
    shared prefix, the recall probe, summary compression and cost, and in a book with
    an outline the target tension against the realized, per tick; the prose numbers
    (slop, repeated n-grams, MTLD, sentence spread, dialogue share, distance from
    style.yaml) per scene and per chapter, and how the last quarter compares with the
    first.

    \b
    Example:
      novel stats -p harbour
      novel stats -p harbour --plot harbour.png
      novel stats -p harbour --json
    """
    if plot_file is not None and plot_file.suffix.lower() not in (".png", ".svg"):
        raise click.BadParameter("give a .png or .svg file", param_hint="--plot")
    project = open_project(project_spec)
    stats = collect_stats(project, load_config(project), project_rows(project))
    if as_json:
        click.echo(json.dumps(stats.to_dict(), indent=1, ensure_ascii=False))
    else:
        for line in stats_lines(stats):
            click.echo(line)
    if plot_file is not None:
        from novel_agent.reports.plot import plot_stats
        click.echo(f"wrote {plot_stats(stats, plot_file)}", err=as_json)
