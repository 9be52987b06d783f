"""Every example in the docs that shows a command runs as the page shows it, on the offline
model: one test per page (README.md and docs/**/*.md), so a failure names the page, the
line, the command and what is wrong. How a page writes its examples:

- A ```console block is a terminal session: `$ ` lines are commands, the lines after one
  are its output. Those lines must appear in the output in that order, matched by shape:
  numbers, sizes, times and "quoted titles" may differ, `…` is any text within a line, a
  line of only `…` stands for lines left out. Output that begins `Error:` means the
  command must fail; a `novel` command that exits 1 without an `Error:`, its output
  shown, reported findings (novel doctor, novel audit), which is no failure.
- In a ```sh block every `novel …` line runs, in order, and must succeed (a `# comment`
  after it is left out); its other lines are for the reader.
- `<!-- doc-setup` ... `-->` holds shell lines run at that point of the page, unseen.
- `<!-- doc-test: skip — reason -->` before an example skips it; the reason is required.

Each page runs in a fresh folder, the current directory, with its projects under
./projects ($NOVEL_PROJECTS_DIR); `novel` lines run in-process when they need no shell,
the rest through bash (tests/support/doc_runner.py). A command still running after 90 s
fails: an example needs a bound (`novel run --ticks 3`) or a skip."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.doc_examples import Command, Example, PageError, Setup, pages, read
from tests.support.doc_runner import Outcome, install_novel, problem, run


@pytest.fixture(scope="module")
def novel_bin(tmp_path_factory) -> Path:
    """A folder holding the `novel` that bash lines run."""
    return install_novel(tmp_path_factory.mktemp("bin"))


@pytest.fixture
def page_folder(projects_dir, novel_bin, monkeypatch) -> Path:
    """The page's folder (the current directory, projects/ in it as $NOVEL_PROJECTS_DIR), the
    offline model, no OpenAI key, and `novel` on the PATH. The provider is set, not left to
    `auto`: with the test extras SmolLM2-135M is installed and `auto` would write with it
    (the embedded-models folder, $NOVEL_MODELS_DIR, is already empty: tests/conftest.py)."""
    monkeypatch.setenv("NOVEL_LLM_PROVIDER", "offline")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("PATH", f"{novel_bin}:" + os.environ["PATH"])
    return projects_dir.parent


class Prepared:
    """Folders as a page's first doc-setup left them, by its lines. Pages that begin with the
    same setup (three tick 40 scenes, three 12) copy the folder the first made rather than
    run it again: the offline model writes the same book each time, and no file of a
    project holds the folder's path."""

    def __init__(self, tmp_path_factory):
        self.factory = tmp_path_factory
        self.folders: dict[tuple[str, ...], Path] = {}

    def set_up(self, page: str, steps: list[Setup | Example], folder: Path) -> list[Setup | Example]:
        """Run the page's first doc-setup in folder, or copy the folder an identical one
        left; return the steps still to run."""
        if not steps or not isinstance(steps[0], Setup):
            return steps
        key = tuple(command.text for command in steps[0].lines)
        if key in self.folders:
            shutil.copytree(self.folders[key], folder, dirs_exist_ok=True, symlinks=True)
        else:
            run_step(page, steps[0], folder)
            self.folders[key] = self.factory.mktemp("setup") / "folder"
            shutil.copytree(folder, self.folders[key], symlinks=True)
        return steps[1:]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Prepared:
    """The folders the pages' first doc-setups left, for this module's tests."""
    return Prepared(tmp_path_factory)


def run_step(page: str, step: Setup | Example, folder: Path) -> None:
    """Run a step's commands in folder; fail the test at the first that is wrong."""
    for command in commands(step):
        outcome = run(command.text, folder)
        what = problem(command, outcome)
        if what:
            pytest.fail(report(page, command, what, outcome), pytrace=False)


def commands(step: Setup | Example) -> list[Command]:
    """The commands a step runs (none for an example marked skip)."""
    if isinstance(step, Setup):
        return step.lines
    return [] if step.skip else step.commands


def report(page: str, command: Command, what: str, outcome: Outcome) -> str:
    """The failure message: the page and line, the command, what is wrong, what it printed."""
    return (f"{page}:{command.line}: $ {command.text}\n{what}\n"
            f"--- exit {outcome.exit_code}, output:\n{outcome.output}---")


@pytest.mark.parametrize("page", pages())
def test_page_examples_run_as_shown(page, page_folder, prepared):
    try:
        steps = read(page)
    except PageError as error:
        pytest.fail(f"{page}: {error}", pytrace=False)
    for step in prepared.set_up(page, steps, page_folder):
        run_step(page, step, page_folder)
