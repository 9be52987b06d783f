"""`novel fleet run`: many books from one asyncio process.

Each book is a task on one event loop: it takes its project's lock (a book that
`novel run` or another fleet holds is left alone, "busy"), reconciles it as every
command does, opens its Session, then runs its ticks one after the other, each
`pipeline.tick` on a worker thread, so a book's ticks stay strictly in order and
commit exactly as `novel tick` does. Each book has a thread of its own (its SQLite
index is used from the thread that opened it); the threads mostly wait on the loop.
Requests of every book go out from the loop through one Gate (bridge.py): at most
`concurrency` in flight in all, one shared pause on a 429. The embedded local model serves every local book from one
llama.cpp server with a slot per request in flight (local.py). The offline model
makes no requests; its ticks only share the worker threads.

A book stops at its bound (`ticks`: until it has that many ticks, so a rerun after
a crash finishes the same job and doubles nothing; `until_words`), at a cost
ceiling (the fleet's spending this run, `book_max_cost` for each book's, and each
project's own llm.max_cost; checked before each tick, so the ticks in flight
finish), when its outline's last beat has landed (it is finished: done, not an
error), or when it fails `max_failures` ticks in a row: it is then parked with
the reason, and the others go on (tick/runner.py, as `novel tick` and `novel run`: a
tick whose answer could not be used runs once more at once, with a note; between
failed ticks a book rests `daemon.failure_backoff` doubling, at most 10 minutes). A
stop request (`request_stop`, SIGTERM in the CLI) starts no new tick; the ticks in
flight finish and commit. The run keeps the fleet's state file (view.py) current; it
prints nothing.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import novel_agent.tick.pipeline as pipeline
from novel_agent.clock import utc_now
from novel_agent.daemon.loop import book_words
from novel_agent.errors import (
    AuditHoldError,
    BookFinishedError,
    ConfigError,
    CostCeilingError,
    DamagedBookError,
    LockError,
    NovelError,
    ProjectError,
)
from novel_agent.fleet.bridge import Clients, retry_after
from novel_agent.fleet.gate import Gate
from novel_agent.fleet.local import SharedLocal
from novel_agent.fleet.view import OVER, BookState, FleetState, write_state
from novel_agent.history.hooks import reconcile
from novel_agent.models import get_model, provider_for
from novel_agent.reports.costs import cost_guard, estimate_next_tick, money, totals
from novel_agent.storage import explain
from novel_agent.story.project.folder import Project
from novel_agent.tick.runner import rest_after, run_tick
from novel_agent.tick.session import Session

WRITE_EVERY = 0.5        # seconds between two writes of the state file
LOCAL_SLOTS = 4          # the most slots the shared local server gets (each a context)


@dataclass
class FleetOptions:
    """The bounds of one fleet run (0: none)."""

    concurrency: int = 4          # requests in flight in all
    ticks: int = 0                # bring each book to this many ticks
    until_words: int = 0          # ... or to this many words
    max_cost: float = 0.0         # dollars the whole fleet may spend this run
    book_max_cost: float = 0.0    # dollars each book may spend this run
    max_failures: int = 3         # failed ticks in a row that park a book


@dataclass
class FleetEvent:
    """Something the fleet reports: a tick landed, a book failed, was parked, ..."""

    kind: str                     # tick, note, failure, parked, busy, ceiling, done, stopping
    book: str
    message: str
    data: Any = None              # the TickResult of a tick


class _Book:
    """A book's working set: its project, session, spending bounds and view row."""

    def __init__(self, project: Project, row: BookState):
        self.project, self.row = project, row
        self.session: Session | None = None
        self.guard: Callable[[], None] = lambda: None
        self.start_id = 0
        self.locked = False
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"book-{row.name}")

    @property
    def opened(self) -> Session:
        """The session `Fleet._open` opened (every step after it runs on it)."""
        assert self.session is not None, f"{self.row.name}: the session is not open"
        return self.session


class Fleet:
    """One fleet run over `projects` (see the module docstring)."""

    def __init__(self, projects: list[Project], options: FleetOptions,
                 env: Mapping[str, str], *, folder: Path,
                 flags: Mapping[str, Any] | None = None,
                 on_event: Callable[[FleetEvent], None] = lambda event: None,
                 on_view: Callable[[FleetState], None] = lambda state: None,
                 clock: Callable[[], float] = time.monotonic,
                 now: Callable[[], datetime] = utc_now,
                 open_session: Callable[..., Session] = Session.open,
                 tick: Callable[..., pipeline.TickResult] = pipeline.tick):
        self.options, self.env, self.folder = options, env, Path(folder)
        self.flags = dict(flags or {})
        self.on_event, self.on_view, self.clock, self.now = on_event, on_view, clock, now
        self.open_session, self.tick = open_session, tick
        self.books = [_Book(p, BookState(p.name, str(p.root))) for p in projects]
        self.state = FleetState(pid=os.getpid(), started=self._stamp(),
                                concurrency=options.concurrency,
                                books=[b.row for b in self.books])
        self.stopping = False
        self.gate: Gate | None = None
        self.local = SharedLocal(min(options.concurrency, LOCAL_SLOTS))  # local books' server
        self._wake: asyncio.Event | None = None
        self._started = 0.0
        self._written = float("-inf")
        self._publishing = threading.Lock()    # books publish from their own threads

    # -- the run -----------------------------------------------------------
    def run(self) -> FleetState:
        """Run the fleet to its end on a new event loop; the final state."""
        return asyncio.run(self.run_async())

    async def run_async(self) -> FleetState:
        """Run every book until its bound, a ceiling, parking or a stop request."""
        loop = asyncio.get_running_loop()
        self._started = self.clock()
        self._wake = asyncio.Event()
        self.gate = Gate(self.options.concurrency, retry_after, clock=self.clock)
        clients = Clients(loop, self.gate)
        self._publish(force=True)
        try:
            await asyncio.gather(*(self._run_book(b, loop, clients) for b in self.books))
        finally:
            for book in self.books:
                book.thread.shutdown(wait=True)
            await clients.close()
            self.local.close()
            self.state.state = "stopped" if self.stopping else "finished"
            self.state.ended = self._stamp()
            self._publish(force=True)
        return self.state

    def request_stop(self) -> None:
        """Start no new tick; the ticks in flight finish (call it on the fleet's loop)."""
        if self.stopping:
            return
        self.stopping = True
        self.state.state = "stopping"
        if self._wake is not None:
            self._wake.set()
        self.on_event(FleetEvent("stopping", "", "finishing the ticks in flight, then stopping"))
        self._publish(force=True)

    async def _run_book(self, book: _Book, loop: asyncio.AbstractEventLoop,
                        clients: Clients) -> None:
        opened = await loop.run_in_executor(book.thread, self._open, book, clients)
        try:
            while opened and not self._over(book):
                rest = await loop.run_in_executor(book.thread, self._tick, book)
                if rest:
                    await self._rest(book, rest)
        finally:
            await loop.run_in_executor(book.thread, self._close, book)

    # -- one book, on a worker thread ------------------------------------------
    def _open(self, book: _Book, clients: Clients) -> bool:
        """Lock, reconcile and open the book's session; False (and why) if it cannot run."""
        row, project = book.row, book.project
        try:
            project.acquire_lock()        # the lock, then the reconcile every command does
            book.locked = True
            reconcile(project)
            config = project.config(env=self.env, flags=self.flags)
            book.session = session = self.open_session(
                project, config, self.env,
                build_model=lambda mine: self._model_factory(mine, clients)(),
                now=self.now, clock=self.clock)
            book.start_id = session.live_index.last_usage_id() or 0
            book.guard = cost_guard(session, self.options.book_max_cost,
                                    run_start=book.start_id, run_label="--book-max-cost")
            if self.options.max_cost and (unpriced := session.unpriced()):
                raise ConfigError("--max-cost is set, but the price of "
                                  f"{unpriced[0]} is unknown (set llm.prices)",
                                  key="llm.prices")
        except LockError as exc:
            return self._end(book, "busy", str(exc))
        except (NovelError, OSError, sqlite3.Error) as exc:
            return self._end(book, "parked", f"could not open: {explain(exc)}")
        row.tick, row.words = project.tick(), book_words(project)
        return True

    def _model_factory(self, config: Any, clients: Clients) -> Callable[[], Any]:
        """A model of the book (a stage's, built from its config: llm.stages): on the
        fleet's one embedded server for a provider shared by server, through the fleet's
        client of its server for one shared by client."""
        provider = provider_for(config)
        if provider.shares == "server":
            return lambda: self.local.model(config, clients)
        if provider.shares != "client" or provider.server is None:
            return lambda: get_model(config, self.env)
        client = clients.for_server(provider.server(config),
                                    self.env.get(provider.key_env(config)) or None,
                                    config.llm.timeout, provider)
        return lambda: get_model(config, self.env, client=client)

    def _tick(self, book: _Book) -> float:
        """One tick of the book (bounds and ceilings checked first); seconds to rest
        before the next try after a failure, else 0."""
        row, session = book.row, book.opened
        if self._over(book) or not self._affordable(book):
            return 0.0
        row.state = "ticking"
        self._publish()
        started = self.clock()
        try:
            result = run_tick(lambda: self.tick(session), go_on=lambda: not self.stopping,
                              on_note=lambda note: self.on_event(
                                  FleetEvent("note", row.name, f"note: {note}")))
        except BookFinishedError as exc:      # its outline's end: done
            self._end(book, "done", exc.line)
            return 0.0
        except (AuditHoldError, DamagedBookError) as exc:     # the author's to settle: no retry
            row.tick = book.project.tick()
            self._end(book, "parked", f"waits for the author: {explain(exc)}")
            return 0.0
        except (NovelError, OSError, sqlite3.Error) as exc:
            row.tick = book.project.tick()     # a CommittedError's tick did land
            return self._failed(book, str(explain(exc)))
        self._landed(book, result, self.clock() - started)
        return 0.0

    def _affordable(self, book: _Book) -> bool:
        """Check the ceilings before a tick; end the book (False) at one."""
        try:
            book.guard()
        except CostCeilingError as exc:
            self._end(book, "ceiling", str(exc))
            return False
        ceiling = self.options.max_cost
        if not ceiling:
            return True
        estimate = estimate_next_tick(book.opened.live_index.usage_rows()) or 0.0
        if round(self.state.spent + estimate, 9) <= ceiling:
            return True
        self._end(book, "ceiling", f"fleet cost ceiling: {money(self.state.spent)} spent of "
                                   f"--max-cost {money(ceiling)}, and this book's next tick "
                                   f"would cost about {money(estimate)}: not started")
        return False

    def _landed(self, book: _Book, result: pipeline.TickResult, seconds: float) -> None:
        row = book.row
        tokens_in = sum(getattr(r, "prompt_tokens", 0) for r in result.stages)
        tokens_out = sum(getattr(r, "completion_tokens", 0) for r in result.stages)
        row.tick, row.words = result.tick, row.words + result.words
        row.ticks_run, row.words_run = row.ticks_run + 1, row.words_run + result.words
        row.prompt_tokens += tokens_in
        row.completion_tokens += tokens_out
        row.failures = 0
        if self.options.max_cost or self.options.book_max_cost:
            rows = book.opened.live_index.usage_rows()
            row.spent = totals(r for r in rows if r["id"] > book.start_id).known_cost
        self.on_event(FleetEvent("tick", row.name, f"tick {result.tick} \"{result.title}\"  "
                                 f"{result.words} words  {tokens_in:,} → {tokens_out:,} tokens"
                                 f"  {seconds:.1f}s", result))
        if getattr(result, "finished", ""):
            self._end(book, "done", result.finished)
            return
        self._publish()

    def _failed(self, book: _Book, error: str) -> float:
        row = book.row
        row.failures += 1
        row.last_error = error
        if row.failures >= self.options.max_failures:
            self._end(book, "parked", f"parked after {row.failures} failed ticks in a row "
                                      f"(the last: {error})")
            return 0.0
        rest = rest_after(row.failures, book.opened.config.daemon.failure_backoff)
        row.state = "resting"
        self.on_event(FleetEvent("failure", row.name, f"tick failed ({row.failures} of "
                                 f"{self.options.max_failures} in a row): {error}; next try "
                                 f"in {rest:.1f}s"))
        return rest

    def _close(self, book: _Book) -> None:
        """Close the session and release the lock (both, whatever fails)."""
        try:
            if book.session is not None:
                book.session.close()
        except (OSError, sqlite3.Error) as exc:
            book.row.last_error = f"closing: {explain(exc)}"
        finally:
            if book.locked:
                book.project.release_lock()
                book.locked = False
        if book.row.state not in OVER:
            self._end(book, "stopped" if self.stopping else "done", book.row.reason)

    # -- between ticks ---------------------------------------------------------
    def _over(self, book: _Book) -> bool:
        """Whether the book is finished (a bound, a stop request, or ended already)."""
        row, o = book.row, self.options
        if row.state in OVER:
            return True
        if self.stopping:
            return True
        if o.ticks and row.tick >= o.ticks:
            self._end(book, "done", f"has {row.tick} ticks")
            return True
        if o.until_words and row.words >= o.until_words:
            self._end(book, "done", f"has {row.words:,} words")
            return True
        return False

    async def _rest(self, book: _Book, seconds: float) -> None:
        """Wait `seconds` after a failure; a stop request ends the wait."""
        assert self._wake is not None     # run_async made it before any book ran
        try:
            await asyncio.wait_for(self._wake.wait(), timeout=seconds)
        except TimeoutError:
            pass

    def _end(self, book: _Book, state: str, reason: str) -> bool:
        book.row.state, book.row.reason = state, reason
        if state != "done" or reason:
            self.on_event(FleetEvent(state, book.row.name, f"{state}: {reason}" if reason
                                     else state))
        self._publish(force=True)
        return False

    # -- the state file --------------------------------------------------------
    def _publish(self, force: bool = False) -> None:
        """Bring the totals up to date and rewrite the state file (at most every
        WRITE_EVERY seconds unless forced)."""
        with self._publishing:
            now = self.clock()
            s = self.state
            s.seconds = round(now - self._started, 2)
            if self.gate is not None:
                g = self.gate.stats
                s.requests, s.in_flight, s.throttled, s.pauses = (g.requests, g.in_flight,
                                                                  g.throttled, g.pauses)
            s.eta = self._eta()
            if force or now - self._written >= WRITE_EVERY:
                self._written = now
                write_state(self.folder, s)
                self.on_view(s)

    def _eta(self) -> float | None:
        """Seconds to the bound at this run's pace (None: no bound, or no pace yet)."""
        o, done = self.options, self.state.ticks
        elapsed = self.clock() - self._started
        active = [b.row for b in self.books if b.row.state not in OVER]
        if not active or elapsed <= 0:
            return 0.0 if not active and (o.ticks or o.until_words) else None
        if o.ticks and done:
            return sum(max(0, o.ticks - r.tick) for r in active) / (done / elapsed)
        if o.until_words and self.state.words:
            left = sum(max(0, o.until_words - r.words) for r in active)
            return left / (self.state.words / elapsed)
        return None

    def _stamp(self) -> str:
        return self.now().isoformat(timespec="seconds")


def fleet_projects(folder: Path) -> list[Project]:
    """Every project under `folder` (a folder holding project.yaml), by name."""
    return [Project(p.parent) for p in sorted(Path(folder).glob("*/project.yaml"))]


def serve(fleet: Fleet) -> FleetState:
    """`novel fleet run`: refuse a second fleet on the same folder, route SIGINT and
    SIGTERM to `fleet.request_stop` (every one finishes the ticks in flight: a tick is
    never abandoned; kill -9 is what recovery is for), and run the fleet to its end."""
    from novel_agent.fleet.view import read_state, running, state_path

    previous = read_state(fleet.folder)
    if running(previous) and previous.pid != os.getpid():
        raise ProjectError(f"a fleet (pid {previous.pid}) is already running from "
                           f"{fleet.folder}; stop it with `novel fleet stop`",
                           path=str(state_path(fleet.folder)))

    async def main() -> FleetState:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, fleet.request_stop)
        try:
            return await fleet.run_async()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)

    return asyncio.run(main())
