"""`novel serve`'s live page under pressure: starts that race, and a book rewound under
the feed (a tick taken away, or written again below the highest the page had seen)."""

from __future__ import annotations

import html
import http.client
import time
from concurrent.futures import ThreadPoolExecutor

from novel_agent.daemon.heartbeat import read_heartbeat, running
from novel_agent.story.scenes import load_scene
from tests.support.clirunner import invoke
from tests.support.ticking import run_ticks
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


def read_events(response, until) -> list[tuple[str, str]]:
    """Events of an SSE stream until `until(events)` holds, or the socket times out (then
    what came, for the assertion to show)."""
    events, kind, data = [], "", []
    while not until(events):
        try:
            line = response.fp.readline().decode().rstrip("\n")
        except OSError:             # timed out: nothing more came
            break
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif not line and kind:
            events.append((kind, "\n".join(data)))
            kind, data = "", []
    return events


def test_the_live_feed_follows_a_rewind_and_the_ticks_written_again(project, projects_dir):
    """Rewound from 5 to 3, the page's ticks 4 and 5 go; tick 4 written again comes,
    though the feed had seen 5."""
    run_ticks(project, 5)
    with serving(make_site(projects_dir)) as client:
        conn = http.client.HTTPConnection("127.0.0.1", client.port, timeout=10)
        conn.request("GET", "/p/harbour/events?tick=5&log=0",
                     headers={"Host": f"127.0.0.1:{client.port}"})
        response = conn.getresponse()
        assert read_events(response, lambda e: e)[0][0] == "daemon"
        assert invoke("rewind", "3", "-p", "harbour").exit_code == 0
        gone = read_events(response, lambda e: len(e) >= 2)
        run_ticks(project, 1)
        again = read_events(response, lambda e: e)
        conn.close()
    assert sorted(gone) == [("gone", "4"), ("gone", "5")]
    assert [kind for kind, _ in again] == ["tick"] and 'id="tick-4"' in again[0][1]
    assert load_scene(project.scene_path(4)).title in html.unescape(again[0][1])
