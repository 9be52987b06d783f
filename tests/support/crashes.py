"""Commands killed at a crash point (NOVEL_TEST_CRASH_AT), and what must hold after:
`forked(project, args, point)` runs `novel ARGS -p project` in a forked child (the import
cost is paid once); `assert_sound(project, ticks)` checks the book a kill left."""

from __future__ import annotations

import os

from novel_agent.cli import cli
from novel_agent.story.scenes import scene_ticks
from tests.support.clirunner import invoke


def forked(project, args, point: str | None = None) -> int:
    """`novel ARGS -p project` in a forked child, killed at crash point `point` (None: run
    to the end); its exit status (-9 when killed)."""
    pid = os.fork()
    if pid == 0:   # the child: never returns to pytest
        code = 0
        try:
            if point:
                os.environ["NOVEL_TEST_CRASH_AT"] = point
            cli.main([*args, "-p", str(project.root)], standalone_mode=False)
        except BaseException:
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def forked_tick(project, point: str | None) -> int:
    """`novel tick -p <project>` in a forked child (see forked)."""
    return forked(project, ["tick"], point)


def assert_sound(project, ticks: int) -> None:
    """Contiguous scenes 1..ticks, each with its plan; the commands agree; doctor is clean."""
    status = invoke("status", "-p", str(project.root))    # recovers what a kill left
    assert status.exit_code == 0, status.output
    assert f"ticks       {ticks}  ({ticks} scenes" in status.stdout
    assert scene_ticks(project.scenes_dir) == list(range(1, ticks + 1))
    assert all(project.plan_path(t).is_file() for t in range(1, ticks + 1))
    listed = invoke("scenes", "list", "-p", str(project.root))
    assert listed.exit_code == 0 and listed.stdout.count("\n") >= ticks
    doctor = invoke("doctor", "-p", str(project.root))
    assert doctor.exit_code == 0, doctor.output
    txn = project.novel_dir / "txn"
    assert not txn.is_dir() or not list(txn.iterdir())
