"""The story reaches a model through each request's view, made from the tick's draft as
the stage asks: never a copy kept in step by hand."""

from __future__ import annotations

import json

from novel_agent.models.base import Request, StoryView
from novel_agent.models.offline import OfflineModel
from novel_agent.story.memory.store import Memory
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks


def test_each_stage_of_a_tick_is_sent_where_the_story_stands(project):
    model = ScriptedModel(otherwise=OfflineModel(seed=0))
    run_ticks(project, 2, model)
    planner, writer, extractor = (model.calls(stage)[-1] for stage in
                                  ("planner", "writer", "extractor"))
    views = [r.view for r in (planner, writer, extractor)]
    assert all(isinstance(v, StoryView) for v in views)
    assert {v.tick for v in views} == {2}
    assert views[0].plan is None and views[0].prose == ""
    assert views[1].plan.title and views[1].prose == ""
    assert views[2].prose and isinstance(views[2].memory, Memory)
    assert views[2].plan == views[1].plan        # the plan the writer wrote from


def test_a_summary_call_is_told_what_it_condenses(project):
    model = ScriptedModel(otherwise=OfflineModel(seed=0))
    run_ticks(project, 10, model)
    (summary, *_) = model.calls("summarizer")
    assert summary.view.job["kind"] == "checkpoint"
    assert (summary.view.job["first"], summary.view.job["last"]) == (1, 10)
    assert summary.view.job["items"]            # what its range established, to name


def test_the_offline_model_answers_from_the_view_it_is_sent():
    memory = Memory()
    memory.characters["ilse"] = {"id": "ilse", "name": "Ilse Varga"}
    schema = {"properties": {"tool_calls": {"maxItems": 3}}}
    ask = Request("planner", [{"role": "user", "content": "Plan."}], 300, schema,
                  view=StoryView(memory=memory, tick=4))
    told = json.loads(OfflineModel(seed=1).complete(ask).text)
    bare = json.loads(OfflineModel(seed=1).complete(
        Request("planner", ask.messages, 300, schema)).text)
    assert "Ilse Varga" in told["characters"]
    assert "Ilse Varga" not in bare["characters"] and bare["pov"]


def test_the_offline_model_answers_a_stage_it_does_not_know_from_its_schema():
    schema = {"type": "object", "required": ["mood", "beats", "score"],
              "properties": {"mood": {"type": "string", "enum": ["grim", "wry"]},
                             "beats": {"type": "array", "minItems": 2,
                                       "items": {"type": "string", "maxLength": 12}},
                             "score": {"type": "integer", "minimum": 3}}}
    answer = json.loads(OfflineModel(seed=2).complete(
        Request("blurb", [{"role": "user", "content": "Blurb."}], 100, schema)).text)
    assert answer["mood"] == "grim" and answer["score"] == 3
    assert len(answer["beats"]) == 2 and all(len(b) <= 12 for b in answer["beats"])
