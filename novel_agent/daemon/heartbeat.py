"""The daemon's heartbeat: `.novel/daemon.json`, and what other commands make of it.

`novel run` rewrites the file atomically whenever its state changes (ticking,
sleeping, waiting for a fix, stopping, then stopped or failed): its pid, when it
started, ticks done, when the last tick landed, its pace and its last error, with
the tick it came before and its time. The error stays in the file once fixed (a
later tick went through, or a later edit of the file reloaded cleanly), marked with
the tick it was fixed from; `novel status` says so instead of showing it as live.
`novel status` reads it to say whether a daemon is running; `novel stop` signals
the pid it names, after checking that the pid is a `novel run` process (a pid
left in a stale file may since belong to anything).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from novel_agent.errors import FileFormatError, ProjectError
from novel_agent.files import atomic_write, read_bytes
from novel_agent.models.base import Progress
from novel_agent.story.project.folder import Project

ENDED = ("stopped", "failed")


@dataclass
class Heartbeat:
    """One daemon run as `.novel/daemon.json` holds it."""

    pid: int
    started: str
    state: str = "starting"        # ticking, sleeping, waiting, stopping, stopped, failed
    ticks: int = 0                 # ticks committed by this run
    words: int = 0                 # words those ticks wrote
    last_tick: str = ""            # when the last tick committed
    pace: float = 0.0              # seconds per tick so far, sleeps included
    interval: float = 0.0
    failures: int = 0              # failed ticks in a row
    last_error: str = ""
    error_tick: int = 0            # the tick the error came before (it failed, or ran after)
    error_at: str = ""             # when
    fixed_tick: int = 0            # fixed from this tick on (0: not fixed)
    ended: str = ""

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> Heartbeat:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def heartbeat_path(project: Project) -> Path:
    return project.novel_dir / "daemon.json"


def write_heartbeat(project: Project, beat: Heartbeat) -> None:
    """Rewrite `.novel/daemon.json` atomically."""
    atomic_write(heartbeat_path(project), json.dumps(asdict(beat), indent=1) + "\n")


def read_heartbeat(project: Project) -> Heartbeat | None:
    """The last heartbeat written, or None (no daemon ever ran, or the file is unreadable)."""
    try:
        data = json.loads(read_bytes(heartbeat_path(project)).decode("utf-8"))
        return Heartbeat.from_mapping(data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError, FileFormatError):
        return None


def is_novel_process(pid: int, proc: Path = Path("/proc")) -> bool:
    """Whether `pid` is alive and its command line is `novel ... run` (a novel_agent
    process), read from /proc/<pid>/cmdline; without /proc, alive is enough."""
    if pid <= 0:
        return False
    if not proc.is_dir():
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    try:
        args = (proc / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(b"novel" in a for a in args) and b"run" in args


def running(beat: Heartbeat | None) -> bool:
    """Whether the heartbeat's daemon is still running."""
    return beat is not None and beat.state not in ENDED and is_novel_process(beat.pid)


def status_lines(beat: Heartbeat | None) -> list[str]:
    """The daemon's lines for `novel status`."""
    if beat is None:
        return ["daemon      not running (start it with `novel run`)"]
    pace = f", pace {beat.pace:.1f} s per tick" if beat.ticks else ""
    ticks = f"{beat.ticks} tick{'s' if beat.ticks != 1 else ''}"
    if running(beat):
        lines = [f"daemon      running (pid {beat.pid}) since {beat.started}: {beat.state}, "
                 f"{ticks}{pace}"]
    elif beat.state in ENDED:
        lines = [f"daemon      not running: the last run {beat.state} at {beat.ended or '?'} "
                 f"after {ticks}{pace}"]
    else:
        lines = [f"daemon      not running: the last run (pid {beat.pid}, since {beat.started}) "
                 f"ended without a word, killed? ({ticks})"]
    if beat.last_error:
        lines.append(f"last error  {error_line(beat)}")
    return lines


def error_line(beat: Heartbeat) -> str:
    """The last error with its tick and time, and whether it has been fixed since."""
    when = " ".join(part for part in (f"tick {beat.error_tick}" if beat.error_tick else "",
                                      f"at {beat.error_at}" if beat.error_at else "") if part)
    fixed = f"fixed from tick {beat.fixed_tick} on" if beat.fixed_tick else ""
    head = ", ".join(part for part in (when, fixed) if part)
    return f"{head}: {beat.last_error}" if head else beat.last_error


def stop_daemon(project: Project, signum: int = signal.SIGTERM) -> int:
    """Ask the project's running daemon to stop after its tick; return its pid."""
    beat = read_heartbeat(project)
    if beat is None or beat.state in ENDED:
        raise ProjectError(f"no daemon is running on '{project.name}'",
                           path=str(heartbeat_path(project)))
    if not is_novel_process(beat.pid):
        raise ProjectError(f"no daemon is running on '{project.name}': pid {beat.pid} in "
                           f"{heartbeat_path(project)} is not a novel process (a stale file)",
                           path=str(heartbeat_path(project)))
    os.kill(beat.pid, signum)
    return beat.pid


def progress_path(project: Project) -> Path:
    return project.novel_dir / "progress.json"


class ProgressFile:
    """A streamed call's progress where other processes see it (the web page's live
    feed): `.novel/progress.json`, rewritten at most every `every` seconds of `clock`."""

    def __init__(self, project: Project, clock: Callable[[], float], every: float = 1.0):
        self.path, self.clock, self.every = progress_path(project), clock, every
        self.last: float | None = None

    def update(self, progress: Progress) -> None:
        """Take one progress report (a local model's stream: tokens written so far)."""
        now = self.clock()
        if self.last is not None and now - self.last < self.every:
            return
        self.last = now
        rate = progress.tokens / progress.generating if progress.generating > 0 else 0.0
        atomic_write(self.path, json.dumps({
            "stage": progress.stage, "seconds": round(progress.seconds, 1),
            "tokens": progress.tokens, "tok_s": round(rate, 1),
            "prompt_done": progress.prompt_done, "prompt_total": progress.prompt_total}) + "\n")


def read_progress(project: Project) -> dict[str, Any] | None:
    """The last progress a running daemon's model reported, if any (None if unreadable)."""
    try:
        data = json.loads(read_bytes(progress_path(project)).decode("utf-8"))
    except (OSError, ValueError, FileFormatError):
        return None
    return data if isinstance(data, dict) else None


def progress_line(data: dict[str, Any]) -> str:
    """One line of a streamed call's progress: `writer 12.3s  210 tokens  14.1 tok/s`."""
    line = f"{data.get('stage', '?')} {data.get('seconds', 0)}s"
    if data.get("tokens"):
        line += f"  {data['tokens']} tokens  {data.get('tok_s', 0)} tok/s"
    elif data.get("prompt_total"):
        line += f"  reading the prompt: {data.get('prompt_done', 0)} of {data['prompt_total']}"
    return line
