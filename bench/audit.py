"""Benchmark: the continuity audit's precision and recall by rule kind, and its cost.

    python -m bench.audit              # 200 scripted scenes, 60 planted, 60 controls
    python -m bench.audit --scenes 100

A scripted book (tests/support/audit_book.py: the ScriptedModel writes the plans, the
prose and the extractions) of 200 scenes with 60 planted contradictions (6 of
each rule kind) and 60 near-miss controls (a character dead only in a dream, a
character who travels, a fact told to the POV in dialogue, ...), run through the
real tick pipeline with `audit.mode: report`. Prints, per kind, the findings that
hit a plant (true positives), those that did not (false positives), the plants
missed, precision and recall; then `novel audit`'s replay of the same book (it
must find the same) and its CED; then the time the audit adds to a tick: the
audit step's median against the whole tick's, on the scripted book and on 100
offline ticks (placeholder prose, the product's own model), measured in this run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick import pipeline
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from novel_agent.tick.stages.audit import audit_project
from novel_agent.tick.stages.audit import step as audit_step
from tests.support.audit_book import KINDS, BookModel, book, score

AUDIT_SECONDS: list[float] = []


def timed_audit(original):
    def wrapper(ctx, draft):
        started = time.perf_counter()
        try:
            return original(ctx, draft)
        finally:
            AUDIT_SECONDS.append(time.perf_counter() - started)
    return wrapper


def run(project, model, n: int) -> tuple[list, list[float], list[float]]:
    """n ticks; (results, tick seconds, audit seconds)."""
    AUDIT_SECONDS.clear()
    results, seconds = [], []
    with reconciled(project), Session.open(project, project.config(), make_model=model) as session:
        for _ in range(n):
            started = time.perf_counter()
            results.append(tick(session))
            seconds.append(time.perf_counter() - started)
    return results, seconds, list(AUDIT_SECONDS)


def new_project(root: Path, name: str, mode: str = "report"):
    return create_project(root / name, {"name": name, "premise": "An island keeps its secrets.",
                                        "protagonist": "Mara Quill", "preset": "balanced"},
                          config={"llm": {"provider": "offline"}, "audit": {"mode": mode}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--offline", type=int, default=100)
    args = parser.parse_args()
    pipeline.LANDING = tuple(timed_audit(step) if step is audit_step else step
                             for step in pipeline.LANDING)
    root = Path(tempfile.mkdtemp(prefix="audit-bench-"))
    scripted = book(args.scenes)
    project = new_project(root, "scripted")
    results, tick_s, audit_s = run(project, lambda: BookModel(
        scripted.specs, OfflineModel(seed=0)), args.scenes)
    found = {(r.tick, f.kind) for r in results for f in r.findings}
    table = score(found, scripted.planted)
    print(f"scripted book: {args.scenes} scenes, {len(scripted.planted)} planted contradictions, "
          f"{len(scripted.controls)} near-miss controls")
    print(f"{'kind':<16}{'subtype':<24}{'planted':>8}{'found':>7}{'false+':>7}{'missed':>7}"
          f"{'precision':>10}{'recall':>8}")
    from novel_agent.audit.findings import RULES
    tp_all = fp_all = fn_all = 0
    for kind in KINDS:
        tp, fp, fn, precision, recall = table[kind]
        tp_all, fp_all, fn_all = tp_all + tp, fp_all + fp, fn_all + fn
        print(f"{kind:<16}{RULES[kind]:<24}{tp + fn:>8}{tp:>7}{fp:>7}{fn:>7}{precision:>10.2f}"
              f"{recall:>8.2f}")
    print(f"{'all':<40}{tp_all + fn_all:>8}{tp_all:>7}{fp_all:>7}{fn_all:>7}"
          f"{tp_all / max(1, tp_all + fp_all):>10.2f}{tp_all / max(1, tp_all + fn_all):>8.2f}")
    controls_hit = sorted(c for c in scripted.controls if c in found)
    print(f"controls reported: {len(controls_hit)} of {len(scripted.controls)}"
          + (f" {controls_hit}" if controls_hit else ""))
    started = time.perf_counter()
    replay = audit_project(project, project.config())
    replay_s = time.perf_counter() - started
    same = {(f.scene, f.kind) for f in replay.findings} == found
    print(f"novel audit (replay of the plan records): {len(replay.findings)} findings in "
          f"{len(replay.subtypes)} subtypes over {replay.words:,} words, CED {replay.ced:.3f}; "
          f"{'the same as' if same else 'NOT the same as'} the ticks'; {replay_s:.2f}s")
    print(f"the scripted book: {project.root} (novel audit -p {project.root})")
    print(f"scripted ticks: median {statistics.median(tick_s) * 1000:.1f} ms a tick, the audit "
          f"{statistics.median(audit_s) * 1000:.2f} ms "
          f"({statistics.median(audit_s) / statistics.median(tick_s):.1%} of a tick)")
    offline, baseline = new_project(root, "offline"), new_project(root, "baseline", mode="off")
    tick_s, base_s, audit_s = interleaved(offline, baseline, args.offline)
    print(f"the offline book: {offline.root}")
    print(f"offline ticks ({args.offline}, the two books in turn): median "
          f"{statistics.median(tick_s) * 1000:.1f} ms a tick with the audit, "
          f"{statistics.median(base_s) * 1000:.1f} ms with audit.mode off "
          f"({statistics.median(tick_s) / statistics.median(base_s):.2f}x); the audit step "
          f"{statistics.median(audit_s) * 1000:.2f} ms "
          f"({statistics.median(audit_s) / statistics.median(tick_s):.1%} of a tick)")


def interleaved(audited, baseline, n: int) -> tuple[list[float], list[float], list[float]]:
    """n offline ticks on each project, one of each in turn, the first of each pair
    alternating (the shared cores' load falls on both alike); (audited tick seconds,
    baseline tick seconds, audit step seconds)."""
    make = lambda: OfflineModel(seed=0)  # noqa: E731
    times: dict[str, list[float]] = {"a": [], "b": [], "audit": []}
    with reconciled(audited), reconciled(baseline), \
            Session.open(audited, audited.config(), make_model=make) as a, \
            Session.open(baseline, baseline.config(), make_model=make) as b:
        for i in range(n):      # which goes first alternates: the first of a pair runs slower
            for key, session in (("a", a), ("b", b))[::1 if i % 2 == 0 else -1]:
                AUDIT_SECONDS.clear()
                started = time.perf_counter()
                tick(session)
                times[key].append(time.perf_counter() - started)
                if key == "a":
                    times["audit"] += AUDIT_SECONDS
    return times["a"], times["b"], times["audit"]


if __name__ == "__main__":
    main()
