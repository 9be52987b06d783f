"""`novel serve`'s live page under pressure: starts that race, and a book rewound under
the feed (a tick taken away, or written again below the highest the page had seen)."""

from __future__ import annotations

import html
import time
from concurrent.futures import ThreadPoolExecutor

from novel_agent.daemon.heartbeat import read_heartbeat, running
from tests.support.web_server import make_site, serving

SECRET = "test-secret"


def wait(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_starts_that_race_run_one_daemon_and_the_others_are_told_it_runs(project,
                                                                        projects_dir):
    """Three starts at once: one runs; the two others are told a daemon runs (its pid),
    not the winner's output as their own error."""
    with serving(make_site(projects_dir)) as client:
        def start(_):
            return client.post("/p/harbour/daemon/start", {"ticks": "2", "csrf": SECRET},
                               headers={"HX-Request": "true"})

        with ThreadPoolExecutor(3) as pool:
            answers = list(pool.map(start, range(3)))
        wait(lambda: not running(read_heartbeat(project)) and project.tick() == 2)
    texts = sorted((a.status, html.unescape(a.text)) for a in answers)
    assert [status for status, _ in texts] == [200, 400, 400], texts
    pid = read_heartbeat(project).pid
    assert f"started novel run (pid {pid})" in texts[0][1]
    for _, text in texts[1:]:
        assert f"a daemon is already running on 'harbour' (pid {pid})" in text, text
    assert project.tick() == 2
