"""`novel revise N` of a scene of a book with an outline: the extractor, asked as the tick
asked it (the same prompt and schema, its planned beat named), reads the beat's status
and the scene's tension from the new text, and the scene says them; the author's comments
in the outline and in the memory files it writes over are kept."""

from __future__ import annotations

import yaml

from novel_agent.history.hooks import opened
from novel_agent.models.offline import OfflineModel
from novel_agent.revision.revise import revise
from novel_agent.story.scenes import load_scene
from novel_agent.tick.session import Session
from tests.support.projects import annotate, comments_of, outline_project
from tests.support.scripted import ScriptedModel
from tests.support.ticking import NOW, run_ticks

NEW2 = ("Mara left the map in the drawer and went down to the harbour, where nothing at all "
        "happened that evening, and the boats lay still under a quiet sky.")


def test_revise_rereads_the_beat_status_and_the_tension_from_the_new_text(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    run_ticks(project, 3)
    before = load_scene(project.scene_path(2))
    assert (before.chapter, before.beat, before.beat_status) == (1, "1.2", "done")
    model = ScriptedModel(otherwise=OfflineModel(seed=0))
    model.add("extractor", {"summary": ["Mara leaves the map.", "She walks to the harbour.",
                                        "Nothing happens."],
                            "facts": [], "characters": [], "loops_opened": [],
                            "loops_resolved": [], "relationships": [],
                            "beat_status": "not", "tension": 1,
                            "tension_reason": "A quiet evening."})
    project.scene_path(2).write_text(before.render().replace(before.body, NEW2))
    with opened(project), Session.open(project, project.config(), make_model=lambda: model,
                                       now=lambda: NOW) as session:
        revise(session, 2)
    (asked,) = model.calls("extractor")
    assert {"beat_status", "tension", "tension_reason"} <= set(asked.json_schema["required"])
    assert "Beat 1.2 of the outline, which this scene was meant to advance: Beat 2 of " \
           "chapter 1 happens." in asked.messages[-1]["content"]
    after = load_scene(project.scene_path(2))
    assert (after.chapter, after.beat, after.beat_status, after.tension, after.tension_reason) \
        == (1, "1.2", "not", 1, "A quiet evening.")
    assert after.body == NEW2
    assert "beat_status: not" in (project.plans_dir / "plan_002.yaml").read_text()


def test_revise_keeps_the_authors_comments_in_the_outline_and_in_memory(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    run_ticks(project, 3)
    said = annotate(project.outline_file)
    mara = project.memory_dir / "characters" / "mara_quill.yaml"
    hers, was = annotate(mara), yaml.safe_load(mara.read_text())
    before = load_scene(project.scene_path(3))
    model = ScriptedModel(otherwise=OfflineModel(seed=0))
    model.add("extractor", {"summary": ["Mara leaves the map.", "She walks to the harbour.",
                                        "Nothing happens."],
                            "facts": [], "loops_opened": [], "loops_resolved": [],
                            "relationships": [], "beat_status": "not", "tension": 1,
                            "tension_reason": "A quiet evening.",
                            "characters": [{"name": "Mara Quill", "state": "left the map",
                                            "traits": ["restless"]}]})
    project.scene_path(3).write_text(before.render().replace(before.body, NEW2))
    with opened(project), Session.open(project, project.config(), make_model=lambda: model,
                                       now=lambda: NOW) as session:
        revise(session, 3)
    assert yaml.safe_load(mara.read_text()) != was
    assert comments_of(mara) == hers and comments_of(project.outline_file) == said
