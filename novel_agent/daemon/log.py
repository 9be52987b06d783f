"""The daemon's log: `.novel/log/daemon.log` (rotated) and the console.

Every event of a run goes to a logger with two handlers: a RotatingFileHandler
(1 MB, 3 old files kept; timestamps, levels) and the console, through a
function the CLI gives (click.echo). `--verbose` adds the stage lines to both;
`--quiet` leaves only warnings and errors on the console (the file keeps INFO).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from logging.handlers import RotatingFileHandler

from novel_agent.story.project.folder import Project

MAX_BYTES = 1_000_000
BACKUPS = 3


class EchoHandler(logging.Handler):
    """A handler that hands each message to `echo` (no timestamp: a console line)."""

    def __init__(self, echo: Callable[[str], None], level: int):
        super().__init__(level)
        self.echo = echo

    def emit(self, record: logging.LogRecord) -> None:
        self.echo(record.getMessage())


def daemon_log_path(project: Project):
    return project.log_dir / "daemon.log"


def open_log(project: Project, echo: Callable[[str], None], *, verbose: bool = False,
             quiet: bool = False) -> logging.Logger:
    """A logger for one run on `project`, writing to daemon.log and to `echo`."""
    project.log_dir.mkdir(parents=True, exist_ok=True)
    logger = logging.getLogger(f"novel_agent.daemon.loop.{project.root}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    close_log(logger)
    file = RotatingFileHandler(daemon_log_path(project), maxBytes=MAX_BYTES,
                               backupCount=BACKUPS, encoding="utf-8")
    file.setLevel(logging.DEBUG if verbose else logging.INFO)
    file.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(message)s"))
    logger.addHandler(file)
    console = logging.DEBUG if verbose else (logging.WARNING if quiet else logging.INFO)
    logger.addHandler(EchoHandler(echo, console))
    return logger


def close_log(logger: logging.Logger) -> None:
    """Flush and close every handler of `logger`."""
    for handler in list(logger.handlers):
        handler.close()
        logger.removeHandler(handler)
