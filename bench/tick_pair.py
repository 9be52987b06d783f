"""A new book and a grown one ticked in turn: issue 20's flat tick without the machine's drift.

    .venv/bin/python -m bench.tick_pair                     # a new book against one at 300
    .venv/bin/python -m bench.tick_pair --at 1000 --ticks 40
    .venv/bin/python -m bench.tick_pair --grown /tmp/lr300  # a kept project (long_run --keep)

bench/long_run.py times ticks 1-50 and 251-300 of one run, half a minute apart; on a
shared machine whose speed moves by a third within a minute its ratio moved from 1.06 to
1.69 between runs of the same code. Here a stress book is grown offline to --at ticks
(tests/support/stress_model.py, 8,192 window; or --grown names a kept one, copied), then it and a
new book are ticked in turn, --ticks times each, so that a drift of the machine falls on
both alike. Prints, per step (wrapped as bench/tick_phases.py does), the median wall ms
of the new book's ticks and of the grown book's (ticks that made no checkpoint), and the
ratio of the whole tick's.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.tick_phases import Phases, stress_book
from novel_agent.story.project.folder import Project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick import pipeline
from novel_agent.tick.session import Session
from tests.support.stress_model import StressModel


def opened(stack: ExitStack, project: Project) -> Session:
    stack.enter_context(reconciled(project))
    return stack.enter_context(Session.open(project, project.config(),
                                            make_model=lambda: StressModel()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", type=int, default=300, help="ticks the grown book has")
    parser.add_argument("--ticks", type=int, default=50, help="ticks of each book timed")
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--grown", type=Path, help="a kept project to use as the grown book")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        grown = Path(folder) / "grown"
        if args.grown:
            shutil.copytree(args.grown, grown, symlinks=True)
            book = Project(grown)
        else:
            book = stress_book(grown, args.window)
            with ExitStack() as growing:
                session = opened(growing, book)
                for n in range(1, args.at + 1):
                    pipeline.tick(session)
                    if n % 100 == 0:
                        print(f"grown to tick {n}", file=sys.stderr, flush=True)
        books = {"new": opened(stack, stress_book(Path(folder) / "new", args.window)),
                 "grown": opened(stack, book)}
        pipeline.tick(books["grown"])       # a session's first tick reads memory whole
        at = book.tick()
        phases = Phases(time.perf_counter)
        phases.install()
        rows: dict[str, list[dict[str, float]]] = {"new": [], "grown": []}
        for n in range(args.ticks):
            for name in ("new", "grown") if n % 2 else ("grown", "new"):
                phases.now = {}
                started = time.perf_counter()
                result = pipeline.tick(books[name])
                spent = time.perf_counter() - started
                if not (result.summary and result.summary.made):
                    rows[name].append({"tick": spent, **phases.now})

    def median(name: str, key: str) -> float:
        return 1000 * statistics.median(r.get(key, 0.0) for r in rows[name])

    keys = sorted({k for r in rows["new"] + rows["grown"] for k in r} - {"tick"},
                  key=lambda k: median("new", k) - median("grown", k))
    print(f"a new book (ticks 1-{args.ticks}) and one at tick {at} (ticks {at + 1}-"
          f"{at + args.ticks}) ticked in turn, offline at {args.window:,}: wall ms, median "
          "of the ticks that made no checkpoint")
    print(f"  {'step':<20}{'new':>9}{'grown':>9}{'growth':>9}")
    for key in ["tick", *keys]:
        new, old = median("new", key), median("grown", key)
        print(f"  {key:<20}{new:9.1f}{old:9.1f}{old - new:9.1f}")
    print(f"  ratio {median('grown', 'tick') / median('new', 'tick'):.2f} (goal <= 1.3)")


if __name__ == "__main__":
    main()
