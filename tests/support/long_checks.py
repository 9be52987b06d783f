"""What a long run is judged by (issue 20), read from each tick's reports.

`LongRun.after(result, seconds)` keeps, per tick, for the planner and the writer:
tokens / budget, the recall probe, the scenes before the tick that no part of the
prompt tells ("missing": the story so far must start at scene 1 and the recent
scenes take over where it ends), the ticks two parts tell ("twice"), the
shared prefix, the loops the planner was shown; and the tick's and the commit's
seconds (the tick's: `seconds`, the whole tick timed by the caller, else the sum of
its stages; `cpu`, the process's CPU seconds in it, a figure that busy neighbours on
the machine move less). The caller may add `beside`: a fresh book's tick seconds, timed
beside the first and the last ticks, which the machine's drift moves as it moves the
long book's. `table()` is bench/long_run.py's output; the suite's stress test asserts
on the same figures.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any

from novel_agent.story.memory.read import load_memory
from novel_agent.story.project.folder import Project
from novel_agent.story.summaries import load_tree

SPAN_SECTIONS = {"writer": ("tier3", "recent_summaries", "recent_full"),
                 "planner": ("overall", "recent")}


@dataclass
class Sample:
    tick: int
    stage: str
    tokens: int
    budget: int
    level: int
    recall: float | None
    missing: list[int]
    twice: list[int]
    prefix: float
    spans: list[tuple[str, int, int]]
    loops: list[str] = field(default_factory=list)
    waiting: int = 0        # relevant items retrieval left out for want of room


def coverage(spans: list[tuple[str, int, int]], tick: int) -> tuple[list[int], list[int]]:
    """(ticks before `tick` that no span holds, ticks two hold): the story so far and the
    scenes after it tell every scene once, from the first."""
    held: dict[int, int] = {}
    for _, first, last in spans:
        for t in range(first, last + 1):
            held[t] = held.get(t, 0) + 1
    missing = [t for t in range(1, tick) if t not in held]
    return missing, sorted(t for t, n in held.items() if n > 1)


def checkpointed(result: Any) -> bool:
    """Whether a tick made a checkpoint (its time is not a plain tick's)."""
    return result.summary is not None and bool(result.summary.made)


class LongRun:
    """The figures of a long run, gathered tick by tick."""

    def __init__(self, project: Project):
        self.project = project
        self.samples: dict[tuple[int, str], Sample] = {}
        self.seconds: list[float] = []
        self.cpu: list[float] = []       # the process's CPU seconds per tick, when timed
        self.commit: list[float] = []
        self.checkpoint: list[bool] = []
        self.log_bytes: dict[int, int] = {}
        # a fresh book's tick seconds (no checkpoint), ticked beside the first ("head") and
        # the last ("tail") ticks by the caller (bench/long_run.py)
        self.beside: dict[str, list[float]] = {}
        self._ranges: dict[str, tuple[int, int]] = {}

    def _range(self, key: str, tick: int) -> tuple[int, int]:
        if key.startswith("scene_"):
            t = int(key.split("_")[1])
            return t, t
        if key == "overall":
            tree = load_tree(self.project.summaries_dir)
            done = [d.last for d in tree.checkpoints() if d.last < tick]
            return 1, max(done, default=0)
        if key not in self._ranges:
            tree = load_tree(self.project.summaries_dir)
            self._ranges.update({n: (d.first, d.last) for n, d in tree.docs.items()})
        return self._ranges[key]

    def spans(self, report: dict[str, Any]) -> list[tuple[str, int, int]]:
        out = []
        for section in report["sections"]:
            if section["name"] in SPAN_SECTIONS[report["stage"]]:
                for key in section["items"]:
                    out.append((key, *self._range(key, report["tick"])))
        return out

    def after(self, result: Any, seconds: float | None = None, cpu: float | None = None) -> None:
        self.seconds.append(sum(s.seconds for s in result.stages) if seconds is None
                            else seconds)
        self.cpu += [cpu] if cpu is not None else []
        self.commit.append(sum(s.seconds for s in result.stages if s.stage == "commit"))
        self.checkpoint.append(checkpointed(result))
        for stage in ("planner", "writer"):
            report = result.reports[stage]
            spans = self.spans(report)
            missing, twice = coverage(spans, result.tick)
            recall = (report.get("recall") or {}).get("share")
            loops = next((s["items"] for s in report["sections"] if s["name"] == "loops"), [])
            self.samples[(result.tick, stage)] = Sample(
                result.tick, stage, report["tokens"], report["budget"],
                report["compaction_level"], recall, missing, twice, report["prefix_share"],
                spans, list(loops), sum(1 for i in report["items"] if i["section"] == "retrieved"
                                        and not i["included"]))
        if result.tick % 100 == 0:
            self.log_bytes[result.tick] = sum(p.stat().st_size
                                              for p in self.project.log_dir.glob("*"))

    # -- the figures -------------------------------------------------------------------

    @property
    def last_tick(self) -> int:
        return max(t for t, _ in self.samples)

    def opened_in(self) -> dict[str, int]:
        memory = load_memory(self.project.memory_dir)
        return {f"loop:{l.get('id')}": int(l.get("opened_in") or 0) for l in memory.loops}

    def tree_depth(self) -> int:
        tree = load_tree(self.project.summaries_dir)
        return max((d.level for d in tree.docs.values()), default=0)

    def recall_after(self, tick: int) -> list[float]:
        return [s.recall for (t, stage), s in self.samples.items()
                if stage == "writer" and t > tick and s.recall is not None]

    def prefix(self, stage: str, checkpoints: bool) -> float:
        values = [s.prefix for (t, st), s in self.samples.items() if st == stage and t > 1
                  and (checkpoints or not self.checkpoint[t - 2])]
        return statistics.median(values) if values else 0.0

    def new_loop_shown(self) -> tuple[int, int]:
        """(ticks where a loop opened in the last 20 scenes existed, ticks one was shown)."""
        opened = self.opened_in()
        exists = shown = 0
        for (t, stage), s in self.samples.items():
            if stage != "planner":
                continue
            if any(t - 20 <= o < t for o in opened.values()):
                exists += 1
                shown += any(t - 20 <= opened.get(k, 0) < t for k in s.loops)
        return exists, shown

    def own_seconds(self) -> list[float]:
        """Each tick's seconds less the time its model calls took to answer (the ledger's
        latency): what novel_agent itself spent, whatever the server's speed."""
        waited: dict[int, float] = {}
        ledger = self.project.root / ".novel" / "usage.jsonl"
        for line in ledger.read_text().splitlines() if ledger.is_file() else []:
            row = json.loads(line)
            waited[row.get("tick") or 0] = waited.get(row.get("tick") or 0, 0.0) + float(
                row.get("latency") or 0.0)
        return [s - waited.get(t + 1, 0.0) for t, s in enumerate(self.seconds)]

    def median(self, values: list[float], head: bool = False) -> float:
        """The median of the first (`head`) or the last 50 ticks without a checkpoint."""
        plain = [v for v, cp in zip(values, self.checkpoint) if not cp]
        part = plain[:50] if head else plain[-50:]
        return statistics.median(part) if part else 0.0

    def ratio(self, values: list[float]) -> float:
        plain = [v for v, cp in zip(values, self.checkpoint) if not cp]
        head, tail = plain[:50], plain[-50:]
        return statistics.median(tail) / max(statistics.median(head), 1e-9) if head else 0.0

    def beside_ratios(self) -> tuple[float, float] | None:
        """(the long book's first 50 ticks against the fresh book's beside them, its last 50
        against those of the fresh book beside them): each median over a median of ticks
        timed at the same moments, so a slower machine moves both alike."""
        if not all(len(self.beside.get(end, ())) >= 10 for end in ("head", "tail")):
            return None
        fresh = {end: statistics.median(v[:50]) for end, v in self.beside.items()}
        return (self.median(self.seconds, head=True) / fresh["head"],
                self.median(self.seconds) / fresh["tail"])

    def table(self) -> list[str]:
        last = self.last_tick
        at = [t for t in (30, 100, 300, 1000) if t < last] + [last]
        opened = self.opened_in()
        lines = [f"  {'stage':<8}{'tick':>5}  {'used/budget':>15}  {'recall':>6}  {'missing':>7}  "
                 f"{'twice':>5}  {'level':>5}  loops shown (opened in)"]
        for t in at:
            for stage in ("planner", "writer"):
                s = self.samples[(t, stage)]
                used = f"{s.tokens:,}/{s.budget:,} {s.tokens / s.budget:.0%}"
                recall = "" if s.recall is None else f"{s.recall:.2f}"
                loops = [opened.get(k, 0) for k in s.loops]
                shown = f"{len(loops)} ({min(loops)}–{max(loops)})" if loops else ""
                lines.append(f"  {stage:<8}{t:>5}  {used:>15}  {recall:>6}  {len(s.missing):>7}  "
                             f"{len(s.twice):>5}  {s.level:>5}  {shown}")
        writer = [s for (t, st), s in self.samples.items() if st == "writer"]
        planner = [s for (t, st), s in self.samples.items() if st == "planner"]
        recall = self.recall_after(50)
        worst = sorted((s.recall, t) for (t, st), s in self.samples.items()
                       if st == "writer" and t > 50 and s.recall is not None)[:3]
        exists, shown = self.new_loop_shown()
        beside = self.beside_ratios()
        lines += [
            f"  recall after tick 50: min {min(recall, default=0):.2f}, mean "
            f"{statistics.mean(recall) if recall else 0:.2f} (goal >= 0.90 at every tick); "
            "worst: " + ", ".join(f"tick {t} {r:.2f}" for r, t in worst),
            f"  prompts with a scene missing: writer {sum(1 for s in writer if s.missing)}, "
            f"planner {sum(1 for s in planner if s.missing)} of {len(writer)} (goal 0)",
            f"  prompts with a range twice: writer {sum(1 for s in writer if s.twice)}, "
            f"planner {sum(1 for s in planner if s.twice)} (goal 0)",
            f"  summary tree depth: level {self.tree_depth()} (goal <= 4)",
            f"  a loop opened in the last 20 scenes shown: {shown} of {exists} planner prompts",
            f"  shared prefix median (all / non-checkpoint ticks): writer "
            f"{self.prefix('writer', True):.2f} / {self.prefix('writer', False):.2f}, planner "
            f"{self.prefix('planner', True):.2f} / {self.prefix('planner', False):.2f} (goal 0.75)",
            f"  tick time, median of the last 50 / first 50 (no checkpoint): "
            f"{self.ratio(self.seconds):.2f}, less the model's answers "
            f"{self.ratio(self.own_seconds()):.2f} (commit {self.ratio(self.commit):.2f}; "
            "goal <= 1.3)",
            f"  tick seconds, median of the first 50 / last 50 (no checkpoint): "
            f"{self.median(self.seconds, head=True):.3f} / {self.median(self.seconds):.3f}",
            *([f"  tick time against a fresh book ticked beside it at the same moments (its "
               f"ticks 1-50): first 50 {beside[0]:.2f}, last 50 {beside[1]:.2f}; last / first "
               f"{beside[1] / beside[0]:.2f} (goal <= 1.3)"] if beside else []),
            *([f"  CPU time, median of the last 50 / first 50 (no checkpoint): "
               f"{self.ratio(self.cpu):.2f} (the process's own work, whatever else the "
               "machine runs)"] if self.cpu else []),
            "  log bytes at " + ", ".join(f"tick {t}: {b / 1e6:.1f} MB"
                                         for t, b in sorted(self.log_bytes.items())),
        ]
        return lines
