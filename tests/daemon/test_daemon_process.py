"""`novel run` as a real process with real signals: bounds, SIGTERM, edits taken live,
one ticker per project, `novel stop`, and giving up after K failures."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import yaml

from novel_agent.files import read_front_matter
from novel_agent.story.project.folder import create_project
from novel_agent.tick.prompt_log import log_path
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.processes import novel, until  # noqa: F401 - novel is a fixture


def scenes(project) -> list[int]:
    return sorted(int(p.stem.split("_")[1]) for p in project.scenes_dir.glob("scene_*.md"))


def log_lines(project) -> list[str]:
    path = project.log_dir / "daemon.log"
    return path.read_text().splitlines() if path.is_file() else []


def logged(project, text: str) -> int | None:
    """The index of the first daemon.log line holding `text`."""
    return next((i for i, line in enumerate(log_lines(project)) if text in line), None)


def first_tick_after(project, index: int) -> int:
    """The number of the first tick the daemon.log reports after line `index`."""
    for line in log_lines(project)[index + 1:]:
        if " tick " in line and "\"" in line:
            return int(line.split(" tick ")[1].split()[0])
    return 0


def report(project, tick: int, stage: str) -> dict:
    return json.loads(log_path(project, tick, stage).read_text())


def test_a_bounded_run_ends_by_itself(project, novel):
    code, out, err = novel.run("run", "-p", "harbour", "--ticks", "3", "--interval", "0")
    assert code == 0, err
    assert scenes(project) == [1, 2, 3]
    assert out.splitlines()[-1].startswith("finished the 3 ticks asked. 3 ticks, ")
    assert sum(1 for line in out.splitlines() if line.startswith("tick ")) == 3
    beat = json.loads((project.novel_dir / "daemon.json").read_text())
    assert (beat["state"], beat["ticks"]) == ("stopped", 3)


def test_sigterm_mid_run_ends_cleanly_with_every_tick_intact(project, novel):
    proc = novel("run", "-p", "harbour", "--interval", "0.1")
    until(lambda: len(scenes(project)) >= 2, what="two scenes")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "SIGTERM: finishing the tick in flight" in err
    done = scenes(project)
    assert done == list(range(1, len(done) + 1)) and project.tick() == len(done)
    for tick in done:
        assert read_front_matter(project.scene_path(tick))[0]["tick"] == tick
        assert project.plan_path(tick).is_file()
    assert not list(project.novel_dir.glob("txn/*")) and not list(project.drafts_dir.glob("*"))
    assert out.splitlines()[-1].startswith(f"stopped by SIGTERM. {len(done)} ticks")


def test_an_edit_of_project_yaml_changes_the_next_tick(project, novel):
    proc = novel("run", "-p", "harbour", "--interval", "0.2")
    until(lambda: log_path(project, 1, "writer").is_file(), what="tick 1")
    old = report(project, 1, "writer")["budget"]
    data = yaml.safe_load(project.project_file.read_text())
    data["context"] = {"max_prompt_tokens": 6000}
    project.project_file.write_text(yaml.safe_dump(data))
    at = until(lambda: logged(project, "reloaded project.yaml: context.max_prompt_tokens "
                                       "32000 → 6000"), what="the reload")
    tick = until(lambda: first_tick_after(project, at), what="a tick after the reload")
    new = report(project, tick, "writer")["budget"]
    assert report(project, tick - 1, "writer")["budget"] == old
    assert new < old and new == 6000 - 700 - 256   # window cap - writer output - margin
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


def test_an_invalid_edit_is_reported_and_the_daemon_goes_on(project, novel):
    proc = novel("run", "-p", "harbour", "--interval", "0.2")
    until(lambda: scenes(project), what="tick 1")
    good = project.project_file.read_text()
    project.project_file.write_text(good + "context:\n  max_prompt_tokens: lots\n")
    line = len(good.splitlines()) + 2
    at = until(lambda: logged(project, f"project.yaml:{line}: context.max_prompt_tokens must "
                                       "be int"), what="the report")
    assert "the configuration in force stays" in log_lines(project)[at]
    until(lambda: first_tick_after(project, at), what="a tick after the bad edit")
    project.project_file.write_text(good + "llm: [broken\n")        # the story cannot be read
    at = until(lambda: logged(project, "waiting for the file to be fixed"), what="waiting")
    project.project_file.write_text(good)
    until(lambda: first_tick_after(project, at), what="a tick after the fix")
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "not reloaded:" in out and "WARNING" in (project.log_dir / "daemon.log").read_text()


def test_a_steer_note_written_during_the_run_reaches_the_next_planner(project, novel):
    proc = novel("run", "-p", "harbour", "--interval", "0.2")
    until(lambda: scenes(project), what="tick 1")
    project.steer_file.write_text("Let the lighthouse go dark tonight. Nobody knows why.\n")
    at = until(lambda: logged(project, "steer.md: the author's note changed"), what="reload")
    tick = until(lambda: first_tick_after(project, at), what="a tick after the note")
    prompt = "\n".join(m["content"] for m in report(project, tick, "planner")["messages"])
    assert "Let the lighthouse go dark tonight." in prompt
    plan = yaml.safe_load(project.plan_path(tick).read_text())
    assert plan["intention"].endswith("as the author asks: Let the lighthouse go dark tonight.")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0


def test_one_ticker_per_project_and_a_killed_holder_never_blocks(project, novel):
    holder = novel("run", "-p", "harbour", "--interval", "0.3")
    until(lambda: scenes(project), what="the holder's first tick")
    code, out, err = novel.run("run", "-p", "harbour", "--ticks", "1")
    assert code == 1 and f"busy: process {holder.pid} has been ticking it since 20" in err
    started = time.monotonic()
    code, _, err = novel.run("tick", "-p", "harbour", "--wait", "0.5")
    assert code == 1 and "(waited 0.5s)" in err and time.monotonic() - started >= 0.5
    holder.kill()                                      # SIGKILL: no clean-up at all
    holder.wait(timeout=10)
    code, out, err = novel.run("status", "-p", "harbour")
    assert "ended without a word, killed?" in out
    code, out, err = novel.run("run", "-p", "harbour", "--ticks", "1")
    assert code == 0, err
    assert project.tick() == len(scenes(project))


def test_novel_stop_asks_the_daemon_to_stop(project, novel):
    proc = novel("run", "-p", "harbour", "--interval", "0.2")
    until(lambda: scenes(project), what="tick 1")
    code, out, _ = novel.run("status", "-p", "harbour")
    assert f"daemon      running (pid {proc.pid}) since " in out
    code, out, err = novel.run("stop", "-p", "harbour")
    assert code == 0 and f"asked novel run (pid {proc.pid})" in out
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    done = len(scenes(project))
    plural = "s" if done != 1 else ""
    assert out.splitlines()[-1].startswith(f"stopped by SIGTERM. {done} tick{plural}, ")
    beat = json.loads((project.novel_dir / "daemon.json").read_text())
    assert (beat["state"], beat["ticks"], beat["last_error"]) == ("stopped", done, "")
    code, out, _ = novel.run("status", "-p", "harbour")
    (line,) = [line for line in out.splitlines() if line.startswith("daemon")]
    assert line.startswith(f"daemon      not running: the last run stopped at {beat['ended']} "
                           f"after {done} tick{plural}, pace ")
    assert "last error" not in out
    code, _, err = novel.run("stop", "-p", "harbour")
    assert code == 1 and "no daemon is running on 'harbour'" in err


def test_novel_stop_signals_only_a_novel_process(project, novel):
    other = subprocess.Popen(["sleep", "30"])
    try:
        (project.novel_dir / "daemon.json").write_text(json.dumps(
            {"pid": other.pid, "started": "2025-01-01T00:00:00+00:00", "state": "sleeping"}))
        code, _, err = novel.run("stop", "-p", "harbour")
        assert code == 1 and "is not a novel process" in err
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_k_failures_in_a_row_exit_3_with_nothing_changed(projects_dir, novel, snapshot):
    with FakeOpenAIServer(fail_first=[500] * 1000) as server:
        project = create_project(projects_dir / "harbour", {"name": "harbour", "premise": "x"},
                                 config={"llm": {"provider": "openai", "base_url":
                                                 server.base_url, "max_retries": 0}})
        before = snapshot(project.root)
        code, out, err = novel.run("run", "-p", "harbour", "--max-failures", "3",
                                   "--interval", "0",
                                   extra_env={"NOVEL_DAEMON_FAILURE_BACKOFF": "0.05"})
        calls = len(server.requests)
    assert code == 3, err
    assert "gave up after 3 failed ticks in a row" in out
    assert calls == 3                                  # one planner call per tick
    after = snapshot(project.root)
    ours = {".novel/daemon.json", ".novel/log/daemon.log"}
    assert {k: v for k, v in after.items() if k not in ours} == before
    assert json.loads(after[".novel/daemon.json"])["state"] == "failed"


def test_a_second_signal_abandons_a_slow_tick_and_commits_nothing(projects_dir, novel, snapshot):
    with FakeOpenAIServer(responder=lambda body: {"content": "{}", "delay": 20}) as server:
        project = create_project(projects_dir / "harbour", {"name": "harbour", "premise": "x"},
                                 config={"llm": {"provider": "openai", "base_url":
                                                 server.base_url, "max_retries": 0}})
        before = snapshot(project.root)
        proc = novel("run", "-p", "harbour")
        until(lambda: server.requests, what="the planner's request")
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        assert proc.poll() is None                    # still finishing the tick
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 130, err
    assert "the tick in flight was abandoned" in out
    after = snapshot(project.root)
    ours = {".novel/daemon.json", ".novel/log/daemon.log"}
    assert {k: v for k, v in after.items() if k not in ours} == before
