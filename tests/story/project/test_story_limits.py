"""project.yaml's story keys have limits (story/project/folder.py STORY_LIMITS): one over
its limit is one line naming the file, the key, its line and the limit, at once, at
`novel new` (--premise, --foundation, --premises) and whenever project.yaml is read; no
file is made or changed."""

from __future__ import annotations

import time

import pytest

from novel_agent.story.project.folder import PROJECT_FILE_LIMIT, STORY_LIMITS
from tests.support.clirunner import invoke
from tests.support.ticking import run_ticks

TOLD = "more than its limit of"


def one_line(result, *parts: str) -> str:
    assert result.exit_code == 1, result.output
    line = result.output.strip().splitlines()[-1]
    assert "Traceback" not in result.output and "template" not in result.output
    for part in parts:
        assert part in line, line
    return line


@pytest.mark.parametrize("key", ["premise", "title"])
def test_a_story_key_over_its_limit_in_project_yaml_stops_every_command_at_once(
        project, snapshot, key):
    run_ticks(project, 1)
    path = project.project_file
    text = "".join(line for line in path.read_text().splitlines(keepends=True)
                   if not line.startswith(f"{key}:"))
    for size in (STORY_LIMITS[key] + 1, 10_000_000):      # the second: past the file's limit
        value = ("harbour " * (size // 8 + 1))[:size - 1] + "x"
        path.write_text(f"{key}: {value}\n" + text)
        before = snapshot(project.root)
        started = time.monotonic()
        for command in ("tick", "status"):
            one_line(invoke(command, "-p", str(project.root)),
                     f"{path}:1: {key}: {size:,} characters, {TOLD} {STORY_LIMITS[key]:,}")
        assert time.monotonic() - started < 10
        assert snapshot(project.root) == before
    assert PROJECT_FILE_LIMIT < 10_000_000


def test_a_premise_over_its_limit_makes_no_project(projects_dir, tmp_path):
    long = "a lighthouse " * 400
    one_line(invoke("new", "harbour", "--premise", long),
             f"the command line: premise: {len(long.strip()):,} characters, {TOLD} 4,000")
    foundation = tmp_path / "saga.yaml"
    foundation.write_text(f"premise: A keeper.\ntitle: {'The Lamp ' * 100}\n")
    one_line(invoke("new", "harbour", "--foundation", str(foundation)),
             f"{foundation}:2: title: 899 characters, {TOLD} 200")
    premises = tmp_path / "many.yaml"
    premises.write_text(f"- premise: A keeper.\n- premise: {'x' * 5000}\n")
    one_line(invoke("new", "--premises", str(premises)),
             f"{premises}:2: premise 2: premise: 5,000 characters, {TOLD} 4,000")
    assert not projects_dir.exists() or list(projects_dir.iterdir()) == []
