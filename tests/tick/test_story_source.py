"""The story reaches a model through each request's context, not a side channel: the
session puts where the tick stands on every request as it goes out."""

from __future__ import annotations

import json

from novel_agent.models.base import Request
from novel_agent.models.offline import OfflineModel
from novel_agent.models.scripted import ScriptedModel
from novel_agent.story.memory import Memory
from novel_agent.tick.story_source import StorySource
from tests.support.ticking import run_ticks


def test_each_stage_of_a_tick_is_sent_where_the_story_stands(project):
    model = ScriptedModel(otherwise=OfflineModel(seed=0))
    run_ticks(project, 2, model)
    planner, writer, extractor = (model.calls(stage)[-1] for stage in
                                  ("planner", "writer", "extractor"))
    assert {r.context["tick"] for r in (planner, writer, extractor)} == {2}
    assert planner.context["plan"] is None and planner.context["prose"] == ""
    assert writer.context["plan"].title and writer.context["prose"] == ""
    assert extractor.context["prose"] and isinstance(extractor.context["memory"], Memory)


def test_the_offline_model_answers_from_the_context_it_is_sent():
    memory = Memory()
    memory.characters["ilse"] = {"id": "ilse", "name": "Ilse Varga"}
    source = StorySource(memory=memory, tick=4)
    schema = {"properties": {"tool_calls": {"maxItems": 3}}}
    ask = Request("planner", [{"role": "user", "content": "Plan."}], 300, schema,
                  context=source.view())
    told = json.loads(OfflineModel(seed=1).complete(ask).text)
    bare = json.loads(OfflineModel(seed=1).complete(
        Request("planner", ask.messages, 300, schema)).text)
    assert "Ilse Varga" in told["characters"]
    assert "Ilse Varga" not in bare["characters"] and bare["pov"]
