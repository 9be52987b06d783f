"""An embedded local model's lean stages: the planner with fewer tools and no
query_memory, the extractor with fewer items and no audit keys, the writer shown the
newest scene's ending; and summary bullets a grammar stopped in mid-word, ended."""

from __future__ import annotations

from novel_agent.models.offline import OfflineModel
from novel_agent.models.providers import LOCAL
from novel_agent.story.decisions import (
    BULLET_CHARS,
    DETAIL_CHARS,
    EXTRACT_SCHEMA,
    LEAN_EXTRACT_SCHEMA,
    extraction_from_json,
    plan_from_json,
    plan_schema,
    uncut,
)
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.ticking import run_ticks


class Heard(OfflineModel):
    """The offline model, keeping every request it answers."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.requests = []

    def complete(self, request):
        self.requests.append(request)
        return super().complete(request)


def test_the_lean_plan_schema_has_one_tool_and_no_query_memory():
    lean, full = plan_schema(3, lean=True), plan_schema(3)
    tools = lean["properties"]["tool_calls"]
    assert tools["maxItems"] == 1 and "query_memory" not in tools["items"]["properties"]["tool"]["enum"]
    assert plan_schema(0, lean=True)["properties"]["tool_calls"]["maxItems"] == 0
    assert full["properties"]["tool_calls"]["maxItems"] == 3
    assert "query_memory" in full["properties"]["tool_calls"]["items"]["properties"]["tool"]["enum"]


def test_the_lean_extraction_asks_fewer_items_and_no_audit_keys():
    lean, full = LEAN_EXTRACT_SCHEMA["properties"], EXTRACT_SCHEMA["properties"]
    assert (lean["summary"]["maxItems"], lean["facts"]["maxItems"], lean["loops_opened"]["maxItems"]) \
        == (3, 2, 1)
    assert (full["summary"]["maxItems"], full["facts"]["maxItems"], full["loops_opened"]["maxItems"]) \
        == (6, 4, 2)
    assert "present" in full and "present" not in lean


def test_a_bullet_stopped_at_its_length_in_mid_word_is_ended():
    cut = ("Edda found herself standing at the edge of an unknown cliff, her heart pounding "
           "rapidly as she looked around at the darkening sky and the eerie silence thatsurr")
    assert uncut(cut, 160) == ("Edda found herself standing at the edge of an unknown cliff, her "
                               "heart pounding rapidly as she looked around at the darkening sky "
                               "and the eerie silence …")
    two = ("Edda approached the door and knocked twice. It was locked shut tight, preventing "
           "anyone else from entering the room where the old keeper kept his ledge")
    assert uncut(two, len(two) + 2) == "Edda approached the door and knocked twice. It was " \
        "locked shut tight, preventing anyone else from entering the room where the old " \
        "keeper kept his …"
    whole = "Edda found the map."
    assert uncut(whole, 160) == whole and uncut(cut[:60], 160) == cut[:60]   # short: as is
    made = extraction_from_json({"summary": [cut, "Mara waits at the quay."]})
    assert made.summary[0].endswith("silence …")


def test_on_a_local_model_each_stage_is_asked_lean(project):
    run_ticks(project, 2)
    heard = []
    with reconciled(project), Session.open(project, project.config(),
                                           make_model=lambda: Heard()) as session:
        session.provider = LOCAL        # as an embedded model's session says
        assert session.lean_for("planner") and session.ending and not session.knowledge
        result = tick(session)
        heard = session.model.inner.requests
    by_stage: dict = {}
    for r in heard:         # each stage's first request (the writer's: the scene's, not a mend's)
        by_stage.setdefault(r.stage, r)
    tools = by_stage["planner"].json_schema["properties"]["tool_calls"]
    assert tools["maxItems"] == 1 and "query_memory" not in tools["items"]["properties"]["tool"]["enum"]
    planner = by_stage["planner"].messages[0]["content"]
    assert "query_memory" not in planner and "open_loop" in planner
    assert by_stage["extractor"].json_schema == LEAN_EXTRACT_SCHEMA
    assert '"summary": 3 short bullet sentences' in by_stage["extractor"].messages[0]["content"]
    writer = by_stage["writer"].messages[-1]["content"]
    assert "## How the last scene ended\n### Scene 2" in writer
    assert "Go on from where scene 2 ended" in writer
    assert result.tick == 3 and len(result.plan.tool_calls) <= 1


def test_elsewhere_each_stage_is_asked_in_full(project):
    run_ticks(project, 2)
    with reconciled(project), Session.open(project, project.config(),
                                           make_model=lambda: Heard()) as session:
        assert not session.lean_for("planner") and not session.ending and session.knowledge
        tick(session)
        heard = {r.stage: r for r in session.model.inner.requests}
    assert heard["planner"].json_schema["properties"]["tool_calls"]["maxItems"] == 3
    assert "query_memory" in heard["planner"].messages[0]["content"]
    assert heard["extractor"].json_schema == EXTRACT_SCHEMA
    assert "## The last scenes in full" in heard["writer"].messages[-1]["content"]


def test_a_detail_intention_fact_or_state_stopped_at_its_length_is_ended_or_left_out():
    """The demo's third plan made a place whose description ended "symbols. It's a" (its
    detail stopped at the lean schema's 120 characters); its extraction kept a fact cut at
    "that await". A string that ends at its schema's limit ends at its last sentence; a
    fact that cannot is left out (a known fact, not half of one)."""
    detail = ("A small room located at the center of the lighthouse, with its walls adorned "
              "with intricate carvings and symbols. It's a")
    assert len(detail) <= DETAIL_CHARS[0]
    plan = plan_from_json({"intention": "Edda finds the room.", "pov": "Edda Lorn",
                           "location": "Skerry Light", "tool_calls": [
                               {"tool": "create_location", "name": "Hidden Room",
                                "detail": detail}]}, max_tools=1)
    assert plan.tool_calls[0].detail.endswith("carvings and symbols.")
    short = "A room with a locked door and a"            # far from any limit: as given
    assert plan_from_json({"intention": "x" * 20, "pov": "E", "location": "L", "tool_calls": [
        {"tool": "create_location", "name": "R", "detail": short}]},
        max_tools=1).tool_calls[0].detail == short
    fact = ("Edda begins to wonder if there might be more than just one doppelganger living on "
            "this island or if there are hidden truths about Skerry Light's past that await")
    whole = "The map is drawn in the stranger's hand."
    made = extraction_from_json({"summary": ["Edda reads the map."], "facts": [fact, whole],
                                 "characters": [{"name": "Edda Lorn", "state": (
                                     "waits in the gallery by the great lamp, the stranger's "
                                     "map spread open on the table before her. She has not "
                                     "slept sin")}]})
    assert len(fact) >= BULLET_CHARS - 4 and made.facts == [whole]
    assert made.characters[0]["state"].endswith("on the table before her.")
