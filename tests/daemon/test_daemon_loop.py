"""The daemon's loop with a fake clock, a fake tick and real files: bounds, pacing,
failures and backoff, signals, hooks, and edits taken between ticks."""

from __future__ import annotations

import json
import signal
from datetime import UTC, datetime

import pytest

from novel_agent.daemon.heartbeat import read_heartbeat, status_lines
from novel_agent.daemon.reload import Reloader
from novel_agent.errors import FileFormatError, ModelError, ModelResponseError, TickError
from novel_agent.tick.events import StageEvent
from tests.support.clirunner import invoke
from tests.support.daemon_script import make, result


def test_a_run_bounded_by_ticks_paces_itself_and_says_why_it_ended(project):
    daemon, time, sessions, events = make(project, flags={"daemon.max_ticks": 3,
                                                           "daemon.interval": 10})
    summary = daemon.run()
    assert (summary.ticks, summary.words, summary.exit_code) == (3, 300, 0)
    assert summary.reason == "finished the 3 ticks asked"
    assert time.sleeps == [10, 10]                 # between ticks, not after the last
    assert (summary.prompt_tokens, summary.completion_tokens) == (30, 15)
    assert [e.message.split("  ")[0] for e in events if e.kind == "tick"] == [
        'tick 1 "Scene 1"', 'tick 2 "Scene 2"', 'tick 3 "Scene 3"']
    beat = read_heartbeat(project)
    assert (beat.state, beat.ticks, beat.words, beat.pace) == ("stopped", 3, 300, 6.67)   # 20 s over 3 ticks
    assert sessions[0].closed and len(sessions) == 1


def test_a_run_stops_once_the_book_reaches_its_words(project):
    daemon, *_ = make(project, flags={"daemon.stop_at_words": 250})
    summary = daemon.run()
    assert summary.ticks == 3 and summary.book_words == 300
    assert summary.reason == "the book reached 250 words"


def test_failures_back_off_and_the_kth_in_a_row_ends_the_run_with_3(project):
    fail = TickError("tick 1 failed in planner: 500", stage="planner")
    daemon, time, _, events = make(project, [fail] * 10, flags={
        "daemon.max_failures": 4, "daemon.failure_backoff": 2, "daemon.interval": 3})
    summary = daemon.run()
    assert summary.exit_code == 3 and summary.ticks == 0
    assert time.sleeps == [3, 4, 8]                # max(interval, 2 × 2^(n-1))
    assert summary.reason.startswith("gave up after 4 failed ticks in a row")
    assert [e.level for e in events if e.kind == "failure"][-1] == 40   # logging.ERROR
    beat = read_heartbeat(project)
    assert (beat.state, beat.failures) == ("failed", 4)
    assert "500" in beat.last_error


def test_a_success_resets_the_count_of_failures(project):
    fail = ModelError("timeout")
    daemon, *_ = make(project, [fail, fail, None, fail, fail, None], flags={
        "daemon.max_failures": 3, "daemon.max_ticks": 2, "daemon.failure_backoff": 0.5})
    summary = daemon.run()
    assert (summary.exit_code, summary.ticks) == (0, 2)


def unusable(tick: int = 1) -> TickError:
    """A tick that failed on an answer that could not be used: nothing committed."""
    error = TickError(f"tick {tick} failed in writer: the answer is mostly copies",
                      stage="writer")
    error.__cause__ = ModelResponseError("writer: the answer is mostly copies", stage="writer")
    return error


def test_a_tick_whose_answer_could_not_be_used_runs_once_more_at_once_as_novel_tick_does(
        project):
    daemon, time, _, events = make(project, [unusable(), None], flags={
        "daemon.max_ticks": 1, "daemon.failure_backoff": 2})
    summary = daemon.run()
    assert (summary.ticks, summary.failures, summary.exit_code) == (1, 0, 0)
    assert time.sleeps == [] and not [e for e in events if e.kind == "failure"]
    (note,) = [e.message for e in events if e.kind == "note"]
    assert note == ("note: tick 1 failed in writer: the answer is mostly copies; nothing was "
                    "committed: writing it again")


def test_the_same_failure_twice_is_one_failed_tick_and_a_stop_asked_for_ends_the_retry(
        project):
    daemon, time, _, events = make(project, [unusable(), unusable(), None], flags={
        "daemon.max_ticks": 1, "daemon.failure_backoff": 2, "daemon.interval": 0})
    summary = daemon.run()
    assert summary.ticks == 1 and time.sleeps == [2]
    assert [e.kind for e in events if e.kind in ("note", "failure")] == ["note", "failure"]

    def stopped(daemon, on_stage):
        daemon.stop.request(signal.SIGTERM)
        return unusable()

    daemon, *_, events = make(project, [stopped, None])
    summary = daemon.run()
    assert summary.ticks == 0 and summary.reason == "stopped by SIGTERM"
    assert not [e for e in events if e.kind == "note"]


def test_a_broken_file_waits_for_a_fix_and_is_not_counted(project):
    broken = FileFormatError("invalid YAML", file=str(project.steer_file), line=2)

    def fix(daemon, on_stage):
        daemon.changes.add(project.project_file)    # the user saves a fix
        return broken

    daemon, time, _, events = make(project, [broken] * 6 + [fix], flags={
        "daemon.max_failures": 2, "daemon.max_ticks": 1, "daemon.failure_backoff": 1})
    summary = daemon.run()
    assert (summary.exit_code, summary.ticks) == (0, 1)
    waits = [e for e in events if e.kind == "waiting"]
    assert len(waits) == 7 and "steer.md:2" in waits[0].message


def test_first_signal_lets_the_tick_finish_and_commit(project):
    def signalled(daemon, on_stage):
        daemon.stop.request(signal.SIGTERM)        # arrives mid-tick
        return None

    daemon, *_ = make(project, [signalled])
    summary = daemon.run()
    assert (summary.ticks, summary.exit_code, summary.reason) == (1, 0, "stopped by SIGTERM")


def test_second_signal_abandons_a_tick_still_asking_the_model(project):
    def twice(daemon, on_stage):
        daemon.stop.request(signal.SIGINT)
        daemon.stop.request(signal.SIGINT)       # raises Interrupted: before the commit
        raise AssertionError("not reached")

    daemon, *_ = make(project, [twice])
    summary = daemon.run()
    assert (summary.ticks, summary.exit_code) == (0, 130)
    assert "abandoned" in summary.reason


def test_second_signal_during_the_commit_waits_for_it(project):
    def twice_after_extract(daemon, on_stage):
        on_stage(StageEvent("extractor", 0.1, commit_next=True))
        daemon.stop.request(signal.SIGINT)
        daemon.stop.request(signal.SIGINT)       # the commit is under way: no raise
        return None

    daemon, *_ = make(project, [twice_after_extract])
    summary = daemon.run()
    assert (summary.ticks, summary.exit_code) == (1, 0)


def test_a_before_tick_hook_ends_the_run_with_its_reason(project):
    hook = lambda d: "cost ceiling reached" if d.summary.ticks >= 2 else None  # noqa: E731
    daemon, *_ = make(project, before_tick=[hook])
    summary = daemon.run()
    assert (summary.ticks, summary.reason) == (2, "cost ceiling reached")


def test_an_edit_reloads_and_rebuilds_the_session(project):
    def edit(daemon, on_stage):
        text = project.project_file.read_text() + "context:\n  max_prompt_tokens: 6000\n"
        project.project_file.write_text(text)
        daemon.changes.add(project.project_file)
        return None

    daemon, time, sessions, events = make(project, [edit], flags={"daemon.max_ticks": 2})
    daemon.run()
    reloads = [e.message for e in events if e.kind == "reload"]
    assert reloads == ["reloaded project.yaml: context.max_prompt_tokens 32000 → 6000"]
    assert [s.config.context.max_prompt_tokens for s in sessions] == [32000, 6000]
    assert sessions[0].closed and sessions[1].closed
    assert 0.2 in time.sleeps                      # waited for the edit to settle


def test_an_invalid_edit_is_reported_and_the_last_good_config_stays(project):
    def edit(daemon, on_stage):
        text = project.project_file.read_text() + "  temprature: 0.9\n"    # in llm:, the last
        project.project_file.write_text(text)
        daemon.changes.add(project.project_file)
        return None

    daemon, _, sessions, events = make(project, [edit], flags={"daemon.max_ticks": 3})
    summary = daemon.run()
    (reload,) = [e for e in events if e.kind == "reload"]
    line = len(project.project_file.read_text().splitlines())
    assert f"project.yaml:{line}: unknown key 'llm.temprature'" in reload.message
    assert "the configuration in force stays" in reload.message
    assert summary.ticks == 3 and len(sessions) == 1
    assert "temprature" in read_heartbeat(project).last_error


def test_the_heartbeat_is_json_written_whole(project):
    daemon, *_ = make(project, flags={"daemon.max_ticks": 1})
    daemon.run()
    data = json.loads((project.novel_dir / "daemon.json").read_text())
    assert set(data) >= {"pid", "started", "state", "ticks", "last_tick", "pace", "last_error"}
    assert not list(project.novel_dir.glob(".daemon.json*"))   # no temp file left


@pytest.mark.parametrize("kind", ["sleeping", "waiting"])
def test_a_stop_request_cuts_a_wait_short(project, kind):
    def stop_soon(daemon, on_stage):
        daemon.sleep = lambda s: daemon.stop.request(signal.SIGTERM)
        if kind == "waiting":
            return FileFormatError("bad", file="x.yaml")
        return None

    daemon, *_ = make(project, [stop_soon], flags={"daemon.interval": 3600})
    summary = daemon.run()
    assert summary.reason == "stopped by SIGTERM"


def test_lore_and_template_edits_are_checked_and_reported(project):
    project.templates_dir.mkdir()
    (project.templates_dir / "write.j2").write_text("{% if %}\n")
    (project.lore_dir / "tower.yaml").write_text("keys: [tower\n")
    reloader = Reloader(project, {})
    paths = {project.templates_dir / "write.j2": "templates",
             project.lore_dir / "tower.yaml": "lore"}
    lore, template = reloader.apply(set(paths), paths)
    assert template.error.line == 1 and f"{project.templates_dir / 'write.j2'}:1:" in template.message
    assert f"{project.lore_dir / 'tower.yaml'}:" in lore.message and lore.error is not None
    (project.lore_dir / "tower.yaml").write_text("keys: [tower]\n")      # no content
    (lore,) = reloader.apply({project.lore_dir / "tower.yaml"}, paths)
    assert "tower.yaml:1: 'content' must be" in lore.message and lore.error is not None
    (project.lore_dir / "tower.yaml").write_text("keys: [tower]\ncontent: It leans.\n")
    (lore,) = reloader.apply({project.lore_dir / "tower.yaml"}, paths)
    assert lore.message == "lore/tower.yaml changed (1 lore entry); the next tick reads it"
    assert lore.error is None


# ---------------------------------------------------------------- the last error

T0 = datetime(2026, 11, 22, 15, 30, 1, tzinfo=UTC)


def lands(project, words: int = 3):
    """A scripted tick that commits a scene file, as a real tick does."""
    def step(daemon, on_stage):
        n = project.tick() + 1
        project.scene_path(n).write_text(f"---\ntick: {n}\ntitle: Scene {n}\n---\n"
                                         + "word " * words + "\n")
        return result(n, words)
    return step


def last_error_line(project) -> str:
    return [line for line in status_lines(read_heartbeat(project))
            if line.startswith("last error")][0]


def test_a_tick_error_names_its_tick_and_is_marked_fixed_once_a_tick_goes_through(project):
    seen = []

    def look(daemon, on_stage):
        seen.append(last_error_line(project))
        return lands(project)(daemon, on_stage)

    fail = ModelError("the model did not answer within 60s")
    daemon, *_ = make(project, [lands(project), fail, look, lands(project)], now=lambda: T0,
                      flags={"daemon.max_ticks": 3, "daemon.failure_backoff": 0.5})
    summary = daemon.run()
    assert (summary.ticks, summary.exit_code) == (3, 0)
    assert seen == [f"last error  tick 2 at {T0.isoformat()}: the model did not answer "
                    "within 60s"]
    assert last_error_line(project) == (f"last error  tick 2 at {T0.isoformat()}, fixed from "
                                        "tick 2 on: the model did not answer within 60s")
    beat = read_heartbeat(project)
    assert (beat.error_tick, beat.fixed_tick, beat.failures) == (2, 2, 0)


def test_a_bad_edit_stays_the_last_error_until_an_edit_of_it_reloads(project):
    good = project.project_file.read_text()
    seen = []

    def tick(text=None):
        def step(daemon, on_stage):
            seen.append(read_heartbeat(project).last_error and last_error_line(project))
            if text is not None:
                project.project_file.write_text(text)
                daemon.changes.add(project.project_file)
            return lands(project)(daemon, on_stage)
        return step

    daemon, *_ = make(project, [tick(good + "  temprature: 0.9\n"), tick(), tick(),   # in llm:
                                tick(good), tick()], now=lambda: T0,
                      flags={"daemon.max_ticks": 5})
    daemon.run()
    line = len(good.splitlines()) + 1
    error = f"not reloaded: {project.project_file}:{line}: unknown key 'llm.temprature' ("
    # ticks 2-4 went through on the configuration in force, but the file is still broken
    assert seen[0] == ""
    assert [s.startswith(f"last error  tick 2 at {T0.isoformat()}: {error}")
            for s in seen[1:]] == [True, True, True, False]
    assert seen[4].startswith(f"last error  tick 2 at {T0.isoformat()}, fixed from tick 5 "
                              f"on: {error}")


def test_novel_status_shows_the_daemon_and_its_last_error(project):
    fail = TickError("tick 2 failed in writer: 502 Bad Gateway", stage="writer")
    daemon, *_ = make(project, [lands(project), fail, fail], now=lambda: T0, flags={
        "daemon.max_ticks": 5, "daemon.interval": 2, "daemon.max_failures": 2,
        "daemon.failure_backoff": 1})
    assert daemon.run().exit_code == 3

    def daemon_lines() -> list[str]:
        result = invoke("status", "-p", "harbour")
        lines = result.output.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("daemon"))
        return lines[start:next(i for i, line in enumerate(lines) if line.startswith("steer"))]

    stamp = T0.isoformat()
    assert daemon_lines() == [
        f"daemon      not running: the last run failed at {stamp} after 1 tick, pace 4.0 s "
        "per tick",
        f"last error  tick 2 at {stamp}: tick 2 failed in writer: 502 Bad Gateway"]
    daemon, *_ = make(project, [fail, lands(project)], now=lambda: T0,
                      flags={"daemon.max_ticks": 1, "daemon.interval": 2,
                             "daemon.failure_backoff": 1})
    daemon.run()
    assert daemon_lines() == [
        f"daemon      not running: the last run stopped at {stamp} after 1 tick, pace 2.0 s "
        "per tick",
        f"last error  tick 2 at {stamp}, fixed from tick 2 on: tick 2 failed in writer: 502 "
        "Bad Gateway"]
    daemon, *_ = make(project, flags={"daemon.max_ticks": 1})
    daemon.run()
    assert len(daemon_lines()) == 1             # a new run starts with no error
