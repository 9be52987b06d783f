"""A book that is not whole (a scene deleted in the middle, a scene made binary or emptied,
the last scenes deleted by hand) stops `novel tick`, `novel run` and the daemon before any
model call, with one line naming the file and `novel doctor --fix`; nothing is written.
After the fix the book goes on."""

from __future__ import annotations

import pytest

from novel_agent.errors import DamagedBookError
from tests.support.fake_openai import API_KEY, FakeOpenAIServer
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

CASES = {
    "a scene deleted mid-book": (lambda p: p.scene_path(3).unlink(),
                                 "tick 7 cannot start: scenes/scene_003.md is missing but the "
                                 "scenes go on to tick 6 (deleted by hand?)"),
    "a scene made binary": (lambda p: p.scene_path(2).write_bytes(bytes(range(256))),
                            "scene_002.md:2: not UTF-8 text (byte 0x80)"),
    "a scene emptied": (lambda p: p.scene_path(4).write_text(""),
                        "scene_004.md: holds no prose (an emptied scene?)"),
    "the last scenes deleted": (lambda p: (p.scene_path(5).unlink(), p.scene_path(6).unlink()),
                                "tick 5 cannot start: plans/plan_005.yaml is there without its "
                                "scene (scenes deleted by hand?)"),
}


@pytest.mark.parametrize("case", CASES)
def test_the_tick_stops_before_any_model_call(project, cli, snapshot, case):
    run_ticks(project, 6)
    damage, said = CASES[case]
    damage(project)
    cli("status", "-p", "harbour", ok=None)      # opening the project: its counter follows
    before = snapshot(project.root)
    model = ScriptedModel()                       # asked anything, it fails the test
    with pytest.raises(DamagedBookError) as stopped:
        run_ticks(project, 1, model=model)
    assert said in str(stopped.value)
    assert "nothing was written: run `novel doctor --fix`" in str(stopped.value)
    assert model.requests == [] and snapshot(project.root) == before
    with pytest.raises(DamagedBookError):        # and again: a scene is read at every try
        run_ticks(project, 1, model=model)
    cli("doctor", "--fix", "-p", "harbour")
    run_ticks(project, 1)
    assert project.tick() == (5 if case == "the last scenes deleted" else 7)


@pytest.mark.parametrize("command", [["tick"], ["run", "--ticks", "1"]])
def test_tick_and_run_say_it_in_one_line_and_call_no_model(project, cli, snapshot, monkeypatch,
                                                           command):
    run_ticks(project, 6)
    project.scene_path(3).unlink()
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with FakeOpenAIServer() as server:
        cli("status", "-p", "harbour", ok=None)
        before = snapshot(project.root)
        result = cli(*command, "-p", "harbour", "--provider", "openai", "--base-url",
                     server.base_url, "--model", "gpt-4o-mini", ok=False)
    assert result.exit_code == 1
    assert ("tick 7 cannot start: scenes/scene_003.md is missing but the scenes go on to tick 6 "
            "(deleted by hand?); nothing was written: run `novel doctor --fix`, which brings back "
            "what the history holds") in result.output
    after = {path: data for path, data in snapshot(project.root).items()
             if "daemon" not in path}      # the daemon's own record of the run (and its log)
    assert server.requests == [] and after == before
