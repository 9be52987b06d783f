"""A tick that fails leaves the project as it was (and keeps the draft prose)."""

from __future__ import annotations

import pytest

from novel_agent.errors import DamagedBookError, ModelError, TickError
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

PLAN = {"title": "T", "intention": "Mara climbs the tower.", "pov": "Mara Quill",
        "location": "The tower", "characters": ["Mara Quill"], "tool_calls": []}


def run(project, model=None):
    """One tick: `model` answers what it has queued, the offline model the rest."""
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    return result


def test_garbage_plan_is_repaired_once(project):
    model = ScriptedModel().add("planner", "I think the scene should be nice.").add("planner", PLAN)
    result = run(project, model)
    assert result.plan.intention == "Mara climbs the tower."
    repair = model.calls("planner")[1].messages
    assert "could not be used" in repair[-1]["content"]
    assert repair[-2] == {"role": "assistant", "content": "I think the scene should be nice."}


def test_garbage_twice_fails_cleanly(project, snapshot):
    before = snapshot(project.root)
    model = ScriptedModel().add("planner", "nope").add("planner", {"pov": ""})
    with pytest.raises(TickError, match="planner") as info:
        run(project, model)
    assert "after one repair attempt" in str(info.value)
    assert snapshot(project.root) == before


def test_extraction_garbage_twice_lands_the_scene_summed_up_by_its_own_sentences(project):
    prose = ("Mara climbed the tower at dusk. The lamp was cold. She found the map. "
             "Below, the sea kept its counsel.")
    digits = {"summary": ["2017.03.12 2017.03.12 2017.03.12"], "facts": [], "characters": [],
              "loops_opened": [], "loops_resolved": [], "relationships": []}
    model = (ScriptedModel().add("planner", PLAN).add("writer", prose)
             .add("extractor", digits).add("extractor", "I cannot."))
    result = run(project, model)
    assert result.extraction.summary == ["Mara climbed the tower at dusk.", "The lamp was cold.",
                                         "Below, the sea kept its counsel."]
    assert any("extractor's answer could not be used" in n for n in result.notices)
    assert result.memory_changes == [] and len(model.calls("extractor")) == 2
    record = project.plan_path(1).read_text()
    assert "extraction_fallback:" in record and "after one repair attempt" in record
    assert project.tick() == 1


def test_failed_extraction_keeps_the_draft_and_commits_nothing(project, snapshot):
    before = snapshot(project.root)
    model = (ScriptedModel().add("planner", PLAN).add("writer", "The tower was cold.")
             .fail("extractor", ModelError("server exploded", stage="extractor")))
    with pytest.raises(TickError) as info:
        run(project, model)
    assert info.value.stage == "extractor"
    draft = project.drafts_dir / "draft_001.md"
    assert draft.read_text().strip() == "The tower was cold."
    after = snapshot(project.root)
    after.pop(".novel/drafts/draft_001.md")
    assert after == before
    assert project.tick() == 0


def test_writer_failure_names_the_stage(project):
    cause = ModelError("timed out after 5s", status=504)
    model = ScriptedModel().add("planner", PLAN).fail("writer", cause)
    with pytest.raises(TickError, match="tick 1 failed in writer: timed out") as info:
        run(project, model)
    assert info.value.stage == "writer" and info.value.draft_path is None
    assert info.value.__cause__ is cause and info.value.status == 504
    assert project.tick() == 0


def test_hand_broken_scene_front_matter_is_a_clear_error(project, snapshot):
    run(project)
    path = project.scene_path(1)
    path.write_text("---\ntick: [1\n---\nprose\n")
    before = snapshot(project.root)
    with pytest.raises(DamagedBookError) as info:
        run(project)
    # the unclosed list runs into the closing "---": named where it opened, on line 2
    assert f"tick 2 cannot start: {path}:2: " in str(info.value)
    assert "run `novel doctor --fix`" in str(info.value)
    assert snapshot(project.root) == before


def test_second_process_cannot_tick_a_locked_project(project):
    from novel_agent.errors import LockError
    from novel_agent.story.project.folder import Project
    from novel_agent.story.project.recovery import reconciled
    with reconciled(project):
        other = Project(project.root)
        with pytest.raises(LockError, match="busy"):
            other.acquire_lock()
