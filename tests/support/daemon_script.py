"""A Daemon on a fake clock with a scripted tick: `make(project, script)` gives the daemon,
its clock (FakeTime: only sleeps move it), the sessions it opened and the events it sent;
`result(n)` is what a tick that landed scene n returns."""

from __future__ import annotations

from types import SimpleNamespace

from novel_agent.daemon.loop import Daemon
from novel_agent.daemon.reload import Reloader
from novel_agent.daemon.signals import StopFlag
from novel_agent.daemon.watch import ChangeSet


class FakeTime:
    """A clock that only sleeps move."""

    def __init__(self):
        self.now, self.sleeps = 1000.0, []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


class FakeSession:
    opened = 0

    def __init__(self, config):
        self.config, self.closed = config, False

    def close(self):
        self.closed = True


def result(tick: int, words: int = 100):
    """A tick's result: scene `tick` of `words` words, its planner's tokens 10 in and 5 out."""
    return SimpleNamespace(tick=tick, title=f"Scene {tick}", words=words,
                           stages=[SimpleNamespace(stage="planner", prompt_tokens=10,
                                                   completion_tokens=5)])


def make(project, script=None, flags=None, **kwargs):
    """A Daemon whose ticks follow `script`: a list of results or exceptions (or callables
    given the daemon), then results forever."""
    time = FakeTime()
    script = list(script or [])
    sessions, events = [], []

    def open_session(project, config, env):
        sessions.append(FakeSession(config))
        return sessions[-1]

    def tick(session, on_stage=None):
        step = script.pop(0) if script else None
        if callable(step):
            step = step(daemon, on_stage)
        if isinstance(step, BaseException):
            raise step
        n = daemon.summary.ticks + 1
        return step or result(n)

    reloader = Reloader(project, {}, flags or {})
    daemon = Daemon(project, reloader, {}, StopFlag(), ChangeSet(clock=time.clock),
                    lambda p: "config" if p.name == "project.yaml" else None,
                    on_event=events.append, clock=time.clock, sleep=time.sleep,
                    open_session=open_session, tick=tick, **kwargs)
    return daemon, time, sessions, events
