"""Prompt growth over a long offline run: every stage's prompt at ticks 100, 500 and 1,000.

    .venv/bin/python -m bench.prompt_growth            # 1,000 ticks at 8,192 and at the default
    .venv/bin/python -m bench.prompt_growth --ticks 300 --at 100 200 300

For each window it runs the offline model and prints, per stage, the prompt's
tokens at the chosen ticks, its compaction level, the ratio last/first, and
over the whole run: sections emptied although they had items (goal 0), ticks
whose planner prompt lacked the story so far (no summary of it, and its recent scenes
not reaching back to scene 1) or the open loops (goal 0), and
the median share of each prompt that is a prefix of the same stage's previous
one (goal >= 75% for planner and writer). Ratios, measured in one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session

STAGES = ("planner", "writer", "extractor", "summarizer")


def emptied(report: dict) -> list[str]:
    """Sections that had candidate items but went out empty."""
    candidates = {i["section"] for i in report["items"] if i.get("score") is not None}
    empty = {s["name"] for s in report["sections"] if not s["tokens"]}
    return sorted(candidates & empty)


def summarizer_reports(project, tick_no: int) -> list[dict]:
    """The summarizer's reports logged at `tick_no` (checkpoint, overall, arcs)."""
    out = []
    for path in sorted(project.log_dir.glob(f"tick_{tick_no:03d}_summarizer_*.json")):
        out.append(json.loads(path.read_text(encoding="utf-8")))
    return out


def run(ticks: int, at: list[int], window: int | None) -> dict:
    settings = {"llm": {"provider": "offline"}}
    if window:
        settings["context"] = {"window": window}
    with tempfile.TemporaryDirectory() as folder:
        project = create_project(Path(folder) / "growth", {
            "name": "growth", "premise": "A lighthouse keeper finds a drowned man's map.",
            "protagonist": "Mara Quill"}, config=settings)
        config = project.config()
        rows: dict[str, dict[int, tuple[int, int, int]]] = {s: {} for s in STAGES}
        shares: dict[str, list[float]] = {"planner": [], "writer": []}
        empties, missing, started = [], [], time.monotonic()
        with reconciled(project), Session.open(project, config) as session:
            for _ in range(ticks):
                result = tick(session)
                reports = dict(result.reports)
                summaries = summarizer_reports(project, result.tick)
                if summaries:
                    reports["summarizer"] = max(summaries, key=lambda r: r["tokens"])
                for stage, report in reports.items():
                    if result.tick in at or (stage == "summarizer" and not rows[stage]):
                        rows[stage][result.tick] = (report["tokens"], report["budget"],
                                                    report["compaction_level"])
                    empties += [(result.tick, stage, name) for name in emptied(report)]
                    if stage in shares and result.tick > 1:
                        shares[stage].append(report["prefix_share"])
                planner = {s["name"]: s["tokens"] for s in reports["planner"]["sections"]}
                told = planner.get("overall") or any(   # the recent scenes reach back to 1
                    i["key"] == "scene_001" and i["included"]
                    for i in reports["planner"]["items"])
                if result.tick > 10 and not (told and planner.get("loops")):
                    missing.append(result.tick)
                if summaries:   # summarizer rows: the last checkpoint at or before each mark
                    for mark in at:
                        if result.tick <= mark:
                            rows["summarizer"][mark] = rows["summarizer"].get(result.tick) or (
                                reports["summarizer"]["tokens"], reports["summarizer"]["budget"],
                                reports["summarizer"]["compaction_level"])
        seconds = time.monotonic() - started
    return {"rows": rows, "shares": shares, "empties": empties, "missing": missing,
            "seconds": seconds}


def report(label: str, ticks: int, at: list[int], data: dict) -> None:
    print(f"\n{label}: {ticks} offline ticks in {data['seconds']:.0f} s")
    head = "  ".join(f"tick {t:>5}" for t in at)
    print(f"  {'stage':<11} {head}   ratio {at[-1]}/{at[0]}   budget  levels")
    for stage in STAGES:
        row = data["rows"][stage]
        cells = "  ".join(f"{row[t][0]:>10,}" if t in row else f"{'-':>10}" for t in at)
        first, last = row.get(at[0]), row.get(at[-1])
        ratio = f"{last[0] / first[0]:.2f}" if first and last else "-"
        budget = next(iter(row.values()))[1] if row else 0
        levels = ",".join(str(row[t][2]) for t in at if t in row)
        print(f"  {stage:<11} {cells}   {ratio:>10}   {budget:>6,}  {levels}")
    print(f"  sections emptied although they had items: {len(data['empties'])}"
          + (f" (first: {data['empties'][:3]})" if data["empties"] else ""))
    print(f"  ticks whose planner lacked the story so far or the open loops: "
          f"{len(data['missing'])}")
    for stage, values in data["shares"].items():
        if values:
            print(f"  {stage} prefix shared with the previous prompt: median "
                  f"{statistics.median(values):.0%}, mean {statistics.mean(values):.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=1000)
    parser.add_argument("--at", type=int, nargs="+", default=None)
    parser.add_argument("--windows", nargs="+", default=["8192", "default"])
    args = parser.parse_args()
    at = args.at or [100, 500, 1000]
    for window in args.windows:
        size = None if window == "default" else int(window)
        data = run(args.ticks, at, size)
        report(f"window {window}", args.ticks, at, data)


if __name__ == "__main__":
    main()
