"""The audit between write and commit: report, revise, hold and off, through the pipeline."""

from __future__ import annotations

import pytest

from novel_agent.audit.held import read_held
from novel_agent.audit.policy import verdict
from novel_agent.errors import AuditHoldError, ModelError
from novel_agent.files import read_yaml
from novel_agent.story.memory.read import load_memory
from tests.support.audit_cases import BAD, GOOD, PLAN2, book, configured, extraction
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks


def test_report_lands_the_scene_and_saves_the_findings_with_the_tick(project):
    model = book(ScriptedModel()).add("writer", BAD).add("extractor",
                                                          extraction(["Mara Quill", "Tobin Keel"]))
    first, second = run_ticks(project, 2, model, offline_seed=0)
    assert first.findings == []
    assert [f.kind for f in second.findings] == ["dead_or_absent"]
    assert project.tick() == 2
    record = read_yaml(project.plan_path(2))
    assert record["audit"]["mode"] == "report"
    saved = record["audit"]["findings"][0]
    assert saved["subtype"] == "causal logic" and saved["severity"] == "critical"
    assert saved["quote"] == "Tobin laughed and poured the tea for Mara."
    assert saved["against"] == "Tobin Keel is dead: drowned at the weir"
    tobin = load_memory(project.memory_dir).find_character("Tobin Keel")
    assert (tobin["status"], tobin["status_in"]) == ("dead", 1)     # in his file


def test_revise_keeps_a_revision_that_is_better_and_says_so(project):
    config = configured(project, mode="revise")
    model = (book(ScriptedModel()).add("writer", BAD)
             .add("extractor", extraction(["Mara Quill", "Tobin Keel"]))
             .add("writer", GOOD).add("extractor", extraction(["Mara Quill"])))
    _, second = run_ticks(project, 2, model, offline_seed=0, config=config)
    assert second.findings == []
    assert "the revision was kept: causal logic got better (1 → 0 findings)" in second.notices
    assert "poured the tea alone" in project.scene_path(2).read_text()
    ask = model.calls("writer")[-1].messages[-1]["content"]
    assert "Tobin laughed and poured the tea for Mara." in ask and "dead since scene 1" in ask
    assert read_yaml(project.plan_path(2))["extraction"]["present"] == ["Mara Quill"]


def test_revise_drops_a_revision_that_is_no_better(project):
    config = configured(project, mode="revise")
    model = (book(ScriptedModel()).add("writer", BAD)
             .add("extractor", extraction(["Mara Quill", "Tobin Keel"]))
             .add("writer", BAD + " Tobin sang.")
             .add("extractor", extraction(["Mara Quill", "Tobin Keel"])))
    _, second = run_ticks(project, 2, model, offline_seed=0, config=config)
    assert [f.kind for f in second.findings] == ["dead_or_absent"]
    assert any(n.startswith("the revision was dropped: no finding got better") for n in second.notices)
    assert "Tobin sang" not in project.scene_path(2).read_text()


def test_revise_whose_writer_fails_keeps_the_first_draft(project):
    config = configured(project, mode="revise")
    model = (book(ScriptedModel()).add("writer", BAD)
             .add("extractor", extraction(["Mara Quill", "Tobin Keel"]))
             .fail("writer", ModelError("server exploded")))
    _, second = run_ticks(project, 2, model, offline_seed=0, config=config)
    assert project.tick() == 2 and len(second.findings) == 1
    assert any("the revision failed (server exploded)" in n for n in second.notices)


def test_verdict_names_what_got_worse():
    from novel_agent.audit.findings import Finding
    a = Finding("dead_or_absent", "causal logic", "critical", 2, "q", "a")
    b = Finding("nomenclature", "nomenclature", "minor", 2, "q", "a")
    assert verdict([a], [b]) == (False, "the revision was dropped: nomenclature got worse "
                                        "(1 → 1 findings); the first draft stands")
    assert verdict([a, b], [b])[0] is True


def test_hold_commits_nothing_and_waits_for_the_author(project, snapshot, cli):
    config = configured(project, mode="hold")
    run_ticks(project, 1, book(ScriptedModel()), offline_seed=0, config=config)
    before = snapshot(project.root)
    model = ScriptedModel().add("planner", PLAN2).add("writer", BAD).add(
        "extractor", extraction(["Mara Quill", "Tobin Keel"]))
    with pytest.raises(AuditHoldError) as info:
        run_ticks(project, 1, model, offline_seed=0, config=config)
    assert info.value.exit_code == 5 and info.value.tick == 2
    assert "Tobin Keel acts or speaks, dead since scene 1" in info.value.findings[0]
    assert project.tick() == 1
    after = snapshot(project.root)
    assert sorted(set(after) - set(before)) == [".novel/drafts/draft_002.md", ".novel/held.yaml"]
    assert {k: v for k, v in after.items() if k in before} == before
    data, findings = read_held(project.novel_dir)
    assert data["tick"] == 2 and findings[0].kind == "dead_or_absent"
    status = cli("status", "-p", "harbour").output
    assert 'held        tick 2 "Tea" by the continuity audit: 1 finding(s)' in status
    assert "(`novel audit accept` lands it, `novel audit drop` discards it)" in status
    assert "Tobin laughed and poured the tea for Mara." in status
    fixed = ScriptedModel().add("planner", PLAN2).add("writer", GOOD).add(
        "extractor", extraction(["Mara Quill"]))
    with pytest.raises(AuditHoldError) as again:     # the next tick does not write over it
        run_ticks(project, 1, fixed, offline_seed=0, config=config)
    assert "novel audit accept` lands it as it is" in str(again.value)
    assert snapshot(project.root) == after and fixed.calls("planner") == []
    assert cli("audit", "drop", "-p", "harbour").output == (
        "dropped the held tick 2 \"Tea\" of harbour; the next tick writes it again\n")
    assert sorted(set(snapshot(project.root)) ^ set(before)) == []
    run_ticks(project, 1, fixed, offline_seed=0, config=config)
    assert project.tick() == 2 and read_held(project.novel_dir) is None
    assert "held" not in cli("status", "-p", "harbour").output


def test_off_checks_nothing_but_still_records_the_knowledge(project):
    config = configured(project, mode="off")
    model = book(ScriptedModel()).add("writer", BAD).add("extractor",
                                                          extraction(["Mara Quill", "Tobin Keel"]))
    _, second = run_ticks(project, 2, model, offline_seed=0, config=config)
    assert second.findings == [] and "audit" not in read_yaml(project.plan_path(2))
    assert load_memory(project.memory_dir).find_character("Tobin Keel")["status"] == "dead"


def test_a_tick_in_the_cli_shows_its_findings(project, cli, monkeypatch):
    from novel_agent.audit.findings import Finding
    from novel_agent.tick.stages import audit as audit_stage

    found = Finding("nomenclature", "nomenclature", "minor", 1, "Tobin Keell nodded.",
                    "Tobin Keel", 1, "'Tobin Keell' is a variant of 'Tobin Keel'")
    monkeypatch.setattr(audit_stage, "check", lambda scene: [found])
    out = cli("tick", "-p", "harbour").output
    assert ("  audit: [minor] nomenclature: 'Tobin Keell' is a variant of 'Tobin Keel' — "
            "\"Tobin Keell nodded.\" vs \"Tobin Keel\" (scene 1)\n") in out
    assert read_yaml(project.plan_path(1))["audit"]["findings"] == [found.to_dict()]


def test_the_daemon_stops_on_a_hold_with_exit_5(project):
    from tests.support.daemon_script import make

    hold = AuditHoldError("tick 1 is held", tick=1, findings=["x"])
    daemon, _, _, events = make(project, [hold])
    summary = daemon.run()
    assert (summary.exit_code, summary.ticks, summary.reason) == (5, 0, "tick 1 is held")
    assert [e.kind for e in events][-1] == "held"


def test_the_writer_is_told_what_the_pov_does_not_know(tmp_path, projects_dir):
    from novel_agent.files import dump_yaml
    from novel_agent.story.project.folder import create_project
    from tests.support.planted import plant, write_planted, writer_prompt

    project = create_project(projects_dir / "isle", {"name": "isle", "premise": "An island.",
                                                     "protagonist": "Mara Quill"},
                             config={"llm": {"provider": "offline"}})
    probes = plant(120, 4)
    write_planted(project, 120, probes)
    probe = probes[0]
    who = probe.plan.pov.split()[0]
    facts = read_yaml(project.memory_dir / "facts.yaml")["facts"]
    for fact in facts:
        if fact["text"] == probe.fact:
            fact["witnesses"] = ["Someone Else"]
    (project.memory_dir / "facts.yaml").write_text(dump_yaml({"facts": facts}))
    prompt, _ = writer_prompt(project, probe.plan)
    assert f"{who} does not know (scene {probe.planted_at}): {probe.fact}" in prompt
    for fact in facts:
        if fact["text"] == probe.fact:
            fact["witnesses"] = ["Someone Else", probe.plan.pov]     # a hand edit: now told
    (project.memory_dir / "facts.yaml").write_text(dump_yaml({"facts": facts}))
    prompt, _ = writer_prompt(project, probe.plan)
    assert f"Fact (scene {probe.planted_at}): {probe.fact}" in prompt
    assert "does not know" not in prompt


def test_a_held_tick_in_the_cli_exits_5_with_its_findings(project, cli):
    configured(project, mode="hold")
    run_ticks(project, 1, book(ScriptedModel()), offline_seed=0)
    import novel_agent.tick.stages.audit as audit_stage
    from novel_agent.audit.findings import Finding

    found = Finding("dead_or_absent", "causal logic", "critical", 2, "Tobin laughed.",
                    "Tobin Keel is dead: drowned at the weir", 1,
                    "Tobin Keel acts or speaks, dead since scene 1")
    original = audit_stage.check
    audit_stage.check = lambda scene: [found]
    try:
        result = cli("tick", "-p", "harbour", ok=False)
    finally:
        audit_stage.check = original
    assert result.exit_code == 5
    assert "tick 2 is held by the continuity audit (audit.mode: hold)" in result.output
    assert ("  [critical] causal logic: Tobin Keel acts or speaks, dead since scene 1 — "
            "\"Tobin laughed.\"") in result.output
    assert project.tick() == 1


def held_tick_two(project):
    """Scene 1 (Tobin drowns), then tick 2 held on a dead man pouring tea."""
    config = configured(project, mode="hold")
    run_ticks(project, 1, book(ScriptedModel()), offline_seed=0, config=config)
    model = ScriptedModel().add("planner", {**PLAN2, "tool_calls": [
        {"tool": "create_character", "name": "Ilse Varga", "detail": "the harbour pilot"}]}) \
        .add("writer", BAD).add("extractor", extraction(
            ["Mara Quill", "Tobin Keel"], facts=["Mara keeps a second teapot for guests"],
            where=[{"name": "Mara Quill", "place": "the weir"}]))
    with pytest.raises(AuditHoldError):
        run_ticks(project, 1, model, offline_seed=0, config=config)
    return config


def test_a_held_tick_is_accepted_as_it_was_held_with_no_model_called(project, cli):
    from novel_agent.story.project.recovery import reconciled
    from novel_agent.tick.pipeline import land_held
    from novel_agent.tick.session import Session

    config = held_tick_two(project)
    silent = ScriptedModel()            # nothing queued: any call would fail the accept
    with reconciled(project), Session.open(project, config, make_model=lambda: silent) as s:
        result = land_held(s)
    assert silent.calls("planner") == silent.calls("writer") == silent.calls("extractor") == []
    assert result.tick == 2 and project.tick() == 2 and read_held(project.novel_dir) is None
    assert project.scene_path(2).read_text().count("Tobin laughed and poured the tea") == 3
    assert not (project.drafts_dir / "draft_002.md").exists()
    record = read_yaml(project.plan_path(2))
    assert record["title"] == "Tea" and record["extraction"]["present"] == ["Mara Quill",
                                                                           "Tobin Keel"]
    assert record["audit"]["mode"] == "hold" and [f["kind"] for f in
                                                  record["audit"]["findings"]] == ["dead_or_absent"]
    assert record["audit"]["notes"] == ["held by the continuity audit, then accepted as it was "
                                        "(novel audit accept)"]
    memory = load_memory(project.memory_dir)
    assert memory.find_character("Ilse Varga") is not None          # the plan's tool, again
    assert {"text": "Mara keeps a second teapot for guests", "scene": 2,
            "witnesses": ["Mara Quill", "Tobin Keel"]} in memory.facts
    assert (memory.find_character("Mara Quill")["place"],
            memory.find_character("Mara Quill")["place_in"]) == ("the weir", 2)
    assert "tick 3 of harbour" in cli("tick", "-p", "harbour").output


def test_accept_and_drop_through_the_cli(project, cli):
    held_tick_two(project)
    refused = cli("tick", "-p", "harbour", ok=False)
    assert refused.exit_code == 5 and "tick 2 is held by the continuity audit" in refused.output
    assert "`novel audit accept` lands it as it is" in refused.output and project.tick() == 1
    draft = project.drafts_dir / "draft_002.md"
    draft.write_text(draft.read_text().replace("Tobin laughed", "Tobin wept"))
    edited = cli("audit", "accept", "-p", "harbour", ok=False)
    assert "was edited after it was held" in edited.output and project.tick() == 1
    draft.write_text(draft.read_text().replace("Tobin wept", "Tobin laughed"))
    out = cli("audit", "accept", "-p", "harbour").output
    assert "tick 2 of harbour accepted: harbour/scenes/scene_002.md" in out
    assert "  audit: [critical] causal logic: Tobin Keel acts or speaks" in out
    assert project.tick() == 2
    none = cli("audit", "drop", "-p", "harbour", ok=False)
    assert "harbour has no tick held by the continuity audit" in none.output
    assert "no tick is held" in cli("audit", "accept", "-p", "harbour", ok=False).output


def test_tick_drop_held_writes_the_held_tick_again(project, cli):
    held_tick_two(project)
    out = cli("tick", "-p", "harbour", "--drop-held").output
    assert out.splitlines()[0] == "dropped the held tick 2"
    assert "tick 2 of harbour" in out and project.tick() == 2
    assert read_held(project.novel_dir) is None
    assert "Tobin laughed" not in project.scene_path(2).read_text()   # written again (offline)
