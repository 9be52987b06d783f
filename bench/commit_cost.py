"""The commit's cost as the story grows: median commit time near given ticks, offline.

    python -m bench.commit_cost                 # ticks 100 and 1,000 (several minutes)
    python -m bench.commit_cost --at 50 200     # a quicker look

Runs one offline project from tick 1 to the last tick asked for, and prints, for a
window of ticks ending at each, the median time of the commit stage and its ratio
to the first; the part of it spent making the prompt logs (the context reports,
which list every item a prompt left out, so they grow with memory); and what the
commit wrote: the files, their bytes, and the bytes under memory/ (the time is
the wall clock of a machine that may be shared, so the fastest commit of the
window is shown too; the bytes do not depend on the machine). A commit that
writes only what changed keeps the ratios near 1.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from novel_agent.models.offline import OfflineModel
from novel_agent.story.project import journal
from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from novel_agent.tick.stages import commit as commit_stage


@dataclass
class Commit:
    """One tick's commit: seconds, files written, bytes, bytes under memory/."""

    seconds: float = 0.0
    logs: float = 0.0
    files: int = 0
    size: int = 0
    memory: int = 0


def recording() -> list[dict[str, int]]:
    """Record the (path -> bytes) of every transaction from now on."""
    seen: list[dict[str, int]] = []
    commit = journal.Transaction.commit

    def record(txn: journal.Transaction) -> None:
        seen.append({str(p.relative_to(txn.root)): len(text.encode("utf-8"))
                     for p, (_, text) in txn.ops.items()})
        commit(txn)

    journal.Transaction.commit = record     # type: ignore[method-assign]
    return seen


def timing(spent: list[float]) -> None:
    """Add to `spent` the seconds the commit spends making the prompt logs."""
    for name in ("log_text", "tidied_logs"):
        real = getattr(commit_stage, name)

        def timed(*args, real=real, **kwargs):
            started = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                spent.append(time.perf_counter() - started)
        setattr(commit_stage, name, timed)


def commits(root: Path, last: int) -> dict[int, Commit]:
    """Each tick's commit, ticks 1..last."""
    project = create_project(root, {"name": "bench", "premise": "A keeper finds a map.",
                                    "preset": "balanced"}, config={"llm": {"provider": "offline"}})
    out: dict[int, Commit] = {}
    seen, spent = recording(), []
    timing(spent)
    config = project.config()
    with reconciled(project), Session.open(project, config,
                               make_model=lambda: OfflineModel(seed=0)) as session:
        for n in range(1, last + 1):
            seen.clear()
            spent.clear()
            result = tick(session)
            ops = next(o for o in seen if any(p.startswith("scenes/") for p in o))
            out[n] = Commit(next(r.seconds for r in result.stages if r.stage == "commit"),
                            sum(spent), len(ops), sum(ops.values()),
                            sum(size for p, size in ops.items() if p.startswith("memory/")))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--window", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        found = commits(Path(folder) / "bench", max(args.at))
    first: dict[str, float] = {}
    for at in sorted(args.at):
        window = [found[t] for t in range(max(1, at - args.window + 1), at + 1)]
        median = {key: statistics.median(getattr(c, key) for c in window)
                  for key in ("seconds", "logs", "files", "size", "memory")}
        median["fastest"] = min(c.seconds for c in window)
        first = first or median
        ratio = {key: median[key] / first[key] if first[key] else 1.0 for key in median}
        print(f"commit at tick {at:>5}: median {median['seconds'] * 1000:7.1f} ms over "
              f"{len(window)} ticks ({ratio['seconds']:.2f}x tick {min(args.at)}; fastest "
              f"{median['fastest'] * 1000:.1f} ms, {ratio['fastest']:.2f}x), making the "
              f"prompt logs {median['logs'] * 1000:.1f} ms ({ratio['logs']:.2f}x); writes "
              f"{median['files']:g} files, {median['size'] / 1000:.1f} kB "
              f"({ratio['size']:.2f}x), memory/ {median['memory'] / 1000:.2f} kB "
              f"({ratio['memory']:.2f}x)")


if __name__ == "__main__":
    main()
