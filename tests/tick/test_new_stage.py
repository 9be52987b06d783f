"""A stage is declared once: one module (tests/support/blurb_stage.py) and one registry
line, and it is in the settings (`llm.stages.<it>`), the tick, `novel context --stage`,
the ledger, the live view and the budget report, with nothing else edited."""

from __future__ import annotations

import json

import pytest
import yaml

from novel_agent.config.stages import StageSpec, declare, forget
from tests.support import blurb_stage


@pytest.fixture
def blurb():
    declare(StageSpec("blurb", "Blurb", "blurb", "tests.support.blurb_stage", "blurb.j2",
                      slot=4, max_tokens=120))        # the one line
    yield
    forget("blurb")


def test_a_stage_declared_once_runs_in_every_tick_and_is_shown_everywhere(project, blurb, cli):
    (project.root / "templates").mkdir()
    (project.root / "templates" / "blurb.j2").write_text(blurb_stage.TEMPLATE)
    data = yaml.safe_load(project.project_file.read_text())
    data.setdefault("llm", {})["stages"] = {"blurb": {"max_tokens": 90}}
    project.project_file.write_text(yaml.safe_dump(data))

    shown = cli("config", "show", "--sources", "-p", project.name, ok=True).output
    assert "llm.stages.blurb.max_tokens = 90" in shown            # the settings

    ticked = cli("tick", "-n", "2", "-p", project.name, ok=True).output
    assert ticked.count("  blurb ") == 2                          # the live view's line

    rows = [json.loads(line) for line in
            (project.root / ".novel" / "usage.jsonl").read_text().splitlines()]
    assert [r["tick"] for r in rows if r["stage"] == "blurb"] == [1, 2]   # the ledger
    report = json.loads((project.root / ".novel" / "log" / "tick_002_blurb.json").read_text())
    assert report["stage"] == "blurb" and report["max_output"] == 90     # the budget report
    assert 0 < report["tokens"] <= report["budget"]
    record = yaml.safe_load((project.root / "plans" / "plan_002.yaml").read_text())
    assert record["answers"]["blurb"]                             # its answer kept

    context = cli("context", "--stage", "blurb", "-p", project.name, ok=True).output
    assert context.splitlines()[0].startswith("blurb context for tick 3")
    assert "The scene" in cli("context", "--stage", "blurb", "--show-prompt",
                              "-p", project.name, ok=True).output


def test_an_undeclared_stage_is_refused_by_name(project, cli):
    data = yaml.safe_load(project.project_file.read_text())
    data.setdefault("llm", {})["stages"] = {"blurb": {"max_tokens": 90}}
    project.project_file.write_text(yaml.safe_dump(data))
    refused = cli("tick", "-p", project.name, ok=False).output
    assert "llm.stages.blurb" in refused and "project.yaml" in refused
    assert len(refused.strip().splitlines()) == 1
