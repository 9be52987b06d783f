"""Where a tick's time goes, and what of it grows with the book (issue 20's flat tick).

    .venv/bin/python -m bench.tick_phases                 # 300 stress ticks, offline, 8,192
    .venv/bin/python -m bench.tick_phases --ticks 1000 --cpu

Runs tests/support/stress_model.py in-process (as bench/long_run.py --offline) on a fresh
project and times each step of the tick by wrapping the pipeline's steps (each model
stage's build, ask and apply, the audit, the commit and what follows it) and the
functions inside them (inclusive times: a step's line holds the functions inside it). Prints, per step, the median over the
first 50 ticks and over the last 50 (ticks that made no checkpoint), and the difference,
largest growth first. Wall time by default (git runs as a subprocess); --cpu counts this
thread's CPU time only, which other work on the machine does not move.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from novel_agent.history import hooks
from novel_agent.story.memory.kept import KeptMemory
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick import pipeline, stage_prompts
from novel_agent.tick.session import Session
from novel_agent.tick.stages import commit, extract, plan
from tests.support.stress_model import StressModel

# The functions inside the steps, by the module whose name the step calls them by.
INSIDE = [(pipeline, ["begin", "load_tree", "load_lorebook"]),
          (commit, ["commit_tick", "tidied_logs", "log_text"]),
          (plan, ["plan_step"]), (extract, ["extraction_step"])]
PROMPTS = ["fit_prompt", "fit_briefing", "planner_briefing", "extractor_briefing",
           "propose_writer"]


class Phases:
    """Inclusive seconds per wrapped function, for the tick in flight."""

    def __init__(self, clock):
        self.clock, self.now = clock, {}

    def timed(self, fn, key: str):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            started = self.clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.now[key] = self.now.get(key, 0.0) + self.clock() - started
        return timed

    def wrap(self, owner, name: str, label: str = "") -> None:
        setattr(owner, name, self.timed(getattr(owner, name), label or name))

    def install(self) -> None:
        for owner, names in INSIDE:
            for name in names:
                self.wrap(owner, name)
        for name in PROMPTS:
            self.wrap(stage_prompts, name)
        stages = pipeline.tick_stages       # each model stage's build, ask and apply
        pipeline.tick_stages = lambda: tuple(replace(
            s, build=self.timed(s.build, f"{s.name}.build"), ask=self.timed(s.ask, f"{s.name}.ask"),
            apply=self.timed(s.apply, f"{s.name}.apply")) for s in stages())
        pipeline.LANDING = tuple(self.timed(step, label(step)) for step in pipeline.LANDING)
        for name in ("before_tick", "after_tick", "after_summaries"):
            self.wrap(hooks, name)
        self.wrap(pipeline.summarize, "after_commit", "summarize")
        for name in ("sync_index", "flush", "landed"):
            self.wrap(Session, name)
        self.wrap(KeptMemory, "read", "read_memory")


def label(step) -> str:
    """A step's name in the table: "audit.step", or the pipeline's own ("committing")."""
    owner = step.__module__.rsplit(".", 1)[-1]
    return step.__name__ if owner == "pipeline" else f"{owner}.{step.__name__}"


def stress_book(folder: Path, window: int) -> Project:
    """A new book for tests/support/stress_model.py, offline at `window` (bench/tick_pair.py's too)."""
    return create_project(folder, {
        "name": "stress", "premise": "A lighthouse keeper finds a drowned man's map.",
        "protagonist": "Mara Quill"}, config={
        "llm": {"provider": "offline", "model": "small-local-model"},
        "preset": "balanced", "context": {"window": window}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--cpu", action="store_true", help="this thread's CPU time, not wall")
    args = parser.parse_args()
    clock = time.thread_time if args.cpu else time.perf_counter
    phases = Phases(clock)
    phases.install()
    rows, totals, checkpoint = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        project = stress_book(Path(folder) / "stress", args.window)
        with reconciled(project), Session.open(project, project.config(),
                                               make_model=lambda: StressModel()) as s:
            for n in range(1, args.ticks + 1):
                phases.now = {}
                started = clock()
                result = pipeline.tick(s)
                totals.append(clock() - started)
                rows.append(phases.now)
                checkpoint.append(bool(result.summary and result.summary.made))
                if n % 100 == 0:
                    print(f"tick {n}: {totals[-1] * 1000:.0f} ms", file=sys.stderr, flush=True)
    plain = [i for i, cp in enumerate(checkpoint) if not cp]
    head, tail = plain[:50], plain[-50:]

    def median(ticks: list[int], key: str) -> float:
        return 1000 * statistics.median(totals[i] if key == "tick" else rows[i].get(key, 0.0)
                                        for i in ticks)

    keys = sorted({k for r in rows for k in r}, key=lambda k: median(head, k) - median(tail, k))
    print(f"{args.ticks} stress ticks offline at {args.window:,}, "
          f"{'CPU' if args.cpu else 'wall'} ms, median of the first and the last 50 "
          "(no checkpoint)")
    print(f"  {'step':<20}{'first 50':>9}{'last 50':>9}{'growth':>9}")
    for key in ["tick", *keys]:
        first, last = median(head, key), median(tail, key)
        print(f"  {key:<20}{first:9.1f}{last:9.1f}{last - first:9.1f}")
    print(f"  ratio {median(tail, 'tick') / median(head, 'tick'):.2f} (goal <= 1.3)")


if __name__ == "__main__":
    main()
