"""`novel stats`: the story's numbers tick by tick, from its files, prompt logs and ledger.

Per tick: the scene's words; each stage's prompt tokens and the writer's
tokens by section, its budget, compaction level and the share of its prompt
shared with the tick before (from the prompt logs `.novel/log/tick_NNN_<stage>.json`, summarizer logs summed into
one "summarizer" stage; each stage's prompt tokens from the usage rows when the tick
has them, the very counts `novel usage` totals, else from its logs); the recall probe (the known
facts relevant to the scene, and how many reached the writer: the writer log's
report, else state.yaml's `recall` rows); what the tick's model calls cost
(from the usage rows); and, in a book with an outline, the scene's target tension
(as its planner was shown it) and the tension its extractor rated; the scene's prose
numbers (reports/prose.py: slop, repeated n-grams, MTLD, sentence spread, dialogue
share, distance from style.yaml), and the same per chapter. Beside them, the summary
tree's compression by level (status.summary_status). Reads only (the prose numbers are
kept in the index, a cache); `plot.py` draws it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from novel_agent.config.settings import Config
from novel_agent.config.stages import ticked
from novel_agent.errors import NovelError
from novel_agent.reports.costs import Row, tick_costs, tick_prompts
from novel_agent.reports.counts import Counts, compare_counts
from novel_agent.reports.prose import ProseReport, prose_report
from novel_agent.reports.status import SummaryLevel, summary_status
from novel_agent.story.outline.file import load_outline
from novel_agent.story.outline.standing import tension_course
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, load_scenes

_LOG = re.compile(r"^tick_(\d+)_([a-z]+)(?:_.*)?\.json$")


def shown_stages() -> tuple[str, ...]:
    """The stages whose prompts the numbers show: every tick's (one prompt, one log a
    tick), and the summarizer's (its calls summed where it ran)."""
    return (*ticked(), "summarizer")



@dataclass
class TickStats:
    """One tick's numbers; None where a file or log does not say."""

    tick: int
    words: int | None = None
    prompt: dict[str, int] = field(default_factory=dict)      # stage -> prompt tokens
    sections: dict[str, int] = field(default_factory=dict)    # writer section -> tokens
    budget: int | None = None                                 # the writer's budget
    compaction: int | None = None                             # the writer's compaction level
    prefix_share: float | None = None                         # writer prefix shared, 0..1
    recall: dict[str, Any] | None = None                      # relevant, reached, share
    cost: float | None = None                                 # dollars, None if unknown
    tension_target: int | None = None     # the planner's target, 0-10 (a book with an outline)
    tension: int | None = None            # the scene's tension as the extractor rated it
    prose: dict[str, Any] | None = None   # the scene's prose numbers (reports/prose.py)


@dataclass
class Stats:
    """A project's numbers: per tick, the section order, and the summary levels."""

    project: str
    ticks: list[TickStats]
    sections: list[str]
    levels: list[SummaryLevel]
    counts: Counts = field(default_factory=Counts)   # the server's prompt counts against ours
    prose: ProseReport = field(default_factory=ProseReport)

    def series(self, name: str) -> list[Any]:
        """One attribute of every tick, in tick order."""
        return [getattr(t, name) for t in self.ticks]

    def to_dict(self) -> dict[str, Any]:
        return {"project": self.project, "sections": self.sections,
                "ticks": [asdict(t) for t in self.ticks],
                "summaries": [{**asdict(level), "compression": round(level.compression, 2)}
                              for level in self.levels],
                "chapters": self.prose.to_dict()["chapters"],
                "summary": summary(self)}


def read_log(path: Path) -> dict[str, Any] | None:
    """A prompt log's report (messages left out); None if it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def tick_logs(project: Project) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """tick -> stage -> the reports of that stage's prompts at that tick."""
    logs: dict[int, dict[str, list[dict[str, Any]]]] = {}
    if not project.log_dir.is_dir():
        return logs
    for path in sorted(project.log_dir.glob("tick_*.json")):
        match = _LOG.match(path.name)
        report = read_log(path) if match else None
        if match is not None and report is not None:
            tick, stage = int(match.group(1)), match.group(2)
            logs.setdefault(tick, {}).setdefault(stage, []).append(report)
    return logs


def _apply_logs(stats: TickStats, stages: dict[str, list[dict[str, Any]]]) -> None:
    """Fill a tick's prompt numbers from its logs."""
    for stage, reports in stages.items():
        stats.prompt[stage] = sum(int(r.get("tokens") or 0) for r in reports)
    if not stages.get("writer"):
        return
    writer = stages["writer"][-1]
    stats.sections = {str(s.get("name")): int(s.get("tokens") or 0)
                      for s in writer.get("sections") or [] if isinstance(s, dict)}
    stats.budget, stats.compaction = writer.get("budget"), writer.get("compaction_level")
    stats.prefix_share = writer.get("prefix_share")
    probe = writer.get("recall")
    if isinstance(probe, dict) and isinstance(probe.get("relevant"), int):
        stats.recall = recall_of(probe["relevant"], int(probe.get("reached") or 0))


def recall_of(relevant: int, reached: int) -> dict[str, Any]:
    """One tick's recall probe: facts relevant to its scene, how many reached the writer,
    and that share (None when no known fact was relevant)."""
    return {"relevant": relevant, "reached": reached,
            "share": round(reached / relevant, 4) if relevant else None}


def state_recall(project: Project) -> dict[int, dict[str, Any]]:
    """state.yaml's recall rows (the last ticks' [tick, relevant, reached]) by tick."""
    try:
        rows = project.state().get("recall") or []
    except NovelError:
        return {}
    return {r[0]: recall_of(r[1], r[2]) for r in rows if isinstance(r, list) and len(r) == 3}


def collect_stats(project: Project, config: Config, rows: list[Row]) -> Stats:
    """Every tick's numbers (the ticks with a scene, a log or a usage row)."""
    logs, costs, billed = tick_logs(project), tick_costs(rows), tick_prompts(rows)
    written = load_scenes(project.scenes_dir)          # each file parsed once
    scenes = {scene.tick: scene for scene in written}
    course = tensions(project, config, written)
    recalled = state_recall(project)
    prose = prose_report(project, written)
    ticks = []
    for tick in sorted(set(scenes) | set(logs) | set(costs)):
        stats = TickStats(tick, words=scenes[tick].words if tick in scenes else None,
                          cost=costs.get(tick))
        _apply_logs(stats, logs.get(tick, {}))
        stats.prompt.update(billed.get(tick, {}))   # the ledger's counts, as `novel usage`
        stats.recall = stats.recall or recalled.get(tick)
        stats.tension_target, stats.tension = course.get(tick, (None, None))
        if tick in prose.scenes:
            stats.prose = asdict(prose.scenes[tick])
        ticks.append(stats)
    order: list[str] = []
    for t in ticks:
        order += [name for name in t.sections if name not in order]
    return Stats(project.name, ticks, order, summary_status(project, config).levels,
                 compare_counts(rows, logs), prose)


def tensions(project: Project, config: Config, scenes: list[Scene] | None = None,
             ) -> dict[int, tuple[int | None, int | None]]:
    """tick -> (target, realized tension) of a book with an outline ({} without one, or
    when the outline or a scene cannot be read: `novel doctor` says why); `scenes` when
    the caller has read them."""
    try:
        outline = load_outline(project.outline_file)
        if outline is None:
            return {}
        return tension_course(outline, load_scenes(project.scenes_dir) if scenes is None
                              else scenes, config.outline.curve)
    except (NovelError, OSError):
        return {}


def tension_summary(stats: Stats) -> dict[str, Any]:
    """Target against realized tension over the ticks that have both."""
    pairs = [(t.tension_target, t.tension) for t in stats.ticks
             if t.tension_target is not None and t.tension is not None]
    if not pairs:
        return {"ticks": 0, "target_mean": None, "realized_mean": None, "mean_gap": None,
                "last_target": None, "last_realized": None}
    return {"ticks": len(pairs), "target_mean": round(mean(a for a, _ in pairs), 2),
            "realized_mean": round(mean(b for _, b in pairs), 2),
            "mean_gap": round(mean(abs(a - b) for a, b in pairs), 2),
            "last_target": pairs[-1][0], "last_realized": pairs[-1][1]}


def summary(stats: Stats) -> dict[str, Any]:
    """The aggregates `novel stats` prints."""
    words = [w for w in stats.series("words") if w is not None]
    shares = [s for s in stats.series("prefix_share") if s is not None]
    levels: dict[int, int] = {}
    for level in stats.series("compaction"):
        if level is not None:
            levels[level] = levels.get(level, 0) + 1
    costs = stats.series("cost")
    known = [c for c in costs if c is not None]
    recall = [r for r in stats.series("recall") if r and r["relevant"]]
    last = stats.ticks[-1] if stats.ticks else None
    writer = sum(last.sections.values()) if last else 0
    return {
        "scenes": len(words), "words": sum(words),
        "words_per_scene": _spread(words),
        "prompt_tokens_per_tick": {stage: _spread([t.prompt[stage] for t in stats.ticks
                                                   if stage in t.prompt]) for stage in shown_stages()},
        "writer_sections_last_tick": {name: round(n / writer, 4) if writer else 0.0
                                      for name, n in (last.sections.items() if last else [])},
        "compaction_levels": {str(k): levels[k] for k in sorted(levels)},
        "prefix_share": {"mean": round(mean(shares), 4) if shares else None,
                         "last": shares[-1] if shares else None},
        "recall": {"mean": round(mean(r["share"] for r in recall), 4) if recall else None,
                   "min": min(r["share"] for r in recall) if recall else None,
                   "last": recall[-1]["share"] if recall else None,
                   "ticks": len(recall), "relevant": sum(r["relevant"] for r in recall),
                   "reached": sum(r["reached"] for r in recall)},
        "counts": stats.counts.to_dict(),
        "tension": tension_summary(stats),
        "prose": stats.prose.summary(),
        "cost_per_tick": {"mean": round(mean(known), 6) if known else None,
                          "last": known[-1] if known else None,
                          "total": round(sum(known), 6) if known else None,
                          "unknown_ticks": len(costs) - len(known)},
    }


def _spread(values: list[int]) -> dict[str, float | int | None]:
    if not values:
        return {"mean": None, "min": None, "max": None, "last": None}
    return {"mean": round(mean(values), 1), "min": min(values), "max": max(values),
            "last": values[-1]}
