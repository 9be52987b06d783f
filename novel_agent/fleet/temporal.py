"""Temporal, for more than one machine (the optional extra `novel_agent[temporal]`).

One workflow per book, keyed by the project's folder (`novel-book:<path>`), whose
activities are ticks: `book_status` reads where the book is, then `tick_book` is
asked for tick n, n+1, ... up to the bound, or until the book is finished (its
outline's last beat has landed: `finished`, done and not a failure). Any worker (`novel worker --temporal
ADDRESS`) that sees the projects' folder can run them: the projects must be on a
filesystem every worker shares, at the same path (without one, a worker finds no
project at the path the workflow names, and the activity fails with that error).

Temporal runs an activity at least once, so the commit is idempotent by
(project, tick): `tick_book(root, n)` takes the project's lock, reconciles (an
interrupted commit is finished or dropped), then returns tick n as it landed when
the book already has it, runs it when the book is at n - 1, and fails, not to be
retried, when the book is elsewhere. A worker that dies mid-tick stops
heartbeating; after the heartbeat timeout Temporal gives the activity to another
worker, which finds the book before or after the tick, never between, and the tick
commits exactly once. The workflow code does no file or network access: it only
sequences activities, so it replays deterministically.

Everything here but the workflow's own definition imports the rest of novel_agent
lazily, so the workflow sandbox imports this module cheaply.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypedDict

from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError, TemporalError

if TYPE_CHECKING:
    from pathlib import Path

TASK_QUEUE = "novel-ticks"
HEARTBEAT_EVERY = 1.0      # seconds between an activity's heartbeats (while its tick runs)
SHUTDOWN_GRACE = 600.0     # seconds a stopping worker gives its ticks in flight to finish


@dataclass
class BookJob:
    """What a book's workflow is asked: bring the book at `root` to its bound."""

    root: str
    ticks: int = 0                 # bring it to this many ticks (0: no tick bound)
    until_words: int = 0           # ... or to this many words
    heartbeat_timeout: float = 60.0
    max_attempts: int = 5          # tries of one tick before the workflow fails (parked)


@dataclass
class TickAsk:
    root: str
    tick: int


@dataclass
class TickDone:
    """A tick as it landed (`again`: it had landed already, this try only read it)."""

    tick: int
    title: str
    words: int
    book_words: int
    again: bool = False
    finished: bool = False         # the book is finished (its outline's last beat landed)


@dataclass
class BookAt:
    tick: int
    words: int
    finished: bool = False


class _ActivityOptions(TypedDict):
    """How the workflow runs each of its activities."""

    start_to_close_timeout: timedelta
    heartbeat_timeout: timedelta
    retry_policy: RetryPolicy


def workflow_id(root: str) -> str:
    """The workflow of the book at `root` (one per book: a second submission joins it)."""
    digest = hashlib.sha1(root.encode("utf-8")).hexdigest()[:12]
    return f"novel-book:{root.rstrip('/').rsplit('/', 1)[-1]}:{digest}"


# -- the workflow (deterministic: no file, clock or network access) -----------------

@workflow.defn(name="NovelBook")
class BookWorkflow:
    """Bring one book to its bound, a tick activity at a time, in order."""

    @workflow.run
    async def run(self, job: BookJob) -> list[int]:
        options = _ActivityOptions(
            start_to_close_timeout=timedelta(hours=2),
            heartbeat_timeout=timedelta(seconds=job.heartbeat_timeout),
            retry_policy=RetryPolicy(maximum_attempts=job.max_attempts,
                                     initial_interval=timedelta(seconds=1),
                                     non_retryable_error_types=["BookMoved"]))
        at: BookAt = await workflow.execute_activity("book_status", job.root,
                                                     result_type=BookAt, **options)
        landed: list[int] = []
        tick, words, finished = at.tick, at.words, at.finished
        while not finished and _more(job, tick, words):
            done: TickDone = await workflow.execute_activity(
                "tick_book", TickAsk(job.root, tick + 1), result_type=TickDone, **options)
            if done.tick > tick:
                landed.append(done.tick)
            tick, words, finished = done.tick, done.book_words, done.finished
        return landed


def _more(job: BookJob, tick: int, words: int) -> bool:
    """Whether the book is short of its bound (a job without one asks for nothing)."""
    if job.ticks and tick >= job.ticks:
        return False
    if job.until_words and words >= job.until_words:
        return False
    return bool(job.ticks or job.until_words)


# -- the activities (run on workers: they read and write the project) ---------------

class Ticks:
    """A worker's activities, with the environment its ticks read (API keys, ...)."""

    def __init__(self, env: Mapping[str, str]):
        self.env = env

    @activity.defn(name="book_status")
    async def book_status(self, root: str) -> BookAt:
        """Where the book at `root` is: its last tick and its words."""
        return await asyncio.to_thread(_status, root)

    @activity.defn(name="tick_book")
    async def tick_book(self, ask: TickAsk) -> TickDone:
        """Tick `ask.tick` of the book, exactly once however often it is asked (see the
        module docstring); heartbeats while the tick runs on a thread."""
        task = asyncio.ensure_future(asyncio.to_thread(tick_once, ask.root, ask.tick,
                                                       self.env))
        while not task.done():
            activity.heartbeat(ask.tick)
            await asyncio.wait({task}, timeout=HEARTBEAT_EVERY)
        return task.result()


def _status(root: str) -> BookAt:
    from novel_agent.daemon.loop import book_words
    from novel_agent.history.hooks import opened
    from novel_agent.story.project.folder import Project

    project = Project(_existing(root))
    with opened(project):
        return BookAt(project.tick(), book_words(project), _finished(project))


def _finished(project: Any) -> bool:
    """Whether the book is finished: its outline's last beat has landed."""
    from novel_agent.story.outline.standing import read_standing

    at = read_standing(project, project.config(env={}).outline.curve)
    return at is not None and at.finished


def tick_once(root: str, tick: int, env: Mapping[str, str]) -> TickDone:
    """Tick `tick` of the book at `root`, idempotently: under the lock, after recovery,
    the landed tick is read back, the next one is run, any other is an error."""
    import novel_agent.tick.pipeline as pipeline
    from novel_agent.daemon.loop import book_words
    from novel_agent.errors import BookFinishedError, LockError, NovelError
    from novel_agent.files import read_front_matter
    from novel_agent.story.project.folder import Project
    from novel_agent.tick.session import Session

    project = Project(_existing(root))
    from novel_agent.history.hooks import reconcile

    try:
        project.acquire_lock()
    except LockError as exc:       # another worker still holds it: retried later
        raise ApplicationError(str(exc), type="BookBusy") from None
    try:
        reconcile(project)
        last = project.tick()
        if last >= tick:
            meta, _ = read_front_matter(project.scene_path(tick))
            return TickDone(tick, str(meta.get("title", "")), int(meta.get("words") or 0),
                            book_words(project), again=True)
        if last != tick - 1:
            raise ApplicationError(f"tick {tick} asked of {root}, but the book is at tick "
                                   f"{last}", type="BookMoved", non_retryable=True)
        try:
            with Session.open(project, project.config(env=env), env) as session:
                result = pipeline.tick(session)
        except BookFinishedError:        # done: the workflow asks for no more
            return TickDone(last, "", 0, book_words(project), again=True, finished=True)
        except NovelError as exc:
            raise ApplicationError(str(exc), type=type(exc).__name__) from None
        return TickDone(result.tick, result.title, result.words, book_words(project),
                        finished=bool(result.finished))
    finally:
        project.release_lock()


def _existing(root: str) -> Path:
    from pathlib import Path

    if not (Path(root) / "project.yaml").is_file():
        raise ApplicationError(f"no project at {root} on this worker (the workers need the "
                               "projects on a shared filesystem, at the same path)",
                               type="NoProject", non_retryable=True)
    return Path(root)


# -- the worker and the submitter ---------------------------------------------------

async def run_worker(address: str, concurrency: int, env: Mapping[str, str], *,
                     task_queue: str = TASK_QUEUE, namespace: str = "default",
                     stop: asyncio.Event | None = None) -> None:
    """`novel worker --temporal ADDRESS`: run books' ticks until `stop` is set; the
    ticks in flight then finish (up to SHUTDOWN_GRACE seconds) before it returns."""
    from temporalio.client import Client
    from temporalio.worker import Worker

    client = await Client.connect(address, namespace=namespace)
    ticks = Ticks(env)
    worker = Worker(client, task_queue=task_queue, workflows=[BookWorkflow],
                    activities=[ticks.book_status, ticks.tick_book],
                    max_concurrent_activities=concurrency,
                    graceful_shutdown_timeout=timedelta(seconds=SHUTDOWN_GRACE))
    async with worker:
        await (stop.wait() if stop is not None else asyncio.Event().wait())


async def submit(address: str, jobs: list[BookJob], *, task_queue: str = TASK_QUEUE,
                 namespace: str = "default", wait: bool = True) -> dict[str, Any]:
    """`novel fleet run --temporal ADDRESS`: start (or join) each book's workflow; with
    `wait`, the ticks each one landed (or its error), by project folder."""
    from temporalio.client import Client
    from temporalio.common import WorkflowIDConflictPolicy

    client = await Client.connect(address, namespace=namespace)
    handles = [await client.start_workflow(
        BookWorkflow.run, job, id=workflow_id(job.root), task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING) for job in jobs]
    if not wait:
        return {job.root: handle.id for job, handle in zip(jobs, handles)}
    results = await asyncio.gather(*(h.result() for h in handles), return_exceptions=True)
    return {job.root: (r if not isinstance(r, BaseException) else _reason(r))
            for job, r in zip(jobs, results)}


def _reason(exc: BaseException) -> str:
    cause = exc
    while isinstance(cause, TemporalError) and cause.cause is not None:
        cause = cause.cause
    return str(cause) or type(cause).__name__
