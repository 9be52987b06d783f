"""`novel worker --temporal ADDRESS`: run books' ticks for a Temporal fleet."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

import click

from novel_agent import crashpoints
from novel_agent.cli.common import novel_errors
from novel_agent.errors import ConfigError, NovelError

NO_EXTRA = ("Temporal is the optional extra: pip install 'novel_agent[temporal]' "
            "(the single-machine `novel fleet run` needs none of it)")


def arm_test_crash(spec: str | None) -> None:
    """Test only: die by SIGKILL at the n-th time a tick reaches a point ("mid_commit:3";
    "mid_commit" is the first time), as the crash matrix does for `novel tick`."""
    point, _, nth = (spec or "").partition(":")
    if not point:
        return
    seen = [0]

    def crash() -> None:
        seen[0] += 1
        if seen[0] >= int(nth or 1):
            os.kill(os.getpid(), signal.SIGKILL)

    crashpoints.arm(point, crash)


def temporal_module():
    """fleet/temporal.py, or a one-line error saying how to install the extra."""
    try:
        from novel_agent.fleet import temporal
    except ImportError:
        raise ConfigError(NO_EXTRA) from None
    return temporal


def leave_after(address: str, work: Callable[[], int]) -> NoReturn:
    """Run `work` (it talks to Temporal), say its error in one line if it fails, and
    leave without the interpreter's teardown: the Temporal client's Rust threads can
    outlive the event loop and abort a finalizing interpreter (temporalio/sdk-python
    issue 300; CI saw `novel fleet run --temporal` print every book's ticks, then
    die of SIGABRT). Nothing is left to flush but stdout and stderr."""
    try:
        code = work()
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except NovelError as exc:
        click.echo(f"Error: {exc}", err=True)
        code = exc.exit_code
    except RuntimeError as exc:        # temporalio's "Failed client connect: ..."
        reason = ("no Temporal server answers there" if "Failed client connect" in str(exc)
                  else str(exc))
        click.echo(f"Error: Temporal at {address}: {reason}", err=True)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@click.command("worker")
@click.option("--temporal", "address", required=True, metavar="ADDRESS",
              help="The Temporal server (host:port).")
@click.option("--concurrency", type=click.IntRange(1, None), default=4, show_default=True,
              metavar="N", help="Ticks this worker runs at once (each of another book).")
@click.option("--task-queue", default="novel-ticks", show_default=True,
              help="The queue the fleet submits to.")
@novel_errors
def worker_cmd(address: str, concurrency: int, task_queue: str) -> None:
    """Run books' ticks for `novel fleet run --temporal` until Ctrl-C or SIGTERM (the
    ticks in flight finish first).

    Run one on every machine that sees the projects at the same path (a shared
    filesystem); a worker that dies mid-tick is replaced by another after the
    tick's heartbeat timeout, and the tick commits once.

    \b
    Example:
      novel worker --temporal temporal.example:7233 --concurrency 8
    """
    arm_test_crash(os.environ.get("NOVEL_TEST_CRASH_AT"))
    temporal = temporal_module()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        click.echo(f"worker on {address} (queue {task_queue}, {concurrency} at once)")
        await temporal.run_worker(address, concurrency, os.environ, task_queue=task_queue,
                                  stop=stop)

    def work() -> int:
        asyncio.run(main())
        return 0

    leave_after(address, work)
