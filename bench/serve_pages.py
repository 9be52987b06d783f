"""Benchmark: what each page of `novel serve` costs to render for a 1,000-scene project.

    python -m bench.serve_pages                      # 1,000 offline ticks, then the pages
    python -m bench.serve_pages --ticks 200 --keep /tmp/book   # keep (and reuse) the project

Writes the book with the offline model (real ticks: scenes, plans, memory, summaries,
prompt logs, the usage ledger), then serves it on 127.0.0.1 (uvicorn in a thread, as
the tests do) and times each page over HTTP: the first request (cold: nothing cached
by the server yet), the median of 5 more, and the size of the answer. For comparison it also times the book as one page of every scene (what a
book page without paging would cost).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import novel_agent.web.pages as pages
from novel_agent.history.hooks import opened
from novel_agent.history.store import History
from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.folder import Project, create_project
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.web_server import make_site, serving

REPEATS = 5


def make_book(root: Path, ticks: int) -> Project:
    """harbour under `root` with `ticks` offline scenes (reused if it has them already)."""
    folder = root / "harbour"
    project = Project(folder) if folder.is_dir() else create_project(folder, {
        "name": "harbour", "premise": "A lighthouse keeper finds a drowned man's map.",
        "protagonist": "Mara Quill"}, config={"llm": {"provider": "offline"}})
    missing = ticks - project.tick()
    if missing > 0:
        print(f"writing {missing} offline ticks ...", flush=True)
        started = time.monotonic()
        with opened(project), Session.open(project, project.config(),
                                   make_model=lambda: OfflineModel(seed=0)) as s:
            for n in range(missing):
                tick(s)
                if (n + 1) % 100 == 0:
                    print(f"  tick {project.tick()}  ({time.monotonic() - started:.0f}s)",
                          flush=True)
    return project


def timed(client, path: str) -> tuple[float, float, int, int]:
    """(seconds of the first GET path, median of the rest, status, bytes)."""
    seconds, answer = [], None
    for _ in range(REPEATS + 1):
        started = time.perf_counter()
        answer = client.get(path)
        seconds.append(time.perf_counter() - started)
    return seconds[0], statistics.median(seconds[1:]), answer.status, len(answer.text.encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=1000)
    parser.add_argument("--keep", type=Path, default=None, help="a folder to keep the project in")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = args.keep or Path(temp)
        root.mkdir(parents=True, exist_ok=True)
        project = make_book(root, args.ticks)
        n = project.tick()
        last_page = -(-n // pages.PAGE_SCENES)
        paths = ["/", "/p/harbour/book", f"/p/harbour/book?page={last_page}",
                 f"/p/harbour/scene/{n // 2}", "/p/harbour/live", "/p/harbour/steer",
                 "/p/harbour/lore", "/p/harbour/memory", "/p/harbour/context",
                 "/p/harbour/context?stage=planner", "/p/harbour/numbers",
                 "/p/harbour/stats.png", "/p/harbour/history", "/p/harbour/history?page=10",
                 f"/p/harbour/history/entry/{History(project).entry_at(n // 2).short}",
                 f"/p/harbour/history/rewind?tick={n // 2}", "/p/harbour/branches",
                 "/p/harbour/search?q=lantern", '/p/harbour/search?q="brass+key"']
        print(f"\n{n} scenes; the first request, then the median of {REPEATS} more\n")
        print(f"{'page':<34} {'first ms':>9} {'then ms':>8} {'kB':>7}")
        with serving(make_site(root)) as client:
            for path in paths:
                first, then, status, size = timed(client, path)
                note = "" if status == 200 else f"  (status {status})"
                print(f"{path:<34} {first * 1000:>9.0f} {then * 1000:>8.0f} "
                      f"{size / 1024:>7.1f}{note}")
            pages.PAGE_SCENES = n          # the whole book as one page, for comparison
            first, then, status, size = timed(client, "/p/harbour/book")
            print(f"{'(the book unpaged: every scene)':<34} {first * 1000:>9.0f} "
                  f"{then * 1000:>8.0f} {size / 1024:>7.1f}")


if __name__ == "__main__":
    main()
