"""Same books: does a change of the code (a refactoring) leave the books it writes as they were?

    .venv/bin/python -m bench.same_books write /tmp/before          # on the old code
    .venv/bin/python -m bench.same_books write /tmp/after           # on the new code
    .venv/bin/python -m bench.same_books compare /tmp/before /tmp/after

`write` writes four books from scratch, 100 ticks each (`--ticks`):
- `offline`: the offline model, the balanced preset;
- `outline`: the offline model with an outline, a learned style and `audit.mode: revise`,
  until the outline's last beat lands (or the ticks run out);
- `lean`: the offline model at an 8,192-token window on the aggressive preset;
- `stress`: the stress model (tests/support/stress_model.py) through the real openai SDK and
  the test server, at 8,192 tokens, with a learned style.
`compare` lists every file that differs between two such folders, or that one has and the
other has not (the scenes, plans, memory, summaries, outline, state.yaml and each stage's
prompt log; not the history, the index or the usage ledger, which hold clock times), and
exits 1 when any does.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from bench.long_run import book
from novel_agent.errors import NovelError
from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.style import learned_text
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.story_server import StoryServer
from tests.support.stress_model import StressModel

SAMPLE = """The lamp had been lit at four, as it was every evening in the short days, and Edda
watched the beam sweep the grey water. She did not like the look of the sky. "Mr. Haig," she
said, "the glass is falling." He only nodded, as he always did, and went on mending the net.

They had kept the light together for eleven winters. She knew his silences the way she knew
the stairs: which step creaked, which one was worn hollow in the middle. Tonight his silence
was a new one. It sat in the room like a third person.

"You'll want your supper," he said at last.

"I want to know what you found on the shingle."
"""
PREMISE = "A clockmaker's apprentice hides a stolen heart inside the town's great clock."
NOW = datetime(2026, 1, 1, tzinfo=UTC)      # every timestamp the books write
SKIPPED = ("history.git", "index.db", "usage.jsonl", "lock", "txn", "heartbeat")


def _ticks(session: Session, ticks: int) -> int:
    done = 0
    for _ in range(ticks):
        try:
            tick(session)
        except NovelError as exc:       # a finished book: its last beat has landed
            if "finished" not in str(exc):
                raise
            break
        done += 1
    return done


def _offline(folder: Path, name: str, config: dict, ticks: int, *, outline: bool = False,
             style: bool = False) -> int:
    project = create_project(folder / name, {"name": name, "premise": PREMISE,
                                            "protagonist": "Ilse Morrow"},
                             config={"llm": {"provider": "offline"}, **config})
    if style:
        (project.root / "style.yaml").write_text(learned_text([SAMPLE], ["sample.md"]),
                                                 encoding="utf-8")
    with reconciled(project), Session.open(project, project.config(), now=lambda: NOW,
                                           make_model=lambda: OfflineModel(seed=0)) as session:
        if outline:
            from novel_agent.tick.stages.outline import new_outline
            new_outline(session)
        return _ticks(session, ticks)


def _stress(folder: Path, ticks: int) -> int:
    sample = folder / "sample.md"
    sample.write_text(SAMPLE, encoding="utf-8")
    project: Project = book(folder / "stress", False, 8192, "balanced", style=[sample])
    sample.unlink()
    server = StoryServer(project, model=StressModel())
    try:
        with FakeOpenAIServer(server) as fake:
            config = project.config(flags={"llm.base_url": fake.base_url})
            with reconciled(project), Session.open(project, config, {"OPENAI_API_KEY": "sk-test"},
                                                   now=lambda: NOW) as session:
                return _ticks(session, ticks)
    finally:
        server.close()


def write(folder: Path, ticks: int, only: list[str]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    made = {
        "offline": lambda: _offline(folder, "offline", {"preset": "balanced"}, ticks),
        "outline": lambda: _offline(folder, "outline", {"preset": "balanced",
                                                        "audit": {"mode": "revise"}},
                                    ticks, outline=True, style=True),
        "lean": lambda: _offline(folder, "lean", {"preset": "aggressive",
                                                  "context": {"window": 8192}}, ticks),
        "stress": lambda: _stress(folder, ticks),
    }
    for name, make in made.items():
        if only and name not in only:
            continue
        print(f"{name}: {make()} ticks", flush=True)


def files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not any(part in SKIPPED for part in rel.parts):
            yield rel


def compare(before: Path, after: Path, show: int) -> int:
    old, new = set(files(before)), set(files(after))
    differ = [rel for rel in sorted(old & new)
              if (before / rel).read_bytes() != (after / rel).read_bytes()]
    for rel in sorted(old - new):
        print(f"only in {before}: {rel}")
    for rel in sorted(new - old):
        print(f"only in {after}: {rel}")
    for rel in differ:
        print(f"differs: {rel}")
        lines = difflib.unified_diff(
            (before / rel).read_text(errors="replace").splitlines(),
            (after / rel).read_text(errors="replace").splitlines(), lineterm="", n=1)
        for line in list(lines)[2:2 + show]:
            print(f"    {line}")
    total = len(old ^ new) + len(differ)
    print(f"{len(old & new) - len(differ)} files the same, {total} not")
    return 1 if total else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write the books into FOLDER (emptied first)")
    w.add_argument("folder", type=Path)
    w.add_argument("--ticks", type=int, default=100)
    w.add_argument("--only", action="append", default=[],
                   help="only this book (offline, outline, lean, stress); repeatable")
    c = sub.add_parser("compare", help="list the files that differ between two folders")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--show", type=int, default=8, help="diff lines shown per file")
    args = parser.parse_args()
    if args.command == "write":
        write(args.folder, args.ticks, args.only)
    else:
        sys.exit(compare(args.before, args.after, args.show))


if __name__ == "__main__":
    main()
