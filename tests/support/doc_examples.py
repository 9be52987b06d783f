"""The examples of a docs page as the tests read them (the conventions: tests/docs/
test_examples.py's docstring): a page is a list of steps in page order, each a Setup (the
lines of a `<!-- doc-setup ... -->` comment) or an Example (a ```console or ```sh block,
perhaps marked `<!-- doc-test: skip — reason -->`); and the shape an output line shown on a
page stands for. Pure: no file is run here (tests/support/doc_runner.py runs them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.repo import ROOT

ELLIPSIS = "…"
SKIP = re.compile(r"<!--\s*doc-test:\s*skip\b\s*(?:—|–|-+|:)?\s*(?P<reason>.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>```+)\s*(?P<lang>[\w-]*)\s*$")
RUN_LANGS = ("console", "sh")


class PageError(ValueError):
    """A page breaks the conventions (a skip without a reason, output before a command...)."""


@dataclass
class Command:
    """A line the reader types, with the page's line number and the output it shows."""

    text: str
    line: int
    shown: list[str] = field(default_factory=list)

    def expects_failure(self) -> bool:
        """A command whose shown output begins `Error:` must fail."""
        first = next((s.strip() for s in self.shown if s.strip()), "")
        return first.startswith("Error:")


@dataclass
class Setup:
    """The shell lines of a `<!-- doc-setup ... -->` comment (run whatever follows)."""

    lines: list[Command]


@dataclass
class Example:
    """A ```console or ```sh block: its commands in order; skip is the reason, if marked."""

    kind: str
    line: int
    commands: list[Command]
    skip: str | None = None


def pages() -> list[str]:
    """Every page with something to run, as a path from the repository's root: README.md
    and docs/**/*.md."""
    candidates = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [str(p.relative_to(ROOT)) for p in candidates
            if p.exists() and re.search(r"^\s*```+\s*(console|sh)\s*$|<!-- doc-setup", p.read_text(), re.M)]


def parse(text: str) -> list[Setup | Example]:
    """The setup comments and the console/sh examples of a page, in page order."""
    lines = text.splitlines()
    steps: list[Setup | Example] = []
    skip: tuple[int, str] | None = None
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("<!-- doc-setup"):
            i, setup = _setup(lines, i)
            steps.append(setup)
            continue
        if stripped.startswith("<!-- doc-test"):
            skip = (i + 1, _skip_reason(stripped, i + 1))
        elif FENCE.match(lines[i]):
            i, example = _fenced(lines, i)
            if example is not None:
                example.skip = skip[1] if skip else None
                steps.append(example)
            skip = None
            continue
        elif stripped and not stripped.startswith("<!--") and skip is not None:
            raise PageError(f"line {skip[0]}: a doc-test: skip not followed by an example")
        i += 1
    return steps


def _skip_reason(comment: str, number: int) -> str:
    """The reason of a `<!-- doc-test: skip — reason -->` comment (an error without one)."""
    match = SKIP.match(comment)
    if not match:
        raise PageError(f"line {number}: not a doc-test comment (`<!-- doc-test: skip — reason -->`): {comment}")
    if not match["reason"]:
        raise PageError(f"line {number}: a doc-test: skip must say why")
    return match["reason"]


def _setup(lines: list[str], start: int) -> tuple[int, Setup]:
    """The doc-setup comment opening at `start` (index after it, the Setup)."""
    commands = []
    i = start + 1
    while i < len(lines) and lines[i].strip() != "-->":
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            commands.append(Command(lines[i].strip(), i + 1))
        i += 1
    if i == len(lines):
        raise PageError(f"line {start + 1}: a doc-setup comment without its closing `-->` line")
    return i + 1, Setup(commands)


def _fenced(lines: list[str], start: int) -> tuple[int, Example | None]:
    """The fenced block opening at `start` (index after it, its Example when it runs)."""
    opening = FENCE.match(lines[start])
    assert opening is not None
    indent, ticks, lang = opening["indent"], opening["ticks"], opening["lang"]
    body: list[tuple[int, str]] = []
    i = start + 1
    while i < len(lines) and lines[i].strip() != ticks:
        body.append((i + 1, lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].strip()))
        i += 1
    if lang not in RUN_LANGS:
        return i + 1, None
    commands = _console(body) if lang == "console" else _sh(body)
    return i + 1, Example(lang, start + 1, commands)


def _console(body: list[tuple[int, str]]) -> list[Command]:
    """A console block's commands (`$ ` lines), each with the output lines after it."""
    commands: list[Command] = []
    for number, line in body:
        if line.startswith("$ "):
            commands.append(Command(line[2:].strip(), number))
        elif commands:
            commands[-1].shown.append(line)
        elif line.strip():
            raise PageError(f"line {number}: output before the first `$ ` command of a console block")
    return commands


def _sh(body: list[tuple[int, str]]) -> list[Command]:
    """An sh block's `novel …` lines, their comments left out (the other lines are not run)."""
    commands = [Command(strip_comment(line), number) for number, line in body]
    return [c for c in commands if c.text.split(" ", 1)[0] == "novel"]


def strip_comment(line: str) -> str:
    """The line without a `# comment` (a # outside quotes, at the start or after a space)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


TOKEN = re.compile(r'(…|"[^"]*"|\d[\d,.]*|\s+)')


def shape(shown: str) -> re.Pattern[str]:
    """The pattern an output line shown on a page stands for: numbers, sizes and times may
    differ, so may "quoted titles"; `…` is any text; runs of spaces are any spaces."""
    pattern = []
    for token in TOKEN.split(shown.strip()):
        if token == ELLIPSIS:
            pattern.append(".*?")
        elif token.startswith('"') and token.endswith('"') and len(token) > 1:
            pattern.append('".*?"')
        elif token[:1].isdigit():
            pattern.append(r"\d[\d,.]*")
        elif token.isspace():
            pattern.append(r"\s+")
        else:
            pattern.append(re.escape(token))
    return re.compile("".join(pattern))


def first_missing(shown: list[str], output: str) -> str | None:
    """The first shown line with no line of the output in its place (the shown lines must
    appear in order; blank lines and lines of only `…` stand for nothing), else None."""
    actual = [line.strip() for line in output.splitlines()]
    at = 0
    for line in shown:
        if line.strip() in ("", ELLIPSIS):
            continue
        pattern = shape(line)
        while at < len(actual) and not pattern.fullmatch(actual[at]):
            at += 1
        if at == len(actual):
            return line
        at += 1
    return None


def read(page: str) -> list[Setup | Example]:
    """parse() of a page given by its path from the repository's root."""
    return parse((ROOT / Path(page)).read_text())
