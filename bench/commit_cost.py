"""The commit's cost as the story grows: median commit time near given ticks, offline.

    python bench/commit_cost.py                 # ticks 100 and 1,000 (several minutes)
    python bench/commit_cost.py --at 50 200     # a quicker look

Runs one offline project from tick 1 to the last tick asked for, and prints, for a
window of ticks ending at each, the median time of the commit stage and its ratio
to the first. A commit that writes only what changed keeps the ratio near 1.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from novel_agent.models.offline import OfflineModel
from novel_agent.pipeline import tick
from novel_agent.project import create_project
from novel_agent.session import Session


def commit_times(root: Path, last: int) -> dict[int, float]:
    """Seconds of each tick's commit stage, ticks 1..last."""
    project = create_project(root, {"name": "bench", "premise": "A keeper finds a map.",
                                    "preset": "balanced"}, config={"llm": {"provider": "offline"}})
    times: dict[int, float] = {}
    config = project.config()
    with project, Session.open(project, config,
                               make_model=lambda s: OfflineModel(seed=0, source=s)) as session:
        for n in range(1, last + 1):
            result = tick(session)
            times[n] = next(r.seconds for r in result.stages if r.stage == "commit")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--window", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        times = commit_times(Path(folder) / "bench", max(args.at))
    first = None
    for at in sorted(args.at):
        window = [times[t] for t in range(max(1, at - args.window + 1), at + 1)]
        median = statistics.median(window)
        first = first or median
        print(f"commit at tick {at:>5}: median {median * 1000:7.1f} ms over {len(window)} "
              f"ticks  ({median / first:.2f}x tick {min(args.at)})")


if __name__ == "__main__":
    main()
