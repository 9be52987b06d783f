"""Payoffs in the ticks of a book with an outline: each loop gets a payoff and a status, the
planner is shown the loops due and the offline model pays them off, no loop opens in the
final act, and the end waits a bounded number of scenes for the loops still open; a
replay of the records gives the same loops."""

from __future__ import annotations

from typing import Any

from novel_agent.history.hooks import opened
from novel_agent.models.offline import OfflineModel
from novel_agent.reports.status import outline_status
from novel_agent.revision.rederive import replay_range
from novel_agent.revision.revise import revise
from novel_agent.story.memory.files import memory_files
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scenes
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.projects import outline_project
from tests.support.scripted import ScriptedModel
from tests.support.stress_model import THINGS, StressModel
from tests.support.ticking import NOW, run_ticks
from tests.tick.test_follow_outline import tick_to_the_end


def test_an_offline_book_with_an_outline_pays_off_every_loop_by_its_end(project):
    outline_project(project, chapters=6, beats=2, scenes=2)
    results, stop = tick_to_the_end(project, lambda: OfflineModel())
    loops = load_memory(project.memory_dir).loops
    assert len(loops) >= 3 and all(l["status"] == "resolved" and l.get("payoff") for l in loops)
    assert len(results) == 12 and "loop" not in str(stop)       # none left open
    changes = [c for r in results for c in r.memory_changes]
    assert sum(c.startswith("loop payoff: ") for c in changes) == len(loops)
    derived = replay_range(project, Memory(), 1, len(results), project.config())
    assert memory_files(derived.copy(), project.memory_dir) == \
        memory_files(load_memory(project.memory_dir), project.memory_dir)


def test_the_planner_is_shown_the_loops_due_with_their_ids(project):
    outline_project(project, chapters=6, beats=2, scenes=2)
    spy = ScriptedModel()
    with reconciled(project), Session.open(project, project.config(), now=lambda: NOW,
                                           make_model=lambda: setattr(
                                               spy, "otherwise", Unresolving())
                                           or spy) as session:
        for _ in range(6):
            tick(session)
    prompt = spy.calls("planner")[-1].messages[-1]["content"]    # scene 6: chapter 3
    due = [l for l in load_memory(project.memory_dir).loops if l["payoff"] in ("1", "2", "3")]
    assert due and all(l["status"] != "resolved" for l in due)
    assert "Loops due, most urgent first (resolve each: resolve_loop naming its id):\n" + \
        "".join(f"- [{l['id']}] {l['description']} (payoff {l['payoff']}" for l in due[:1]) \
        in prompt
    assert all(f"- [{l['id']}] " in prompt for l in due)
    later = [l for l in load_memory(project.memory_dir).loops if l not in due]
    assert later and not any(f"- [{l['id']}] " in prompt for l in later)
    assert 'may name where it pays off as its open_loop target: a chapter ("7")' in prompt


def test_no_loop_opens_in_the_final_act(project):
    outline_project(project, chapters=3, beats=2, scenes=2)      # three acts, one chapter each
    run_ticks(project, 4, offline_seed=0)                         # chapters 1 and 2 landed
    model = ScriptedModel()
    model.add("planner", {"title": "The Bell", "intention": "Mara rings the drowned bell.",
                          "pov": "Mara Quill", "location": "the tower", "characters": [],
                          "beat": "3.1", "tool_calls": [
                              {"tool": "open_loop", "name": "", "target": "",
                               "detail": "Who cast the drowned bell?"}]})
    model.add("extractor", {"summary": ["Mara rings the bell.", "It tolls.", "No one comes."],
                            "facts": [], "characters": [], "relationships": [],
                            "loops_opened": ["Who answers the drowned bell's toll?"],
                            "loops_resolved": [], "beat_status": "done", "tension": 5,
                            "tension_reason": "The bell."})
    before = len(load_memory(project.memory_dir).loops)
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    assert len(load_memory(project.memory_dir).loops) == before
    assert "the final act opens no loop: the planner's open_loop 'Who cast the drowned bell?' " \
           "was dropped" in result.notices
    assert "the final act opens no loop: the extractor's loops_opened \"Who answers the " \
           "drowned bell's toll?\" not recorded" in result.notices
    schema = model.calls("extractor")[0].json_schema["properties"]["loops_opened"]
    assert schema["maxItems"] == 0
    assert "Final act: open no new loop" in model.calls("planner")[0].messages[-1]["content"]
    record = (project.plans_dir / "plan_005.yaml").read_text()
    assert "open_loop" not in record and "loops_opened: []" in record


class Unresolving(OfflineModel):
    """The offline model, but it resolves no loop (its plan's and its extractor's left out)."""

    def _plan(self, rng: Any, hints: Any, request: Any) -> dict:
        plan = super()._plan(rng, hints, request)
        return {**plan, "tool_calls": [c for c in plan["tool_calls"]
                                       if c["tool"] != "resolve_loop"]}

    def _extract(self, rng: Any, hints: Any) -> dict:
        pov = getattr(hints.get("plan"), "pov", "") or "Mara"
        return {**super()._extract(rng, hints), "loops_resolved": [],
                "loops_opened": [f"who hid the {rng.choice(THINGS)} from {pov}"]}


def test_the_end_waits_three_scenes_at_most_for_the_loops_left_open(project):
    outline_project(project, chapters=2, beats=1, scenes=2)       # 4 planned, 6 at most
    results, stop = tick_to_the_end(project, lambda: Unresolving())
    scenes = load_scenes(project.scenes_dir)
    assert [(s.chapter, s.beat) for s in scenes] == [(1, "1.1"), (2, "2.1"), (2, ""), (2, ""),
                                                     (2, "")]    # the last beat, then 3 more
    left = [l for l in load_memory(project.memory_dir).loops if l["status"] != "resolved"]
    assert left and all(l["status"] in ("open", "progressing", "deferred") for l in left)
    assert results[-1].finished.endswith(f"; {len(left)} loop left open")
    assert str(stop).startswith(results[-1].finished + "; extend the outline")
    assert outline_status(project, "three_act").startswith("finished: 2 chapters, 5 scenes")
    assert [r.finished for r in results[:-1]] == [""] * 4


def test_an_ending_scene_is_told_to_pay_the_loops_off_now(project):
    outline_project(project, chapters=2, beats=1, scenes=2)
    spy = ScriptedModel()
    results, _ = tick_to_the_end(project, lambda: setattr(
        spy, "otherwise", Unresolving()) or spy)
    prompts = [r.messages[-1]["content"] for r in spy.calls("planner")]
    assert "Loops that must be paid off now" not in prompts[1]     # the last beat's scene
    ending = prompts[2]
    assert "The outline's last beat has landed, but " in ending
    assert "still open: this is an ending scene (1 of at most 3) in the last chapter: pay " \
           "them off now.\nLoops that must be paid off now (resolve each: resolve_loop naming " \
           "its id):\n- [" in ending
    assert "(2 of at most 3)" in prompts[3] and "(3 of at most 3)" in prompts[4]
    assert results[2].plan.beat == "" and "beat" not in spy.calls("planner")[2].json_schema[
        "properties"]


def test_a_model_that_resolves_nothing_still_ends_within_the_stretch(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    results, _ = tick_to_the_end(project, lambda: StressModel())
    assert len(results) <= 1.5 * 6
    assert "loops left open" in results[-1].finished


def test_a_revised_scene_of_the_final_act_opens_no_loop(project):
    outline_project(project, chapters=2, beats=1, scenes=2)       # chapter 2: the final act
    tick_to_the_end(project, lambda: Unresolving())
    loops = load_memory(project.memory_dir).loops
    with opened(project), Session.open(project, project.config(), now=lambda: NOW,
                                       make_model=lambda: Unresolving()) as session:
        revision = revise(session, 2, "Mara rang the drowned bell, and no one came.\n")
    assert load_memory(project.memory_dir).loops == loops
    assert "the final act opens no loop: the extractor's loops_opened of the new text not " \
           "recorded" in revision.notices
