"""The daemon: `novel run`'s loop, over an injectable clock, sleep and signal state.

One turn: take the edits the watcher saw (settled), stop if a bound is reached,
a signal came or a `before_tick` hook says so, run one tick, then wait the
interval (or the backoff after a failure). The loop prints nothing; it reports
`Event`s and keeps `.novel/daemon.json` (heartbeat.py) current.

Signals (`StopFlag`): the first SIGINT/SIGTERM lets the tick in flight finish and
commit, then the run ends with exit 0. A second one while the tick is still asking
the model (before its commit) abandons the tick there and then, nothing of it
committed; during the commit and the summaries after it, the tick is finished first.
Failures (tick/runner.py, as `novel tick` and `novel fleet`): a tick whose answer
could not be used runs once more at once, with a note; a model or stage failure is
retried after `max(interval, failure_backoff × 2^(n-1))` seconds (at most 10
minutes); after `max_failures` in a row the run ends with exit 3. A tick that cannot
start because a file the user edits is broken (a ConfigError or FileFormatError
naming it) is not a failure of the daemon: it waits for the file to change, retrying
now and then. A tick held by the continuity audit (`audit.mode: hold`,
AuditHoldError) ends the run with exit 5, for the author. A book that is not whole
(DamagedBookError: a scene missing mid-book or damaged, a plan past the last scene)
ends it with exit 1 and the error: `novel doctor --fix` needs the project's lock,
which the run holds. A book whose outline's last beat has landed is finished: the
run stops and says so ("the book is finished: …"), exit 0, whether the last beat
landed in this run or before it (BookFinishedError).

`before_tick` hooks (a cost guard, say) are called before every tick with the
Daemon; one that returns a reason ends the run with it, exit 0; one that raises a
NovelError ends it with the error as the reason and its exit code (4 for a cost
ceiling, costs.ceiling_hook).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from novel_agent.clock import utc_now
from novel_agent.daemon.heartbeat import Heartbeat, write_heartbeat
from novel_agent.daemon.reload import Reloader
from novel_agent.daemon.signals import Interrupted, StopFlag, install_signals, signal_name
from novel_agent.daemon.watch import ChangeSet
from novel_agent.errors import AuditHoldError, BookFinishedError, DamagedBookError, NovelError
from novel_agent.models.base import OnProgress
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import scene_ticks, scene_words
from novel_agent.tick import pipeline
from novel_agent.tick.events import StageEvent
from novel_agent.tick.runner import rest_after, run_tick
from novel_agent.tick.session import Session

EXIT_GAVE_UP = 3          # `novel run`'s exit code after max_failures failed ticks in a row
WAIT_STEP = 0.25      # how often a daemon waiting for a fix looks for an edit


@dataclass
class Event:
    """Something the run reports: a line, how loud, and what it is about."""

    kind: str                   # tick, stage, note, failure, waiting, reload, stopping
    message: str
    level: int = logging.INFO
    data: Any = None            # the TickResult of a tick, the StageEvent of a stage


@dataclass
class RunSummary:
    """How a run went, for its last line and its exit code."""

    ticks: int = 0
    words: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    book_words: int = 0
    failures: int = 0           # failed ticks in a row
    reason: str = ""
    exit_code: int = 0
    last_error: str = ""

    def line(self) -> str:
        return (f"{self.reason}. {self.ticks} tick{'s' if self.ticks != 1 else ''}, "
                f"{self.words:,} words, {self.prompt_tokens:,} → {self.completion_tokens:,} "
                f"tokens in {self.seconds:.1f}s (the book: {self.book_words:,} words)")


BeforeTick = Callable[["Daemon"], "str | None"]


def book_words(project: Project) -> int:
    """Words in the book's scenes as their files hold them now (one that cannot be read
    counts none: the first tick stops on it, naming it and `novel doctor --fix`)."""
    return sum(_words(project.scene_path(t)) for t in scene_ticks(project.scenes_dir))


def _words(path: Path) -> int:
    try:
        return scene_words(path)
    except (NovelError, OSError):
        return 0


@dataclass
class Daemon:
    """One `novel run` on one project (the caller holds its lock)."""

    project: Project
    reloader: Reloader
    env: Mapping[str, str]
    stop: StopFlag
    changes: ChangeSet
    kind_of: Callable[[Path], str | None]
    on_event: Callable[[Event], None] = lambda event: None
    clock: Callable[[], float] = time.monotonic
    now: Callable[[], datetime] = utc_now
    sleep: Callable[[float], None] | None = None          # default: stop.sleep
    open_session: Callable[..., Session] = Session.open
    tick: Callable[..., pipeline.TickResult] = pipeline.tick
    before_tick: list[BeforeTick] = field(default_factory=list)
    retarget: Callable[[Path], None] | None = None       # watch another preset file
    summary: RunSummary = field(default_factory=RunSummary)
    session: Session | None = None

    def __post_init__(self) -> None:
        self.beat = Heartbeat(pid=os.getpid(), started=self._stamp())
        self._started = self.clock()
        self._blocked = 0       # ticks in a row that could not start for a broken file
        self._error_about = ""  # what the last error is about: "tick", "config" or a path
        self._finished = ""     # "the book is finished: …" once its last beat has landed

    @property
    def config(self):
        return self.reloader.config

    # -- the run -----------------------------------------------------------
    def run(self) -> RunSummary:
        """Tick until a bound, a signal, a hook or too many failures; say why."""
        self._started = started = self.clock()
        self.summary.book_words = book_words(self.project)
        self._beat("starting")
        try:
            self.session = self.open_session(self.project, self.config, self.env)
            while self._turn():
                pass
        finally:
            if self.session is not None:
                self.session.close()
            self.summary.seconds = self.clock() - started
            self.beat.ended = self._stamp()
            self._beat("failed" if self.summary.exit_code == EXIT_GAVE_UP else "stopped")
        return self.summary

    def _turn(self) -> bool:
        """One turn of the loop; False when the run is over."""
        self._take_edits()
        if self._reason(before=True):
            return False
        delay, waiting = self._tick()
        if self.summary.exit_code or self._reason(before=False):
            return False
        self._wait(delay, waiting)
        return True

    def _reason(self, *, before: bool) -> str:
        """Why the run should end now ("" to go on); kept in the summary."""
        d, s = self.config.daemon, self.summary
        reason = ""
        if self.stop.level:
            reason = f"stopped by {signal_name(self.stop.signum)}"
        elif self._finished:
            reason = self._finished
        elif d.max_ticks and s.ticks >= d.max_ticks:
            reason = f"finished the {d.max_ticks} tick{'s' if d.max_ticks != 1 else ''} asked"
        elif d.stop_at_words and s.book_words >= d.stop_at_words:
            reason = f"the book reached {d.stop_at_words:,} words"
        elif before:
            try:
                reason = next((r for r in (hook(self) for hook in self.before_tick) if r), "")
            except NovelError as exc:       # a hook that ends the run with its own code
                reason, s.exit_code = str(exc), exc.exit_code
        if reason and not s.reason:
            s.reason = reason
            if self.stop.level:
                self._beat("stopping")
        return reason

    # -- one tick ----------------------------------------------------------
    def _tick(self) -> tuple[float, bool]:
        """Run one tick; (seconds to wait before the next, waiting for a fix?)."""
        self._beat("ticking")
        started = self.clock()
        self.stop.interruptible = True
        try:
            result = run_tick(self._tick_once, on_note=self._note,
                              go_on=lambda: not self.stop.level)
        except Interrupted as exc:
            self.summary.exit_code = 128 + exc.signum
            self.summary.reason = (f"stopped by a second {signal_name(exc.signum)}: the tick in "
                                   "flight was abandoned, nothing of it committed")
            return 0.0, False
        except BookFinishedError as exc:  # the outline's end: done, not a failure
            self._finished = str(exc)     # (and how to go on)
            return 0.0, False
        except AuditHoldError as exc:     # audit.mode hold: the author decides, not a retry
            self.summary.exit_code, self.summary.reason = exc.exit_code, str(exc)
            self.on_event(Event("held", str(exc), logging.WARNING, exc))
            return 0.0, False
        except DamagedBookError as exc:   # no retry mends it, and the fix needs the lock
            self.summary.exit_code, self.summary.reason = exc.exit_code, str(exc)
            self.summary.last_error = str(exc)
            self._error(str(exc), "tick")
            self.on_event(Event("failure", str(exc), logging.ERROR, exc))
            return 0.0, False
        except NovelError as exc:
            return self._failed(exc)
        finally:
            self.stop.interruptible = False
        self._done(result, self.clock() - started)
        return self.config.daemon.interval, False

    def _tick_once(self) -> pipeline.TickResult:
        self.stop.interruptible = True      # (again, when the tick runs once more)
        return self.tick(self.session, on_stage=self._on_stage)

    def _note(self, note: str) -> None:
        self.on_event(Event("note", f"note: {note}", logging.WARNING))

    def _on_stage(self, event: StageEvent) -> None:
        if event.commit_next:
            self.stop.interruptible = False     # the commit comes next: let it land
        self.on_event(Event("stage", event.stage, logging.DEBUG, event))

    def _done(self, result: pipeline.TickResult, seconds: float) -> None:
        s = self.summary
        tokens_in = sum(e.prompt_tokens for e in result.stages)
        tokens_out = sum(e.completion_tokens for e in result.stages)
        s.ticks, s.words, s.book_words = s.ticks + 1, s.words + result.words, \
            s.book_words + result.words
        s.prompt_tokens += tokens_in
        s.completion_tokens += tokens_out
        s.failures, self._blocked = 0, 0
        self.beat.last_tick, self.beat.failures = self._stamp(), 0
        self._fixed("tick", result.tick)
        self._finished = getattr(result, "finished", "")
        self.on_event(Event("tick", f"tick {result.tick} \"{result.title}\"  {result.words} words"
                            f"  {tokens_in:,} → {tokens_out:,} tokens  {seconds:.1f}s  (this run: "
                            f"{s.ticks} tick{'s' if s.ticks != 1 else ''}, {s.words:,} words)", data=result))
        for finding in getattr(result, "findings", []):     # the continuity audit's, audit.mode report
            self.on_event(Event("audit", f"  audit: {finding.line()}", logging.INFO, finding))

    def _failed(self, exc: NovelError) -> tuple[float, bool]:
        s, d = self.summary, self.config.daemon
        s.last_error = str(exc)
        self._error(str(exc), "tick")
        if isinstance(getattr(exc, "file", None), str):
            self._blocked += 1
            delay = rest_after(self._blocked, d.failure_backoff, d.interval)
            self.on_event(Event("waiting", f"the next tick cannot start: {exc}; waiting for "
                                "the file to be fixed", logging.WARNING))
            return delay, True
        s.failures += 1
        self.beat.failures = s.failures
        if s.failures >= d.max_failures:
            s.exit_code = EXIT_GAVE_UP
            s.reason = f"gave up after {s.failures} failed ticks in a row (the last: {exc})"
            self.on_event(Event("failure", s.reason, logging.ERROR))
            return 0.0, False
        delay = rest_after(s.failures, d.failure_backoff, d.interval)
        self.on_event(Event("failure", f"tick failed ({s.failures} of {d.max_failures} in a "
                            f"row): {exc}; retrying in {delay:.1f}s", logging.WARNING))
        return delay, False

    # -- between ticks -----------------------------------------------------
    def _wait(self, seconds: float, waiting: bool) -> None:
        """Sleep `seconds` (a stop request ends it; while waiting for a fix, so does an edit)."""
        if seconds <= 0:
            return
        self._beat("waiting" if waiting else "sleeping")
        deadline = self.clock() + seconds
        while not self.stop.level and self.clock() < deadline:
            if waiting and self.changes.pending():
                return
            left = deadline - self.clock()
            self._pause(min(WAIT_STEP, left) if waiting else left)

    def _pause(self, seconds: float) -> None:
        """Sleep `seconds` by `sleep`, else by the stop flag (a stop request wakes it)."""
        (self.sleep or self.stop.sleep)(seconds)

    def _take_edits(self) -> None:
        """Apply the edits that have settled; rebuild the session when the model may differ."""
        paths, left = self.changes.take()
        if left > 0:
            self._pause(left)
            paths, _ = self.changes.take()
        if not paths:
            return
        kinds = {p: self.kind_of(p) or "" for p in paths}
        for reload in self.reloader.apply(paths, kinds):
            level = logging.WARNING if reload.error else logging.INFO
            self.on_event(Event("reload", reload.message, level))
            if reload.error:
                self._error(reload.message, reload.about)
            else:
                self._fixed(reload.about, self.project.tick() + 1)
            if reload.rebuild:
                self._rebuild()
        if self.retarget is not None:
            try:
                self.retarget(self.reloader.preset_file())
            except NovelError:
                pass

    def _rebuild(self) -> None:
        """A new session for the configuration in force (a new model, limits, budgets)."""
        try:
            fresh = self.open_session(self.project, self.config, self.env)
        except NovelError as exc:
            self.on_event(Event("reload", f"the model could not be rebuilt: {exc}; the previous "
                                "one stays", logging.WARNING))
            return
        if self.session is not None:
            self.session.close()
        self.session = fresh

    # -- the last error ----------------------------------------------------
    def _error(self, message: str, about: str) -> None:
        """Keep `message` as the last error, about "tick", "config" or a file's path."""
        b = self.beat
        b.last_error, b.error_at, b.fixed_tick = message, self._stamp(), 0
        b.error_tick = self.project.tick() + 1
        self._error_about = about

    def _fixed(self, about: str, tick: int) -> None:
        """Mark the last error fixed from `tick` on when what it was about now works."""
        if self.beat.last_error and not self.beat.fixed_tick and about == self._error_about:
            self.beat.fixed_tick = tick

    def _stamp(self) -> str:
        return self.now().isoformat(timespec="seconds")

    def _beat(self, state: str) -> None:
        b, s = self.beat, self.summary
        b.state, b.ticks, b.words = state, s.ticks, s.words
        b.interval = self.config.daemon.interval
        b.pace = round((self.clock() - self._started) / s.ticks, 2) if s.ticks else 0.0
        write_heartbeat(self.project, b)


def serve(project: Project, reloader: Reloader, env: Mapping[str, str], *, wait: float = 0.0,
          on_event: Callable[[Event], None] = lambda event: None,
          notify: Callable[[int, int], None] | None = None,
          before_tick: list[BeforeTick] | None = None,
          on_progress: OnProgress | None = None) -> RunSummary:
    """`novel run`: hold the project's lock (waiting up to `wait` s), watch its files,
    take SIGINT/SIGTERM, and run the loop until it ends. A streaming (local) model tells
    `on_progress` how each call is going."""
    from novel_agent.daemon.watch import Watched, Watcher

    with project.locked(wait):
        stop, changes = StopFlag(), ChangeSet()
        watched = Watched(project, reloader.preset_file(), reloader.models_file())
        restore = install_signals(stop, notify)
        try:
            with Watcher(watched, changes) as watcher:
                daemon = Daemon(project, reloader, env, stop, changes, watched.kind,
                                on_event=on_event, before_tick=list(before_tick or []),
                                retarget=watcher.retarget,
                                open_session=partial(Session.open, on_progress=on_progress))
                return daemon.run()
        finally:
            restore()
