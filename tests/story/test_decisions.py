"""Tolerant JSON parsing and validation of stage answers."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novel_agent.errors import ModelResponseError
from novel_agent.story.decisions import EXTRACT_SCHEMA, extraction_from_json, plan_from_json, plan_schema
from novel_agent.text.lenient_json import close_truncated, parse_json


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', {"a": 1}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('Sure! Here is the plan: {"a": 1} Hope it helps.', {"a": 1}),
    ('{"a": 1,}', {"a": 1}),
    ('noise {"b": "}"} then {"a": 1}', {"b": "}"}),   # the first object wins
])
def test_parse_json_accepts_what_models_send(text, expected):
    assert parse_json(text) == expected


def test_parse_json_rejects_prose():
    with pytest.raises(ModelResponseError, match="not a JSON object"):
        parse_json("The scene opens at dawn.", stage="planner")


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.integers() | st.text(max_size=10),
                       max_size=5), st.text(max_size=20).filter(lambda s: "{" not in s))
def test_parse_json_finds_any_object_after_prose(obj, prefix):
    assert parse_json(prefix + " " + json.dumps(obj)) == obj


def test_plan_validation_caps_tools_and_adds_pov():
    data = {"intention": "x", "pov": "Ann", "location": "Pier", "characters": ["Bo"],
            "tool_calls": [{"tool": "open_loop", "name": "", "detail": str(i)} for i in range(5)]}
    plan = plan_from_json(data, max_tools=2)
    assert len(plan.tool_calls) == 2
    assert plan.characters == ["Ann", "Bo"]


def test_plan_validation_lists_every_problem():
    with pytest.raises(ModelResponseError) as info:
        plan_from_json({"pov": "", "tool_calls": [{"tool": "fly"}]}, max_tools=3)
    message = str(info.value)
    assert "'intention' is empty" in message and "unknown tool 'fly'" in message


def test_extraction_needs_a_summary():
    with pytest.raises(ModelResponseError, match="summary"):
        extraction_from_json({"facts": ["a"]})
    ex = extraction_from_json({"summary": "Mara finds the map.",
                               "characters": [{"name": "A", "state": 3}]})
    assert ex.summary == ["Mara finds the map."] and ex.characters == [{"name": "A", "state": "3"}]


def test_bullets_that_are_not_prose_are_dropped_and_none_left_is_an_error():
    ex = extraction_from_json({"summary": ["location_id: 3227718265#abc", "Mara climbs the stair.",
                                           "3 4 5 6 7 8 ## %%"]})
    assert ex.summary == ["Mara climbs the stair."]
    with pytest.raises(ModelResponseError, match="no bullets that are prose"):
        extraction_from_json({"summary": ["location_id: 3227718265#abc"]})


def test_a_pov_that_is_not_a_name_gives_way_to_a_fallback_with_a_warning():
    from novel_agent.text.names import name_problem
    from novel_agent.tick.stages.plan import settle_pov
    junk = plan_from_json({"intention": "Something happens here.", "location": "the tower",
                           "pov": "They didn't know what to do", "tool_calls": []}, max_tools=3)
    plan, warning = settle_pov(junk, name_problem, ["", "Edda Lorn"])
    assert plan.pov == "Edda Lorn" and plan.characters[0] == "Edda Lorn"
    assert "They didn't know what to do" not in plan.characters
    assert warning.startswith("the planner's POV \"They didn't know what to do\" is not a name")
    same, none = settle_pov(plan, name_problem, ["Other"])
    assert same is plan and none == ""


def test_cast_names_that_are_not_names_are_dropped():
    plan = plan_from_json({"intention": "Something happens here.", "pov": "Mara Voss",
                           "location": "the tower", "tool_calls": [],
                           "characters": ["Mara Voss", "lamp opened in scene 1"]}, max_tools=3)
    assert plan.characters == ["Mara Voss"]


def test_schemas_bound_every_string():
    def strings(node):
        if isinstance(node, dict):
            if node.get("type") == "string" and "enum" not in node:
                yield node
            for value in node.values():
                yield from strings(value)
        elif isinstance(node, list):
            for value in node:
                yield from strings(value)
    found = list(strings(plan_schema(3))) + list(strings(EXTRACT_SCHEMA))
    assert found and all("maxLength" in s for s in found)


def test_an_answer_cut_off_by_the_token_limit_is_closed():
    full = {"summary": ["Mara finds the map.", "The door is drawn."],
            "facts": ["a", "b"], "characters": [{"name": "Mara", "state": "uneasy"}]}
    text = json.dumps(full, indent=2)
    cut = text[: text.index('"b"') + 2]          # inside the second fact
    data = parse_json(cut)
    assert data["summary"] == full["summary"] and data["facts"] == ["a"]
    cut = text[: text.index('"uneasy"') + 4]     # inside a nested object's string
    data = parse_json(cut)
    assert data["facts"] == ["a", "b"] and data["summary"] == full["summary"]


def test_a_truncated_answer_never_yields_an_inner_object():
    text = '{"summary": ["x y z"], "characters": [{"name": "A", "state": "B"}, {"name": "C'
    data = parse_json(text)
    assert data["summary"] == ["x y z"] and data["characters"] == [{"name": "A", "state": "B"}]


@given(st.lists(st.text(alphabet="abc .,'", min_size=1, max_size=12), min_size=1, max_size=6),
       st.integers(1, 400))
def test_any_cut_of_a_valid_answer_parses_or_fails_cleanly(bullets, at):
    text = json.dumps({"summary": bullets, "facts": bullets[:2]})
    try:
        data = parse_json(text[:at])
    except ModelResponseError:
        return
    assert set(data) <= {"summary", "facts"}
    for _key, values in data.items():
        assert all(v in bullets for v in values)


@pytest.mark.parametrize("text, closed", [
    ('{"a": 1, "b": [1, 2', '{"a": 1, "b": [1]}'),
    ('{"title": "A", "summary": ["one", "tw', '{"title": "A", "summary": ["one"]}'),
    ('noise {"a": {"b": true}} tail {"c": 2}', '{"a": {"b": true}}'),
    ('{"a": "x\\"y", "b": nul', '{"a": "x\\"y"}'),
    ('{"title": "The Ke', None),
    ('no object here', None),
])
def test_close_truncated_keeps_every_complete_value(text, closed):
    assert close_truncated(text) == closed


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3), max_leaves=10)


@given(st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=4), st.data())
def test_any_prefix_of_an_object_closes_to_an_object_or_nothing(data, draw):
    text = json.dumps(data)
    assert close_truncated(text) == text
    cut = draw.draw(st.integers(min_value=1, max_value=len(text) - 1))
    closed = close_truncated(text[:cut])
    if closed is not None:
        assert isinstance(json.loads(closed), dict)


def test_a_pov_the_tools_would_reject_gives_way_before_they_run(project):
    from novel_agent.story.memory.read import load_memory
    from tests.support.scripted import ScriptedModel
    from tests.support.ticking import run_ticks
    plan = {"title": "HM The Lighthouse Keeper", "intention": "The keeper walks the shore.",
            "pov": "In the past", "location": "the shore", "characters": ["In the past"],
            "tool_calls": []}                     # SmolLM2-135M's answer, near enough
    (result,) = run_ticks(project, 1, ScriptedModel().add("planner", plan), offline_seed=0)
    assert result.plan.pov == "Mara Quill"
    assert load_memory(project.memory_dir).find_character("In the past") is None
    assert any(w.startswith("the planner's POV 'In the past' is not a name (a common noun")
               for w in result.warnings), result.warnings
