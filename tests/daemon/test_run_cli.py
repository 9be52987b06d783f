"""`novel run` in-process (CliRunner): the progress bar when bounded, --verbose and
--quiet, and the rotating daemon.log."""

from __future__ import annotations

import pytest

from novel_agent.daemon import log as daemon_log
from tests.support.clirunner import invoke


def run(*args):
    return invoke("run", "-p", "harbour", *args)


def test_a_bounded_run_shows_progress_and_a_line_per_tick(project):
    result = run("--ticks", "2")
    lines = result.output.splitlines()
    assert result.exit_code == 0
    assert lines[0] == ("pace: ticks back to back (daemon.interval 0; --interval S to space "
                        "them); no cost (a free model)")
    assert lines[1] == "writing 2 ticks"             # the bar's label (no terminal: no bar)
    assert [l.split('"')[0] for l in lines[2:4]] == ["tick 1 ", "tick 2 "]
    assert all(" words  " in l and " tokens  " in l for l in lines[2:4])
    assert lines[-1].startswith("finished the 2 ticks asked. 2 ticks, ")


def test_verbose_adds_stages_and_quiet_keeps_only_the_last_line(project):
    verbose = run("--ticks", "1", "-v").output
    assert "  plan " in verbose and "  commit " in verbose
    quiet = run("--ticks", "1", "-q").output.splitlines()
    assert quiet == [quiet[-1]] and quiet[-1].startswith("finished the 1 tick asked. 1 tick,")
    log = (project.log_dir / "daemon.log").read_text()
    assert log.count(" INFO    tick ") == 2 and "  plan " in log    # the file keeps INFO


def test_daemon_log_rotates(project, monkeypatch):
    monkeypatch.setattr(daemon_log, "MAX_BYTES", 300)
    run("--ticks", "4")
    rotated = sorted(p.name for p in project.log_dir.glob("daemon.log*"))
    assert rotated[:2] == ["daemon.log", "daemon.log.1"] and len(rotated) <= 4


@pytest.mark.parametrize("given,shown", [("nan", "'nan'"), ("1e400", "'1e400'"),
                                         ("inf", "'inf'"), ("-1", "'-1'"),
                                         ("604801", "'604801'")])
def test_an_interval_that_is_not_a_number_of_seconds_is_refused(project, given, shown):
    """`nan` and `1e400` (infinity) once ran, and daemon.json got a NaN (not JSON)."""
    result = run("--ticks", "1", "--interval", given)
    assert result.exit_code == 2 and project.tick() == 0
    assert result.output.splitlines()[-1] == (
        "Error: Invalid value for '--interval': must be a number of seconds from 0 to "
        f"604,800 (a week), not {shown}")
    assert not (project.novel_dir / "daemon.json").exists()


@pytest.mark.parametrize("value,line", [(".nan", 3), ("1.0e+400", 3), ("-.inf", 3)])
def test_daemon_interval_in_project_yaml_must_be_a_number_of_seconds(project, value, line):
    text = project.project_file.read_text()
    project.project_file.write_text(text + f"daemon:\n  max_ticks: 1\n  interval: {value}\n")
    result = run()
    assert result.exit_code == 1 and project.tick() == 0
    where = f"{project.project_file}:{text.count(chr(10)) + line}"
    assert result.output.splitlines()[-1].startswith(
        f"Error: {where}: daemon.interval: must be a number of seconds from 0 to 604,800 (a "
        "week), not "), result.output
