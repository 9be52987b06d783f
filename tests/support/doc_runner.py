"""Running the commands of a docs page (tests/support/doc_examples.py reads them) and judging
what they printed. A `novel …` line that is plain arguments runs in-process through the one
CLI runner (tests/support/clirunner.py), which is quick; any other line (printf, sed, git,
a pipe, a redirect, a `$VAR`) runs through bash in the page's folder, with a `novel` on its
PATH that runs this checkout (install_novel)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from tests.support.clirunner import invoke
from tests.support.doc_examples import Command, first_missing
from tests.support.repo import ROOT

TIMEOUT = 90      # seconds a command may take: a daemon without a bound fails, rather than hangs
QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
SHELL_SYNTAX = set("|&;<>()$`*?~{}[]\\")
STILL_RUNNING = (f"it was still running after {TIMEOUT}s: an example without a bound (`novel run --ticks 3`) "
                 "or one marked `<!-- doc-test: skip — reason -->`")
NOVEL_SCRIPT = """#!/bin/sh
# `novel` as the docs tests run it: this checkout, on this interpreter
PYTHONPATH="{root}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{python}" -c \
'from novel_agent.cli import main; main()' "$@"
"""


@dataclass
class Outcome:
    """What a command did: its exit code, its output (stdout and stderr as a terminal shows
    them) and, when it raised in-process or outlived TIMEOUT, what happened instead."""

    exit_code: int
    output: str
    crash: str | None = None


def install_novel(bin_dir: Path) -> Path:
    """Write a `novel` script into bin_dir (for the lines bash runs) and return bin_dir."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "novel"
    script.write_text(NOVEL_SCRIPT.format(root=ROOT, python=sys.executable))
    script.chmod(0o755)
    return bin_dir


def novel_args(line: str) -> list[str] | None:
    """The arguments of a `novel …` line that needs no shell (no pipe, redirect, variable,
    glob or `NAME=value` prefix outside quotes), else None."""
    if not line.startswith("novel ") and line != "novel":
        return None
    if SHELL_SYNTAX & set(QUOTED.sub("", line)):
        return None
    return shlex.split(line)[1:]


def run(line: str, folder: Path) -> Outcome:
    """Run one line of a page, in-process when it can, else through bash in folder."""
    args = novel_args(line)
    return run_in_process(args) if args is not None else run_in_shell(line, folder)


class StillRunning(BaseException):
    """Raised in a command run in-process when it outlives TIMEOUT (a BaseException, so that
    neither the command nor the CLI runner takes it for its own error)."""


def _still_running(signum, frame):
    raise StillRunning


def run_in_process(args: list[str]) -> Outcome:
    """`novel ARGS` through the CLI runner (the current directory is the page's folder),
    stopped by SIGALRM after TIMEOUT seconds."""
    previous = signal.signal(signal.SIGALRM, _still_running)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        result = invoke(*args, catch_exceptions=True, prog_name="novel")
    except StillRunning:
        return Outcome(-1, "", crash=STILL_RUNNING)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    crash = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "it raised:\n" + "".join(traceback.format_exception(*result.exc_info))
    return Outcome(result.exit_code, result.output, crash)


def run_in_shell(line: str, folder: Path) -> Outcome:
    """A shell line through bash in folder, stdin empty, stderr with stdout."""
    try:
        done = subprocess.run(["bash", "-c", line], cwd=folder, env=os.environ.copy(), timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    except subprocess.TimeoutExpired as timeout:
        output = timeout.output.decode(errors="replace") if isinstance(timeout.output, bytes) else ""
        return Outcome(-1, output, crash=STILL_RUNNING)
    return Outcome(done.returncode, done.stdout)


def reported_findings(command: Command, outcome: Outcome) -> bool:
    """A `novel` command that exits 1 with no `Error:`, its findings shown on the page, is
    no failure: novel doctor, novel audit and novel lore check exit 1 when they list
    problems. (A command the page shows no output for must exit 0.)"""
    lines = [line.strip() for line in outcome.output.splitlines()]
    return (command.text.startswith("novel") and outcome.exit_code == 1
            and any(line.strip() for line in command.shown)
            and not any(line.startswith(("Error:", "Traceback")) for line in lines))


def problem(command: Command, outcome: Outcome) -> str | None:
    """What is wrong with what a command did, against what its page shows, or None."""
    if outcome.crash:
        return outcome.crash
    if command.expects_failure():
        if outcome.exit_code == 0:
            return "it succeeded, but the page shows it failing (`Error:`)"
    elif outcome.exit_code != 0 and not reported_findings(command, outcome):
        return f"it failed (exit {outcome.exit_code}), but the page shows no `Error:`"
    missing = first_missing(command.shown, outcome.output)
    if missing is not None:
        return f"this line the page shows is not in its output (in order, by shape):\n    {missing}"
    return None
