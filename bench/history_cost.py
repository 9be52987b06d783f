"""The history's cost per entry at tick 10 and tick 1,000: time and bytes.

    python -m bench.history_cost             # ticks 10 and 1,000 (~1 min)
    python -m bench.history_cost --at 10 3000

For each tick T asked for, a project is grown to T scenes (10 offline ticks, then
their scenes, plans, prompt logs and memory repeated with new numbers, so the
folder has the files a T-tick book has), its history begun, and then five more
ticks' worth of files written (a scene, a plan, three prompt logs, four memory
files, a fact appended, state.yaml): each through the tick's own journaled
commit (journal.Transaction, the baseline, timed in the same run) and then
recorded as one history entry (History.record). Printed: the median entry time,
its ratio to the commit's, and the bytes the entry added to .novel/history.git
(loose objects, as written) and once packed by `git gc` (which the history runs
by itself every 50 ticks, `git gc --auto`).
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from novel_agent.history.store import History
from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session

ENTRIES = 5


def grown(root: Path, ticks: int) -> Project:
    """A project with `ticks` scenes (10 real offline ticks, repeated)."""
    project = create_project(root, {"name": "bench", "premise": "A keeper finds a map.",
                                    "protagonist": "Mara Quill"},
                             config={"llm": {"provider": "offline"}})
    with reconciled(project), Session.open(project, project.config(),
                               make_model=lambda: OfflineModel(seed=0)) as session:
        for _ in range(min(ticks, 10)):
            tick(session)
    scenes = {t: project.scene_path(t).read_text() for t in range(1, 11)}
    plans = {t: project.plan_path(t).read_text() for t in range(1, 11)}
    for t in range(11, ticks + 1):
        src = (t - 1) % 10 + 1
        project.scene_path(t).write_text(re.sub(r"^tick: \d+", f"tick: {t}", scenes[src], count=1,
                                                flags=re.M))
        project.plan_path(t).write_text(re.sub(r"^tick: \d+", f"tick: {t}", plans[src], count=1,
                                               flags=re.M))
    characters = project.memory_dir / "characters"
    sample = next(characters.glob("*.yaml")).read_text()
    for n in range(ticks // 10):
        (characters / f"extra_{n:04d}.yaml").write_text(re.sub(r"^id: .*$", f"id: extra_{n:04d}",
                                                               sample, count=1, flags=re.M))
    facts = (project.memory_dir / "facts.yaml").read_text()
    extra = "".join(f"- text: fact {n} of the book\n  scene: {n}\n" for n in range(ticks * 2))
    (project.memory_dir / "facts.yaml").write_text(facts + extra)
    return project


def entry_files(project: Project, t: int) -> dict[Path, str]:
    """What one tick writes, with new numbers."""
    files = {project.scene_path(t): project.scene_path(1).read_text().replace("tick: 1", f"tick: {t}"),
             project.plan_path(t): project.plan_path(1).read_text().replace("tick: 1", f"tick: {t}"),
             project.state_file: f"tick: {t}\n"}
    for stage in ("planner", "writer", "extractor"):
        log = project.log_dir / f"tick_001_{stage}.json"
        files[project.log_dir / f"tick_{t:03d}_{stage}.json"] = log.read_text()
    for path in sorted((project.memory_dir / "characters").glob("*.yaml"))[:4]:
        files[path] = path.read_text() + f"# seen at {t}\n"
    return files


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(ticks: int) -> tuple[float, float, float, float]:
    """(median entry seconds, median commit seconds, bytes per entry loose, and packed)
    at `ticks`."""
    with tempfile.TemporaryDirectory() as folder:
        project = grown(Path(folder) / "bench", ticks)
        history = History(project)
        history.record("hand", ticks, "grown for the bench")
        history.git.run("gc", "--quiet")
        packed = size(history.git.git_dir)
        entry, commit, grew = [], [], []
        for t in range(ticks + 1, ticks + 1 + ENTRIES):
            txn = project.transaction()
            facts = project.memory_dir / "facts.yaml"
            txn.append(facts, f"- text: fact of tick {t}\n  scene: {t}\n")
            for path, text in entry_files(project, t).items():
                txn.stage(path, text)
            started = time.perf_counter()
            txn.commit()
            commit.append(time.perf_counter() - started)
            before = size(history.git.git_dir)
            started = time.perf_counter()
            assert history.record("tick", t, f"tick {t}: bench") is not None
            entry.append(time.perf_counter() - started)
            grew.append(size(history.git.git_dir) - before)
        history.git.run("gc", "--quiet")
        packed = (size(history.git.git_dir) - packed) / ENTRIES
        return (statistics.median(entry), statistics.median(commit), statistics.median(grew),
                packed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", type=int, nargs="+", default=[10, 1000])
    args = parser.parse_args()
    print(f"{'tick':>6}  {'entry':>9}  {'commit':>9}  {'entry/commit':>12}  {'bytes/entry':>11}"
          f"  {'packed':>8}")
    first = None
    for ticks in args.at:
        entry, commit, grew, packed = measure(ticks)
        first = first or entry
        print(f"{ticks:>6}  {entry * 1000:>7.1f}ms  {commit * 1000:>7.1f}ms  "
              f"{entry / commit:>12.1f}  {grew:>11,.0f}  {packed:>8,.0f}   (entry ×"
              f"{entry / first:.1f} of the first)")


if __name__ == "__main__":
    main()
