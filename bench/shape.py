"""Issue 39's table: does a book written from an outline follow it, pace it and end?

    .venv/bin/python -m bench.shape                        # 12 chapters, 120 scenes, through the test server
    .venv/bin/python -m bench.shape --offline              # in-process, no HTTP
    .venv/bin/python -m bench.shape --chapters 3 --scenes 2   # a small book (the suite's)
    .venv/bin/python -m bench.shape --keep /tmp/shape      # keep both projects (follow/, stress/)

Each part makes a book's outline with `novel outline`'s code (tick/stages/outline.py's
new_outline, answered by the offline outline, models/offline_outline.py): `--chapters`
chapters of `--scenes` beats and `--scenes` scenes each (12 × 10: 120 beats, 120 scenes
planned), the `--curve` tension curve; then ticks it through the real openai SDK and the
test server (tests/support/story_server.py) until the book is finished and the next tick
refuses, or a guard of twice the planned scenes.

1. A model that follows instructions (tests/support/follow_model.py): it plans the beat
   it is offered, writes it, says it was done (now and then only partly), rates the
   tension it was asked for give or take two, resolves the loops it is shown as due and
   opens one now and then, never in the final act. Prints the beats landed in order
   (goal 100%), the loops resolved or kept open at the end (goal 100%), whether the book
   finished at its last beat and at which tick against the planned scenes, and the
   Pearson correlation of each scene's target tension (what its planner was shown:
   story/outline/standing.py's tension_course) with the tension its extractor rated.
2. The stress model (tests/support/stress_model.py), which ignores instructions: it names
   no beat, says the beat did not happen, rates tension at random and opens a loop each
   scene. Prints the outline's revisions (history entries of kind `outline` after the
   first), whether the run ended by itself (the book finished, the next tick refused)
   and its finishing tick against 1.5 times the planned scenes.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.long_run import opened
from novel_agent.config.settings import CURVES
from novel_agent.errors import BookFinishedError
from novel_agent.history.hooks import after_outline, history_of
from novel_agent.models.offline import OfflineModel
from novel_agent.story.memory.read import load_memory
from novel_agent.story.outline.file import Outline, load_outline
from novel_agent.story.outline.standing import read_standing, tension_course
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.scenes import Scene, load_scenes
from novel_agent.tick.pipeline import tick
from novel_agent.tick.stages.outline import new_outline
from tests.support.follow_model import FollowModel
from tests.support.stress_model import StressModel

MakeModel = Callable[[], OfflineModel]
MODELS: dict[str, tuple[str, MakeModel]] = {
    "follow": ("follow model (does what the prompt asks)",
               lambda: FollowModel()),
    "stress": ("stress model (ignores instructions)",
               lambda: StressModel()),
}
GUARD = 2.0        # a run stops at this times the planned scenes if the book has not ended
STRETCH = 1.5      # a book that ignores its outline must still end within this times it


def book(folder: Path, name: str, offline: bool, chapters: int, scenes: int,
         curve: str) -> Project:
    """A new book whose outline (made by `outlined`) will have `chapters` chapters of
    `scenes` beats and `scenes` scenes."""
    config = {"llm": {"provider": "offline" if offline else "openai",
                      "model": "small-local-model"},
              "outline": {"curve": curve, "chapters": chapters, "beats_per_chapter": scenes,
                          "scenes_per_chapter": scenes}}
    return create_project(folder / name, {
        "name": name, "premise": "A lighthouse keeper finds a drowned man's map.",
        "protagonist": "Mara Quill"}, config=config)


def outlined(project: Project, make: MakeModel) -> Outline:
    """The book's outline made as `novel outline` makes it, and its history entry."""
    with opened(project, True, make) as s:         # in-process, as the CLI makes it
        outline = new_outline(s)
        after_outline(project, f"outline made: {outline.describe()}", now=s.now)
    return outline


@dataclass
class Ran:
    """How a run went: its ticks, the one that finished the book, whether the next refused."""

    ticks: int = 0
    finished_at: int | None = None
    refused: bool = False
    seconds: float = 0.0


def run(project: Project, offline: bool, make: MakeModel, guard: int) -> Ran:
    """Tick until the book is finished and a tick refuses, or `guard` ticks."""
    ran, started = Ran(), time.monotonic()
    with opened(project, offline, make) as s:
        while ran.ticks < guard:
            try:
                result = tick(s)
            except BookFinishedError:
                ran.refused = True
                break
            ran.ticks += 1
            if result.finished:
                ran.finished_at = result.tick
    ran.seconds = time.monotonic() - started
    return ran


def landed_in_order(outline: Outline, scenes: list[Scene]) -> int:
    """The outline's beats done in its order: each done (first) after every beat before
    it was done."""
    done: dict[str, int] = {}
    for scene in scenes:
        if scene.beat and scene.beat_status == "done":
            done.setdefault(scene.beat, scene.tick)
    count, last = 0, 0
    for beat in outline.beats():
        at = done.get(beat.id)
        if at is None:
            last = 10 ** 9          # a beat never done: none after it is in order
            continue
        if at > last:
            count += 1
        last = max(last, at)
    return count


def closed_loops(project: Project) -> tuple[int, int]:
    """(loops resolved or kept open on purpose, loops) in the book's memory."""
    loops = load_memory(project.memory_dir).loops
    return sum(1 for loop in loops if loop.get("status") == "resolved"
               or loop.get("keep_open") is True), len(loops)


def tension_r(project: Project, outline: Outline, scenes: list[Scene]) -> tuple[float | None, int]:
    """The Pearson correlation of the target tension each scene's planner was shown and
    the tension its extractor rated, and the scenes it is over."""
    course = tension_course(outline, scenes, project.config().outline.curve)
    pairs = [(t, r) for t, r in course.values() if t is not None and r is not None]
    if len(pairs) < 3 or len({t for t, _ in pairs}) < 2 or len({r for _, r in pairs}) < 2:
        return None, len(pairs)
    return statistics.correlation([t for t, _ in pairs], [r for _, r in pairs]), len(pairs)


REVISED = "outline revised at chapter"     # a checkpoint's revision's history subject


def revisions(project: Project) -> int:
    """The outline's revisions at checkpoints: its history entries of kind `outline`
    whose subject says so (not the outline made, edited or rewritten by hand)."""
    history = history_of(project)
    entries = history.entries() if history is not None else []
    return sum(1 for e in entries if e.kind == "outline" and e.subject.startswith(REVISED))


def row(label: str, value: str) -> str:
    return f"  {label:<30}{value}"


def share(part: int, whole: int) -> str:
    return f"{part} of {whole}  {part / whole:.0%}" if whole else f"{part} of {whole}  (none)"


def report(part: str, project: Project, first: Outline, ran: Ran, guard: int) -> list[str]:
    """The part's lines of the table (`first`: the outline the book began with)."""
    outline = load_outline(project.outline_file) or first
    scenes = load_scenes(project.scenes_dir)
    planned = first.planned_scenes()
    at = read_standing(project, project.config().outline.curve)
    closed, loops = closed_loops(project)
    r, rated = tension_r(project, outline, scenes)
    beats = outline.beats()
    last = beats[-1].id if beats else ""
    at_last = (at is not None and at.finished and bool(scenes) and scenes[-1].beat == last
               and scenes[-1].beat_status == "done")
    finished = (f"tick {ran.finished_at} of {planned} planned ({ran.finished_at / planned:.2f}×)"
                if ran.finished_at else "never")
    lines = [f"{MODELS[part][0]}: {ran.ticks} ticks in {ran.seconds:.0f} s "
             f"({ran.seconds / max(1, ran.ticks):.2f} s a tick)"]
    if part == "stress":
        made = revisions(project)
        within = ran.finished_at is not None and ran.finished_at <= STRETCH * planned
        lines += [row("outline revised", f"{made} time{'s' * (made != 1)} (drift noticed at "
                      "chapters closed off course)" if made else "0: no drift noticed"),
                  row("ended by itself", f"yes: the next tick refused (guard {guard} ticks)"
                      if ran.refused else f"NO: stopped by the guard at {ran.ticks} ticks"),
                  row(f"finished within {STRETCH}× planned",
                      f"{'yes' if within else 'NO'}: tick {ran.finished_at} of "
                      f"{STRETCH * planned:.0f}" if ran.finished_at else "NO: never")]
    goal = "  (goal 100%)" if part == "follow" else ""
    lines += [row("beats landed in order", share(landed_in_order(outline, scenes), len(beats))
                  + goal),
              row("loops resolved or kept open", share(closed, loops) + goal),
              row("finished at its last beat", f"{'yes' if at_last else 'no'}: {finished}"
                  + ("; the next tick refused" if ran.refused and part == "follow" else "")),
              row("target and realized tension", f"r = {r:.2f} over {rated} scenes"
                  if r is not None else f"no correlation ({rated} scenes rated)")]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", type=int, default=12)
    parser.add_argument("--scenes", type=int, default=10,
                        help="beats and planned scenes of each chapter")
    parser.add_argument("--curve", default="three_act", choices=CURVES)
    parser.add_argument("--parts", nargs="+", choices=sorted(MODELS), default=["follow", "stress"])
    parser.add_argument("--offline", action="store_true", help="in-process, no test server")
    parser.add_argument("--keep", type=Path, default=None,
                        help="copy the projects here (DIR/follow, DIR/stress)")
    args = parser.parse_args()
    how = "in-process" if args.offline else "through the test server"
    with tempfile.TemporaryDirectory() as folder:
        for part in args.parts:
            make = MODELS[part][1]
            project = book(Path(folder), part, args.offline, args.chapters, args.scenes,
                           args.curve)
            outline = outlined(project, make)
            if part == args.parts[0]:
                print(f"{outline.describe()} ({args.curve}), {how}")
            guard = int(GUARD * outline.planned_scenes())
            ran = run(project, args.offline, make, guard)
            print(*report(part, project, outline, ran, guard), sep="\n", flush=True)
            if args.keep:
                shutil.rmtree(args.keep / part, ignore_errors=True)
                shutil.copytree(project.root, args.keep / part)
        if args.keep:
            print(f"projects kept in {args.keep}/ (novel stats -p {args.keep}/follow)")


if __name__ == "__main__":
    main()
