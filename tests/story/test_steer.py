"""The author's note: in force for the planner and writer, expiring by `until` or `ticks`,
shown by `novel status`, and read by the offline planner."""

from __future__ import annotations

import json

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.models.offline import first_sentence
from novel_agent.story.steer import read_steer
from tests.support.clirunner import invoke
from tests.support.ticking import run_ticks


def prompt(project, tick: int, stage: str) -> str:
    data = json.loads((project.log_dir / f"tick_{tick:03d}_{stage}.json").read_text())
    return "\n".join(m["content"] for m in data["messages"])


def noted(project, tick: int, stage: str) -> bool:
    """Whether the prompt of `stage` at `tick` had an Author's note section."""
    data = json.loads((project.log_dir / f"tick_{tick:03d}_{stage}.json").read_text())
    return any(s["name"] == "steer" and s["tokens"] for s in data["sections"])


def status(project) -> str:
    result = invoke("status", "-p", str(project.root))
    return next(line for line in result.output.splitlines() if line.startswith("steer"))


def test_a_note_goes_to_planner_and_writer_and_shapes_the_offline_plan(project):
    project.steer_file.write_text("# note\nBring the storm ashore! Then calm.\n")
    (result,) = run_ticks(project, 1)
    assert "Bring the storm ashore!" in prompt(project, 1, "planner")
    assert "Bring the storm ashore!" in prompt(project, 1, "writer")
    assert result.plan.intention.endswith(", as the author asks: Bring the storm ashore!")


def test_until_ends_the_note_after_that_tick(project):
    project.steer_file.write_text("---\nuntil: 2\n---\nKeep it at night.\n")
    assert status(project) == 'steer       "Keep it at night." (in force to tick 2: 2 ticks left)'
    run_ticks(project, 3)
    assert noted(project, 2, "writer") and noted(project, 2, "planner")
    assert not noted(project, 3, "writer") and not noted(project, 3, "planner")
    assert status(project) == 'steer       "Keep it at night." (expired after tick 2)'


def test_ticks_counts_from_the_first_tick_that_reads_the_note(project):
    run_ticks(project, 2)
    project.steer_file.write_text("---\nticks: 2\n---\nA funeral.\n")
    assert status(project).endswith("(in force to tick 4: 2 ticks left)")
    run_ticks(project, 1)
    assert project.state()["steer"]["since"] == 3
    assert status(project).endswith("(in force to tick 4: 1 tick left)")
    run_ticks(project, 2)
    assert noted(project, 4, "planner") and not noted(project, 5, "planner")
    assert not noted(project, 2, "planner")
    project.steer_file.write_text("---\nticks: 1\n---\nA wedding.\n")   # an edit starts anew
    run_ticks(project, 1)
    assert "A wedding." in prompt(project, 6, "planner")
    assert project.state()["steer"]["since"] == 6


def test_a_note_without_front_matter_stays_until_changed(project):
    project.steer_file.write_text("Rain.\n")
    assert status(project) == 'steer       "Rain." (in force until you change it)'
    project.steer_file.unlink()
    assert status(project).startswith("steer       none")


@pytest.mark.parametrize("head, line, message", [
    ("until: soon", 2, "'until' must be a whole number"),
    ("ticks: 0", 2, "'ticks' must be a whole number of at least 1"),
    ("until: 3\nforever: true", 3, "unknown key 'forever'"),
])
def test_a_bad_front_matter_names_file_and_line(project, head, line, message):
    project.steer_file.write_text(f"---\n{head}\n---\nRain.\n")
    with pytest.raises(FileFormatError, match=message) as info:
        read_steer(project.steer_file)
    assert (info.value.file, info.value.line) == (str(project.steer_file), line)
    assert status(project).startswith(f"steer       unreadable: {project.steer_file}:{line}:")


def test_first_sentence():
    assert first_sentence("## Tone\nDarker now. Much darker.") == "Darker now."
    assert first_sentence("no stop at the end") == "no stop at the end."
    assert first_sentence("") == ""
