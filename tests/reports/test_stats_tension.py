"""`novel stats` in a book with an outline: each tick's target tension (as its planner was
shown it) and realized tension (as its extractor rated it), in --json, a text line and the
plot's last row; a book without an outline has none."""

from __future__ import annotations

import json

import pytest

from novel_agent.story.outline.file import load_outline
from novel_agent.story.outline.standing import book_standing
from novel_agent.story.scenes import load_scenes
from tests.support.clirunner import invoke
from tests.support.projects import outline_project
from tests.support.ticking import run_ticks


@pytest.fixture
def paced(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    run_ticks(project, 4)
    return project


def test_each_tick_has_its_target_and_realized_tension(paced):
    stats = json.loads(invoke("stats", "-p", "harbour", "--json", ok=True).output)
    scenes, outline = load_scenes(paced.scenes_dir), load_outline(paced.outline_file)
    targets = [book_standing(outline, scenes[:n], "three_act").target for n in range(4)]
    assert [t["tension_target"] for t in stats["ticks"]] == targets
    assert [t["tension"] for t in stats["ticks"]] == [s.tension for s in scenes]
    assert all(abs(t["tension"] - t["tension_target"]) <= 1 for t in stats["ticks"])
    said = stats["summary"]["tension"]
    assert said["ticks"] == 4 and said["last_target"] == targets[-1]
    assert said["mean_gap"] == round(sum(abs(a - s.tension) for a, s in zip(targets, scenes))
                                     / 4, 2)
    line = next(l for l in invoke("stats", "-p", "harbour", ok=True).output.splitlines()
                if l.startswith("tension "))
    assert line == (f"tension           target vs realized: last {targets[-1]} vs "
                    f"{scenes[-1].tension}, mean {said['target_mean']:.1f} vs "
                    f"{said['realized_mean']:.1f}, off by {said['mean_gap']:.1f} on average "
                    "(4 scenes rated)")


def test_a_book_without_an_outline_has_no_tension(project):
    run_ticks(project, 2)
    stats = json.loads(invoke("stats", "-p", "harbour", "--json", ok=True).output)
    assert [t["tension"] for t in stats["ticks"]] == [None, None]
    assert stats["summary"]["tension"]["ticks"] == 0
    assert "tension" not in invoke("stats", "-p", "harbour", ok=True).output


def test_the_plot_draws_target_and_realized_tension(paced, tmp_path):
    pytest.importorskip("matplotlib", reason="the plot extra is not installed: "
                                             "pip install 'novel_agent[plot]'")
    out = tmp_path / "stats.svg"
    invoke("stats", "-p", "harbour", "--plot", str(out), ok=True)
    assert "tension per scene: the outline's target and the scene's" in out.read_text()
