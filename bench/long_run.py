"""Issue 20's table: is tick 300 as good as tick 30 on a stress run at 8,192 tokens?

    .venv/bin/python -m bench.long_run                       # 300 ticks through the test server
    .venv/bin/python -m bench.long_run --ticks 1000 --offline   # in-process, no HTTP
    .venv/bin/python -m bench.long_run --ticks 120 --keep /tmp/lr  # keep the project

The answers come from tests/support/stress_model.py (2–4 new characters or places and a
new loop nearly every scene, none resolved), through the real openai SDK and
tests/support/fake_openai.py (tests/support/story_server.py's StoryServer), or in-process with
--offline. Prints, per stage at ticks 30/100/300 (or the last): tokens used /
budget, the recall probe's share, scenes no part of the prompt tells (from scene 1),
ranges covered twice, then the summary tree's depth, the loops the planner
was shown (oldest and newest opened-in), the shared-prefix medians, the
time ratios (median of ticks 1–50 against the last 50; and each end against a fresh
book ticked beside it at the same moments, which the machine's drift moves alike)
and the log's bytes.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.style import learned_text, read_samples
from novel_agent.tick.pipeline import TickResult, tick
from novel_agent.tick.session import Session
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.long_checks import LongRun, checkpointed
from tests.support.story_server import StoryServer
from tests.support.stress_model import StressModel


def timed(session: Session) -> tuple[TickResult, float, float]:
    """One tick, its seconds, all of it (the stages' events leave out the reading
    before the planner and the history and index after the commit), and the CPU
    seconds the process spent in it (the test server's thread included)."""
    started, cpu = time.monotonic(), time.process_time()
    result = tick(session)
    return result, time.monotonic() - started, time.process_time() - cpu


BESIDE = 60      # the long book's first and last ticks that a fresh book is ticked beside


def book(folder: Path, offline: bool, window: int, preset: str, name: str = "stress",
         style: Sequence[Path] = ()) -> Project:
    """A new book for the stress model (`name` seeds its story: another name, other people,
    places and loops, so a fresh book beside the long one finds none of its texts already
    counted or parsed in the process's caches)."""
    config = {"llm": {"provider": "offline" if offline else "openai",
                      "model": "small-local-model"}, "preset": preset}
    if offline:
        config["context"] = {"window": window}
    project = create_project(folder, {
        "name": name, "premise": "A lighthouse keeper finds a drowned man's map.",
        "protagonist": "Mara Quill"}, config=config)
    if style:       # as `novel style learn FILE…` writes it
        files = list(style)
        (project.root / "style.yaml").write_text(
            learned_text(read_samples(files), [f.name for f in files]), encoding="utf-8")
    return project


def stress() -> OfflineModel:
    return StressModel()


@contextmanager
def opened(project: Project, offline: bool,
           make: Callable[[], OfflineModel] = stress) -> Iterator[Session]:
    """A session on `project` answered by the model `make` makes (the stress model):
    in-process, or through a test server of its own."""
    if offline:
        with reconciled(project), Session.open(project, project.config(), make_model=make) as s:
            yield s
        return
    server = StoryServer(project, model=make())
    try:
        with FakeOpenAIServer(server) as fake:
            config = project.config(flags={"llm.base_url": fake.base_url})
            with reconciled(project), Session.open(project, config,
                                                   {"OPENAI_API_KEY": "sk-test"}) as s:
                yield s
    finally:
        server.close()


def run(ticks: int, offline: bool, window: int, preset: str, folder: Path,
        style: Sequence[Path] = ()) -> LongRun:
    """The long book's ticks, each timed; beside its first and last BESIDE, a fresh book's
    (a new one for each end), timed the same way at the same moments (LongRun.beside)."""
    watch = LongRun(book(folder / "stress", offline, window, preset, style=style))
    ends = {"head": range(1, BESIDE + 1), "tail": range(ticks - BESIDE + 1, ticks + 1)}
    with opened(watch.project, offline) as s, ExitStack() as fresh:
        beside: tuple[str, Session] | None = None       # the end, its fresh book's session
        for n in range(1, ticks + 1):
            end = next((e for e, span in ends.items() if n in span), None)
            if end is not None and beside is None:
                beside = end, fresh.enter_context(opened(
                    book(folder / end, offline, window, preset, name=f"beside {end}"), offline))
            watch.after(*timed(s))
            if beside is not None:
                result, seconds, _ = timed(beside[1])
                if not checkpointed(result):
                    watch.beside.setdefault(beside[0], []).append(seconds)
                if n in (ends["head"][-1], ticks):
                    fresh.close()       # the fresh book's session, its server and its lock
                    beside = None
            if offline and watch.last_tick % 250 == 0 and watch.last_tick < ticks:
                print(f"-- at tick {watch.last_tick}", *watch.table(), sep="\n",  # a long
                      flush=True)                                             # run's progress
    return watch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--offline", action="store_true", help="in-process, no test server")
    parser.add_argument("--window", type=int, default=8192, help="offline: the window")
    parser.add_argument("--preset", default="balanced")
    parser.add_argument("--keep", type=Path, default=None, help="copy the project here")
    parser.add_argument("--style", type=Path, action="append", default=[],
                        help="the long book's style learned from this sample (repeatable)")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        watch = run(args.ticks, args.offline, args.window, args.preset, Path(folder),
                    args.style)
        how = "in-process" if args.offline else "through the test server"
        print(f"{args.ticks} stress ticks {how} at {args.window:,} ({args.preset}) in "
              f"{time.monotonic() - started:.0f} s")
        for line in watch.table():
            print(line)
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(watch.project.root, args.keep)
            print(f"project kept in {args.keep} (novel context -p {args.keep} --show-prompt)")


if __name__ == "__main__":
    main()
