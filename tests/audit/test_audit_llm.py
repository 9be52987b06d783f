"""The LLM auditor: quotes verified against the draft, through the real SDK and the test
server; a malformed or empty answer is a note, never a lost tick."""

from __future__ import annotations

import json

from novel_agent.audit.llm import findings_from_json, verify
from novel_agent.files import read_yaml
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.responders import story_responder
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

PROSE = ("The lamp room smelled of paraffin. Mara Quill turned the stranger's map toward the "
         "light and found her own stairs drawn on it, and a door she had never seen.")
IN_DRAFT = {"subtype": "appearance", "severity": "major",
            "quote": "Mara Quill turned the stranger’s map toward the light",
            "against": "Scene 1: the map was burned", "message": "the map was burned"}
NOT_IN_DRAFT = {"subtype": "tone", "severity": "minor", "quote": "She laughed like a gull.",
                "against": "Mara never laughs", "message": "out of character"}


def auditor_responder(answer):
    def respond(body):
        if "contradictions with what the story has established" in body["messages"][0]["content"]:
            return answer if isinstance(answer, str) else json.dumps(answer)
        return story_responder(body)
    return respond


def enable(project_dir):
    path = project_dir / "project.yaml"
    path.write_text(path.read_text() + "audit:\n  llm: true\n")


def tick(server):
    return invoke("tick", "-p", "harbour", "--base-url", server.base_url,
                  "--model", "gpt-4o-mini")


def test_findings_are_kept_only_with_a_quote_from_the_draft(openai_project):
    enable(openai_project)
    answer = {"findings": [IN_DRAFT, NOT_IN_DRAFT]}
    with FakeOpenAIServer(auditor_responder(answer)) as server:
        result = tick(server)
    assert result.exit_code == 0, result.output
    chats = [r["json"] for r in server.requests if r["path"].endswith("/chat/completions")]
    audit_req = chats[-1]
    assert audit_req["response_format"]["json_schema"]["schema"]["required"] == ["findings"]
    assert PROSE in audit_req["messages"][-1]["content"]
    assert "  audit " in result.output                 # its stage line: one call
    assert ("  audit: [major] appearance: the map was burned — \"Mara Quill turned the "
            "stranger’s map toward the light\" vs \"Scene 1: the map was burned\"") in result.output
    assert ("note: 1 of the auditor's findings had no quote from the draft and were "
            "discarded") in result.output
    record = read_yaml(openai_project / "plans" / "plan_001.yaml")["audit"]
    assert record["discarded"] == 1 and [f["source"] for f in record["findings"]] == ["llm"]


def test_a_malformed_then_empty_auditor_answer_is_a_note_and_the_scene_lands(openai_project):
    enable(openai_project)
    with FakeOpenAIServer(auditor_responder("I found nothing wrong, really!")) as server:
        result = tick(server)
    assert result.exit_code == 0, result.output
    assert (openai_project / "scenes" / "scene_001.md").is_file()
    assert "note: the auditor's answer could not be used" in result.output
    audits = [r for r in server.requests if r["path"].endswith("/chat/completions")
              and "contradictions" in r["json"]["messages"][0]["content"]]
    assert len(audits) == 2                           # asked once more, then a note


def test_an_empty_or_broken_answer_from_a_scripted_auditor_never_loses_a_tick(project):
    text = project.project_file.read_text()
    project.project_file.write_text(text + "audit:\n  llm: true\n")
    model = ScriptedModel().add("auditor", "").add("auditor", {"verdict": "fine"})
    (first,) = run_ticks(project, 1, model, offline_seed=0)
    assert project.tick() == 1 and first.findings == []
    assert any("the auditor's answer could not be used" in n for n in first.notices)
    model = ScriptedModel().add("auditor", {"findings": []})     # an empty list: no finding
    (second,) = run_ticks(project, 1, model, offline_seed=0)
    assert second.findings == [] and project.tick() == 2
    assert not any("auditor" in n for n in second.notices)


def test_verify_evens_out_typography_and_unknown_labels():
    raw = findings_from_json({"findings": [{**IN_DRAFT, "subtype": "vibes", "severity": "huge"},
                                           {**IN_DRAFT, "against": ""}, "junk"]})
    checked = verify(raw, PROSE, tick=3)
    assert checked.discarded == 1
    (f,) = checked.findings
    assert (f.subtype, f.severity, f.scene, f.kind) == ("style", "minor", 3, "llm")


def test_an_auditor_finding_carries_the_scene_it_contradicts(project):
    from tests.support.audit_cases import BAD, DIES, PLAN1, PLAN2, PROSE1, extraction

    text = project.project_file.read_text()
    project.project_file.write_text(text + "audit:\n  llm: true\n")
    dead = {**DIES, "facts": ["Tobin died in the river by the weir"]}
    said = {"subtype": "causal logic", "severity": "critical",
            "quote": "Tobin laughed and poured the tea for Mara.",
            "against": "Tobin died in the river by the weir", "message": "a dead man pours tea"}
    model = (ScriptedModel().add("planner", PLAN1).add("writer", PROSE1).add("extractor", dead)
             .add("auditor", {"findings": []})
             .add("planner", PLAN2).add("writer", BAD)
             .add("extractor", extraction(["Mara Quill", "Tobin Keel"]))
             .add("auditor", {"findings": [said]}))
    _, second = run_ticks(project, 2, model, offline_seed=0)
    (llm,) = [f for f in second.findings if f.source == "llm"]
    assert llm.against_scene == 1
    saved = read_yaml(project.plan_path(2))["audit"]["findings"]
    assert [f["against_scene"] for f in saved if f["source"] == "llm"] == [1]


def test_against_scene_is_the_one_named_else_the_fact_or_scene_stated():
    facts = [{"text": "The map was burned in the stove", "scene": 2}]
    scenes = [(4, "Mara sails to the mainland and sells the lamp.")]
    raw = findings_from_json({"findings": [
        {**IN_DRAFT, "against": "the map was burned in the stove"},
        {**IN_DRAFT, "against": "Scene 3: the map was lost"},
        {**IN_DRAFT, "against": "she sold the lamp on the mainland", "against_scene": 4},
        {**IN_DRAFT, "against": "Mara sold the lamp on the mainland"},
        {**IN_DRAFT, "against": "the map was burned", "against_scene": 9},   # not before: looked up
        {**IN_DRAFT, "against": "nothing we were shown"}]})
    checked = verify(raw, PROSE, tick=5, facts=facts, scenes=scenes)
    assert [f.against_scene for f in checked.findings] == [2, 3, 4, 4, 2, 0]
