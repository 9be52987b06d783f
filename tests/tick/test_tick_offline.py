"""Ticks on the offline model: what lands on disk is what the stages produced."""

from __future__ import annotations

import json

import yaml

from novel_agent.files import read_front_matter
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import slug
from novel_agent.story.scenes import load_scene, word_count
from novel_agent.tick.prompt_log import log_path
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks


def test_three_ticks_write_scenes_plans_memory(project):
    model, seed = ScriptedModel(), 7
    results = run_ticks(project, 3, model, offline_seed=seed)
    assert [r.tick for r in results] == [1, 2, 3]
    assert project.tick() == 3
    for r in results:
        meta, body = read_front_matter(r.scene_path)
        assert meta["tick"] == r.tick
        assert meta["pov"] == r.plan.pov and meta["location"] == r.plan.location
        assert meta["summary"] == r.extraction.summary and len(meta["summary"]) >= 3
        assert meta["characters"] == r.plan.characters
        assert meta["words"] == word_count(body) > 100
        assert body == r.scene_path.read_text().split("---\n", 2)[2].strip()
        plan = yaml.safe_load(r.plan_path.read_text())
        assert plan["intention"] == r.plan.intention
        assert plan["tool_results"] == r.tool_results
        assert plan["extraction"]["summary"] == r.extraction.summary
    memory = load_memory(project.memory_dir)
    povs = {r.plan.pov for r in results}
    for pov in povs:
        assert memory.find_character(pov) is not None, pov
    for r in results:
        assert memory.find_location(r.plan.location) is not None, r.plan.location
    assert memory.loops and memory.facts
    assert {f["scene"] for f in memory.facts} <= {1, 2, 3}
    # the plan's tool calls really changed memory files
    created = [c.name for r in results for c in r.plan.tool_calls if c.tool == "create_character"]
    assert created
    for name in created:
        assert (project.memory_dir / "characters" / f"{slug(name)}.yaml").is_file()
        assert memory.find_character(name)["first_seen"] in (1, 2, 3)


def test_fourth_tick_sees_the_earlier_scenes(project):
    model, seed = ScriptedModel(), 1
    first = run_ticks(project, 3, model, offline_seed=seed)
    model.requests.clear()
    run_ticks(project, 1, model, offline_seed=seed)
    writer_prompt = model.calls("writer")[0].messages[-1]["content"]
    scene3 = load_scene(first[2].scene_path)
    scene2 = load_scene(first[1].scene_path)
    scene1 = load_scene(first[0].scene_path)
    # three ~300-word scenes fit the tier-1 share of a 32k window: all in full
    for scene in (scene1, scene2, scene3):
        assert scene.body in writer_prompt
    planner_prompt = model.calls("planner")[0].messages[-1]["content"]
    assert scene3.summary[0] in planner_prompt
    assert "A lighthouse keeper finds a drowned man's map." in planner_prompt


def test_small_window_sends_older_scenes_as_summaries(project):
    project.project_file.write_text(project.project_file.read_text()
                                    + "context:\n  window: 5000\n")
    model, seed = ScriptedModel(), 1
    first = run_ticks(project, 4, model, offline_seed=seed)
    model.requests.clear()
    (fifth,) = run_ticks(project, 1, model, offline_seed=seed)
    writer_prompt = model.calls("writer")[0].messages[-1]["content"]
    report = fifth.reports["writer"]
    full = next(s for s in report["sections"] if s["name"] == "recent_full")["items"]
    summarized = next(s for s in report["sections"] if s["name"] == "recent_summaries")["items"]
    assert full and full[-1] == "scene_004" and "scene_001" not in full
    assert summarized and set(summarized).isdisjoint(full)
    for r in first:
        scene = load_scene(r.scene_path)
        key = f"scene_{scene.tick:03d}"
        assert (scene.body in writer_prompt) == (key in full)
        if key in summarized:
            assert scene.summary[0] in writer_prompt
    assert report["tokens"] <= report["budget"]
    log = log_path(project, 5, "writer")
    assert json.loads(log.read_text())["tokens"] == report["tokens"]


def test_offline_model_is_deterministic_and_follows_the_story(projects_dir):
    from novel_agent.story.project.folder import create_project
    texts = []
    for name in ("a", "b"):
        p = create_project(projects_dir / name, {"name": "same", "premise": "x"},
                           config={"llm": {"provider": "offline"}})
        texts.append([r.scene_path.read_text() for r in run_ticks(p, 2, offline_seed=3)])
    assert texts[0] == texts[1]
    assert texts[0][0].split("---", 2)[2] != texts[0][1].split("---", 2)[2]


def test_a_hand_edited_character_reaches_the_next_prompt(project):
    model, seed = ScriptedModel(), 2
    (first,) = run_ticks(project, 1, model, offline_seed=seed)
    pov = load_memory(project.memory_dir).find_character(first.plan.pov)
    path = project.memory_dir / "characters" / f"{pov['id']}.yaml"
    data = yaml.safe_load(path.read_text())
    data["traits"] = ["afraid of deep water"]
    path.write_text(yaml.safe_dump(data))
    run_ticks(project, 1, model, offline_seed=seed)
    assert "afraid of deep water" in model.calls("planner")[-1].messages[-1]["content"]


def test_a_hand_edit_between_two_ticks_of_one_session_reaches_the_next_prompt(project):
    """A session keeps memory from one tick to the next (story/memory/kept.py) and still
    sees a character's file edited in place between them."""
    from novel_agent.models.offline import OfflineModel
    from novel_agent.story.project.recovery import reconciled
    from novel_agent.tick.pipeline import tick
    from novel_agent.tick.session import Session
    model = ScriptedModel()

    def make():
        model.otherwise = OfflineModel(seed=2)
        return model
    with reconciled(project), Session.open(project, project.config(), make_model=make) as session:
        first = tick(session)
        pov = load_memory(project.memory_dir).find_character(first.plan.pov)
        path = project.memory_dir / "characters" / f"{pov['id']}.yaml"
        inode = path.stat().st_ino
        with path.open("r+") as handle:                  # in place, as an editor may
            data = yaml.safe_load(handle)
            data["traits"] = ["afraid of deep water"]
            handle.seek(0)
            handle.truncate()
            handle.write(yaml.safe_dump(data))
        assert path.stat().st_ino == inode
        tick(session)
        assert session.memory.whole_reads == 1
    assert "afraid of deep water" in model.calls("planner")[-1].messages[-1]["content"]


def test_disabled_fact_extraction_records_no_facts(project):
    project.project_file.write_text(project.project_file.read_text()
                                    + "generation:\n  enable_fact_extraction: false\n")
    run_ticks(project, 2)
    assert load_memory(project.memory_dir).facts == []


def test_steer_note_reaches_planner_and_writer(project):
    project.steer_file.write_text("Make it snow.")
    model = ScriptedModel()
    run_ticks(project, 1, model, offline_seed=0)
    assert "Make it snow." in model.calls("planner")[0].messages[-1]["content"]
    assert "Make it snow." in model.calls("writer")[0].messages[-1]["content"]


def test_project_template_overrides_the_packaged_one(project):
    project.templates_dir.mkdir()
    (project.templates_dir / "write.j2").write_text(
        "{% set system %}Write like a sailor.{% endset %}Scene {{ tick }}, please.")
    model = ScriptedModel()
    run_ticks(project, 1, model, offline_seed=0)
    messages = model.calls("writer")[0].messages
    assert messages[0] == {"role": "system", "content": "Write like a sailor."}
    assert messages[1]["content"] == "Scene 1, please."


def test_a_session_freezes_what_outlives_its_ticks_from_the_second_on(project):
    """Python's full collections walk every tracked object: memory's parse cache and the
    indexes grow with the book, so a session of many ticks freezes what outlives them
    (after a collection, so no garbage is frozen) from its second tick on, every
    FREEZE_EVERY, and leaves it to the collector again when it closes; a command that
    lands one tick pays nothing."""
    import gc

    from novel_agent.models.offline import OfflineModel
    from novel_agent.tick.pipeline import tick
    from novel_agent.tick.session import Session
    gc.unfreeze()
    with Session.open(project, project.config(),
                      make_model=lambda: OfflineModel(seed=0)) as session:
        tick(session)
        assert gc.get_freeze_count() == 0
        tick(session)
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
