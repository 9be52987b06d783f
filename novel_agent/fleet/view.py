"""What a fleet is doing: its state file, the live view, and `novel fleet status`.

A running fleet keeps `.novel-fleet.json` in the folder it runs from (the
projects folder, or `--all DIR`) current, rewritten atomically: its pid, when it
started, its state (running, stopping, stopped, finished), a row per book (tick,
words, state, failures, last error, spending) and the fleet's totals (requests,
429s and pauses, tokens, tokens/s, ETA). The live view and `novel fleet status`
are both `lines(state)`: a line per book, then the totals.

Book states: waiting (for a worker thread or the gate), ticking, resting (after a
failed tick, before the next try), done (reached its bound), parked (failed K
ticks in a row, or could not open; the reason says which), busy (another process
holds its lock), ceiling (a cost ceiling stopped it), stopped (a stop request).
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeGuard

from novel_agent.daemon.heartbeat import is_novel_process
from novel_agent.errors import ProjectError
from novel_agent.files import new_temp
from novel_agent.reports.costs import money

STATE_FILE = ".novel-fleet.json"
ENDED = ("stopped", "finished")
OVER = ("done", "parked", "busy", "ceiling", "stopped")    # a book that will tick no more


@dataclass
class BookState:
    """One book as the fleet sees it."""

    name: str
    root: str
    state: str = "waiting"
    tick: int = 0                 # the book's last committed tick
    words: int = 0                # the book's words
    ticks_run: int = 0            # ticks this fleet run committed
    words_run: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0             # failed ticks in a row
    last_error: str = ""
    reason: str = ""              # why it is done, parked, busy or stopped
    spent: float = 0.0            # dollars this run (known prices only)

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> BookState:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class FleetState:
    """The whole fleet: `.novel-fleet.json`."""

    pid: int
    started: str
    concurrency: int
    state: str = "running"
    ended: str = ""
    books: list[BookState] = field(default_factory=list)
    seconds: float = 0.0
    requests: int = 0
    in_flight: int = 0
    throttled: int = 0
    pauses: int = 0
    eta: float | None = None      # seconds to the bound, None when unknown or unbounded

    @property
    def ticks(self) -> int:
        return sum(b.ticks_run for b in self.books)

    @property
    def words(self) -> int:
        return sum(b.words_run for b in self.books)

    @property
    def completion_tokens(self) -> int:
        return sum(b.completion_tokens for b in self.books)

    @property
    def spent(self) -> float:
        return sum(b.spent for b in self.books)

    def tokens_per_second(self) -> float:
        """Answer tokens per second of this run."""
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> FleetState:
        known = {f.name for f in fields(cls)}
        state = cls(**{k: v for k, v in data.items() if k in known and k != "books"})
        state.books = [BookState.from_mapping(b) for b in data.get("books") or []
                       if isinstance(b, dict)]
        return state


def state_path(folder: Path) -> Path:
    return Path(folder) / STATE_FILE


def write_state(folder: Path, state: FleetState) -> None:
    """Rewrite the fleet's state file atomically, without fsync: it is a report, not the
    story (a crash may lose its last write, never tear it), rewritten as often as books
    change state, from the fleet's event loop too."""
    path = state_path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = new_temp(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(state), indent=1) + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_state(folder: Path) -> FleetState | None:
    """The last state a fleet wrote in `folder`, or None (none ran, or unreadable)."""
    try:
        data = json.loads(state_path(folder).read_text(encoding="utf-8"))
        return FleetState.from_mapping(data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError):
        return None


def running(state: FleetState | None) -> TypeGuard[FleetState]:
    """Whether the state file's fleet is still running."""
    return state is not None and state.state not in ENDED and is_novel_process(state.pid)


def stop_fleet(folder: Path, signum: int = signal.SIGTERM) -> int:
    """Ask the fleet running from `folder` to finish its ticks in flight and stop."""
    state = read_state(folder)
    if not running(state):
        raise ProjectError(f"no fleet is running from {folder} (no live pid in "
                           f"{state_path(folder)})", path=str(state_path(folder)))
    os.kill(state.pid, signum)
    return state.pid


def duration(seconds: float | None) -> str:
    """"1h 02m", "3m 05s", "42s"; "?" for None."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 60}m {s % 60:02d}s" if s >= 60 else f"{s}s"


def book_line(book: BookState, width: int) -> str:
    """One book: name, tick, words, state, and the last error or the reason."""
    note = book.reason if book.state in OVER and book.reason else book.last_error
    run = f"+{book.ticks_run}" if book.ticks_run else ""
    line = (f"{book.name:<{width}}  tick {book.tick:>4} {run:<4} {book.words:>8,} words  "
            f"{book.state:<8}")
    return f"{line}  {_short(note)}".rstrip() if note else line.rstrip()


def totals_line(state: FleetState) -> str:
    """The fleet: books by state, ticks, words, requests, tokens/s, spending and ETA."""
    counts: dict[str, int] = {}
    for book in state.books:
        counts[book.state] = counts.get(book.state, 0) + 1
    states = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    slowed = (f", {state.throttled} throttled ({state.pauses} pause"
              f"{'s' if state.pauses != 1 else ''})" if state.throttled else "")
    eta = f", ETA {duration(state.eta)}" if state.eta is not None else ""
    return (f"fleet  {len(state.books)} books ({states}): {state.ticks} ticks, "
            f"{state.words:,} words, {state.requests} requests ({state.in_flight} in flight "
            f"of {state.concurrency}){slowed}, {state.tokens_per_second():.1f} tokens/s, "
            f"{money(state.spent)}, {duration(state.seconds)}{eta}")


def lines(state: FleetState) -> list[str]:
    """The live view (and `novel fleet status`): a line per book, then the totals."""
    width = max([len(b.name) for b in state.books] + [4])
    return [book_line(b, width) for b in state.books] + [totals_line(state)]


def status_lines(state: FleetState | None, folder: Path) -> list[str]:
    """`novel fleet status`: whether a fleet runs from `folder`, then its view."""
    if state is None:
        return [f"no fleet has run from {folder} (start one with `novel fleet run --all "
                f"{folder}`)"]
    if running(state):
        head = f"fleet running (pid {state.pid}) since {state.started}: {state.state}"
    elif state.state in ENDED:
        head = f"fleet not running: the last run {state.state} at {state.ended or '?'}"
    else:
        head = (f"fleet not running: the last run (pid {state.pid}, since {state.started}) "
                "ended without a word, killed?")
    return [head, *lines(state)]


def _short(text: str, limit: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
