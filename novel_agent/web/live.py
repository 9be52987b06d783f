"""The daemon from a page: start `novel run`, stop it, watch it as Server-Sent Events.

Starting runs the same `novel run -v` a terminal would, in its own session (it
outlives the server, and a server restart finds it by its heartbeat), with its
output in `.novel/log/serve_run.out`. It takes the project lock like any run, so
it never ticks beside another. Stopping sends `novel stop`'s signal (SIGTERM to
the pid in `.novel/daemon.json`, once it is seen to be a `novel run`): the tick
in flight finishes and commits first.

The live feed looks at the files every `Site.poll` seconds and sends what
changed: the daemon's state (heartbeat), each scene that landed or was written
again (a rewound tick written anew, an edit), each scene a rewind took away, and
each new line of `.novel/log/daemon.log` (stage lines, ticks, reloads, failures).
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from novel_agent.daemon.heartbeat import progress_line, read_heartbeat, read_progress, running, stop_daemon
from novel_agent.daemon.log import daemon_log_path
from novel_agent.errors import FileFormatError, ProjectError
from novel_agent.files import read_bytes, refuse_outside_link
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, scene_ticks
from novel_agent.web.pages import SceneProblem, daemon_view, readable_scenes
from novel_agent.web.site import Site

POLL = 0.05           # seconds between looks at a run just started ...
START_POLLS = 200     # ... until its heartbeat names it, it ends, or 10 s have gone by
LOG_TAIL = 40         # daemon.log lines the live page shows when it opens


def run_output(project: Project) -> Path:
    return project.log_dir / "serve_run.out"


@dataclass
class Started:
    """A `novel run` the page started: its pid, and its exit code if it ended at once."""

    pid: int
    exit_code: int | None = None


class Daemons:
    """The `novel run` processes this server started (reaped when they end)."""

    def __init__(self, site: Site):
        self.site = site
        self.children: dict[str, subprocess.Popen] = {}
        self.starting: dict[str, threading.Lock] = {}     # project name -> its start

    def start(self, project: Project, ticks: int = 0, interval: float | None = None) -> Started:
        """Start `novel run -v` on `project` in the background and wait until it holds the
        project (its heartbeat names it); ProjectError if one runs already, or if it stops
        at once with an error (its last line says why: a busy project, a bad config).

        Starts of one project take turns: starts at once would each run one, the losers
        ending on the project's lock, and each would then read its error from the one
        output file where the winner's lines are too."""
        with self.starting.setdefault(project.name, threading.Lock()):
            return self._start(project, ticks, interval)

    def _start(self, project: Project, ticks: int, interval: float | None) -> Started:
        self.reap()
        beat = read_heartbeat(project)
        if running(beat) or project.name in self.children:
            raise ProjectError(f"a daemon is already running on '{project.name}'"
                               + (f" (pid {beat.pid})" if beat and running(beat) else ""),
                               path=str(project.root))
        args = [*self.site.novel_command, "run", "-p", str(project.root), "-v"]
        args += ["--ticks", str(ticks)] if ticks else []
        args += ["--interval", f"{interval:g}"] if interval is not None else []
        project.log_dir.mkdir(parents=True, exist_ok=True)
        with open(run_output(project), "ab") as out:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=dict(self.site.env),
                                    cwd=project.root, start_new_session=True)
        for _ in range(START_POLLS):
            try:
                code = proc.wait(timeout=POLL)
            except subprocess.TimeoutExpired:
                beat = read_heartbeat(project)
                if beat is not None and beat.pid == proc.pid:    # it holds the project
                    break
                continue
            if code:
                raise ProjectError(f"novel run stopped at once (exit {code}): "
                                   f"{last_line(run_output(project))}", path=str(project.root))
            return Started(proc.pid, code)
        self.children[project.name] = proc
        return Started(proc.pid)

    def stop(self, project: Project) -> int:
        """Ask the project's daemon to stop after its tick (as `novel stop`); its pid."""
        pid = stop_daemon(project)
        self.reap()
        return pid

    def reap(self) -> None:
        """Forget (and reap) the children that have ended."""
        for name, proc in list(self.children.items()):
            if proc.poll() is not None:
                del self.children[name]


def last_line(path: Path) -> str:
    """The last non-empty line of a text file ("" if none)."""
    try:
        lines = read_bytes(path).decode("utf-8", errors="replace").strip().splitlines()
    except (OSError, FileFormatError):
        return ""
    return lines[-1].removeprefix("Error: ") if lines else ""


# -- the log ----------------------------------------------------------------------
@dataclass(frozen=True)
class LogLine:
    """One line of daemon.log: when, how loud, what."""

    time: str
    level: str
    message: str

    @property
    def failure(self) -> bool:
        return self.level in ("WARNING", "ERROR", "CRITICAL")


def parse_log_line(line: str) -> LogLine:
    """`2026-11-25 07:45:54,123 INFO    tick 3 ...` as a LogLine."""
    parts = line.split(None, 3)
    if len(parts) >= 3 and parts[2] in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        return LogLine(parts[1].split(",")[0], parts[2], parts[3] if len(parts) > 3 else "")
    return LogLine("", "INFO", line)


def read_log(project: Project, offset: int) -> tuple[list[LogLine], int]:
    """daemon.log's whole lines from byte `offset` on, and the offset after them (a log
    that was rotated since is read from its start)."""
    path = daemon_log_path(project)
    try:
        size = path.stat().st_size
        if size < offset:
            offset = 0
        refuse_outside_link(path)
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except (OSError, FileFormatError):
        return [], 0
    whole = data[:data.rfind(b"\n") + 1]
    text = whole.decode("utf-8", errors="replace")
    return [parse_log_line(l) for l in text.splitlines() if l.strip()], offset + len(whole)


def log_tail(project: Project, lines: int = LOG_TAIL) -> tuple[list[LogLine], int]:
    """The last `lines` lines of daemon.log, and its size (where a feed goes on from)."""
    path = daemon_log_path(project)
    try:
        size = path.stat().st_size
    except OSError:
        return [], 0
    start = max(0, size - 200 * lines)
    found, end = read_log(project, start)
    return found[-lines:] if start == 0 else found[1:][-lines:], end


# -- the feed ---------------------------------------------------------------------------
def sse(event: str, data: str) -> str:
    """One Server-Sent Event (every line of `data` its own `data:` field)."""
    return f"event: {event}\n" + "".join(f"data: {l}\n" for l in data.splitlines() or [""]) + "\n"


def scene_marks(project: Project) -> dict[int, tuple[int, int, int]]:
    """Each scene on disk: tick -> its file's (inode, mtime, size), which a scene written
    again (a rewind, then the tick again; an edit) changes."""
    marks = {}
    for tick in scene_ticks(project.scenes_dir):
        try:
            st = project.scene_path(tick).stat()
        except OSError:           # gone since the listing: the next look says so
            continue
        marks[tick] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return marks


async def feed(project: Project, *, since_tick: int, log_offset: int, poll: float,
               render_tick: Callable[[Scene | SceneProblem], str],
               render_log: Callable[[LogLine], str],
               render_state: Callable[[bool, str, str], str],
               stopping: Callable[[], bool] = lambda: False,
               render_progress: Callable[[str], str] = str) -> AsyncIterator[str]:
    """The live feed of one page: the daemon's state (and last error) when it changes;
    each scene after `since_tick` as it lands, and each scene written again (a tick
    rewound and written anew, below the highest seen, or an edit) as a `tick`; each
    scene taken away (a rewind) as `gone` with its tick; each new daemon.log line after
    `log_offset`; until the client goes away or the server stops (`stopping()`; the page
    then reconnects to the next one)."""
    shown, streaming = None, ""
    known = {t: m for t, m in scene_marks(project).items() if t <= since_tick}  # on the page
    yield "retry: 1000\n\n"
    while not stopping():
        state = daemon_view(read_heartbeat(project))
        if state != shown:
            shown = state
            yield sse("daemon", render_state(*state))
        data = read_progress(project) if state[0] else None   # a local model's stream
        line = progress_line(data) if data else ""
        if line != streaming:
            streaming = line
            yield sse("progress", render_progress(line))
        marks = scene_marks(project)
        for tick in sorted(set(known) - set(marks)):
            yield sse("gone", str(tick))
        for tick in sorted(t for t, mark in marks.items() if known.get(t) != mark):
            scenes, problems = readable_scenes(project, [tick])
            for scene in scenes:
                yield sse("tick", render_tick(scene))
            for problem in problems:
                yield sse("tick", render_tick(problem))
        known = marks
        lines, log_offset = read_log(project, log_offset)
        for logged in lines:
            yield sse("log", render_log(logged))
        await asyncio.sleep(poll)
