"""Ticks that follow the outline: each scene records its chapter, the beat its plan
advanced, whether it happened and its tension; the beats land in order and the book ends
at its last one; a model that ignores the outline still ends by the stretch rule; garbage
is corrected, never a crash; and a book without an outline is asked nothing of it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from novel_agent.errors import BookFinishedError
from novel_agent.models.offline import OfflineModel
from novel_agent.models.providers import LOCAL
from novel_agent.story.decisions import EXTRACT_SCHEMA, plan_schema
from novel_agent.story.outline.file import load_outline, save_outline
from novel_agent.story.outline.position import longest
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scenes
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.projects import outline_project, short_outline
from tests.support.scripted import ScriptedModel
from tests.support.stress_model import StressModel
from tests.support.ticking import NOW, run_ticks

OUTLINE_KEYS = ("chapter", "beat", "beat_status", "tension", "tension_reason")


def tick_to_the_end(project, make_model, limit: int = 60):
    """Tick until the book is finished (BookFinishedError), at most `limit` ticks."""
    results = []
    with reconciled(project), Session.open(project, project.config(), make_model=make_model,
                                           now=lambda: NOW) as session:
        for _ in range(limit):
            try:
                results.append(tick(session))
            except BookFinishedError as exc:
                return results, exc
    raise AssertionError(f"the book did not end in {limit} ticks")


def test_an_offline_book_lands_its_beats_in_order_and_ends_at_the_last(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    results, stop = tick_to_the_end(project, lambda: OfflineModel())
    scenes = load_scenes(project.scenes_dir)
    assert [(s.chapter, s.beat, s.beat_status) for s in scenes] == [
        (1, "1.1", "done"), (1, "1.2", "done"), (2, "2.1", "done"), (2, "2.2", "done"),
        (3, "3.1", "done"), (3, "3.2", "done")]
    assert all(s.tension is not None and s.tension_reason for s in scenes)
    assert [r.finished for r in results][:-1] == [""] * 5
    words = sum(s.words for s in scenes)
    assert results[-1].finished == f"the book is finished: 3 chapters, 6 scenes, {words:,} words"
    assert str(stop) == (f"the book is finished: 3 chapters, 6 scenes, {words:,} words; extend "
                         "the outline (novel outline edit, or novel outline regen) to go on")
    assert stop.exit_code == 6 and (stop.chapters, stop.scenes, stop.words) == (3, 6, words)
    plan = (project.plans_dir / "plan_003.yaml").read_text()
    assert "beat: '2.1'" in plan and "beat_status: done" in plan


def test_extending_the_outline_lets_the_book_go_on(project):
    outline_project(project, chapters=2, beats=1, scenes=1)
    tick_to_the_end(project, lambda: OfflineModel())
    save_outline(project.outline_file, short_outline(chapters=3, beats=1, scenes=1))
    results, _ = tick_to_the_end(project, lambda: OfflineModel())
    assert [r.tick for r in results] == [3]
    assert load_scenes(project.scenes_dir)[-1].beat == "3.1"


def test_a_model_that_ignores_the_outline_still_ends_within_its_stretch(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    planned = load_outline(project.outline_file)
    results, _ = tick_to_the_end(project, lambda: StressModel())
    assert len(results) <= 1.5 * planned.planned_scenes()
    assert len(results) == sum(longest(c) for c in planned.chapters())     # each stretched
    scenes = load_scenes(project.scenes_dir)
    assert [s.chapter for s in scenes] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert all(s.beat_status in ("not", "partly") for s in scenes)
    assert "the plan named no beat, not the current beat 1.1 or the next, 1.2: it advances " \
           "1.1" in results[0].notices
    assert results[-1].finished.startswith("the book is finished: 3 chapters, 9 scenes")


@pytest.mark.parametrize("answer, beat_status, tension, notices", [
    ({"beat_status": "maybe", "tension": 14}, None, 10,
     ["the extractor's beat status 'maybe' is not done, partly, not: dropped",
      "the extractor's tension 14 is not from 0 to 10: taken as 10"]),
    ({"beat_status": "partly", "tension": "high"}, "partly", None,
     ["the extractor's tension 'high' is not a number from 0 to 10: dropped"]),
])
def test_the_extractors_garbage_lands_corrected_with_a_notice(project, answer, beat_status,
                                                              tension, notices):
    outline_project(project)
    model = ScriptedModel()
    model.add("planner", {"title": "The Map", "intention": "Mara finds the map.",
                          "pov": "Mara Quill", "location": "the tower",
                          "characters": ["Mara Quill"], "tool_calls": [], "beat": "9.9"})
    model.add("extractor", {"summary": ["Mara finds the map.", "She keeps it.", "It is wet."],
                            "facts": [], "characters": [], "loops_opened": [],
                            "loops_resolved": [], "relationships": [], **answer,
                            "tension_reason": "A drowned man's map."})
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    assert result.plan.beat == "1.1"
    assert "the plan named beat '9.9', not the current beat 1.1 or the next, 1.2: it " \
           "advances 1.1" in result.notices
    assert all(n in result.notices for n in notices)
    (scene,) = load_scenes(project.scenes_dir)
    assert (scene.chapter, scene.beat, scene.beat_status or None, scene.tension) == \
        (1, "1.1", beat_status, tension)
    planner, extractor = model.calls("planner")[0], model.calls("extractor")[0]
    assert planner.json_schema["properties"]["beat"]["enum"] == ["1.1", "1.2"]
    assert "Beat 1.1 of the outline, which this scene was meant to advance: Beat 1 of " \
           "chapter 1 happens." in extractor.messages[-1]["content"]


def test_a_book_without_an_outline_is_asked_nothing_of_one(project):
    model = ScriptedModel(otherwise=OfflineModel())
    results = run_ticks(project, 3, model, offline_seed=0)
    assert all(r.finished == "" for r in results)
    for request in model.requests:
        said = json.dumps(request.messages)
        assert "Where the book stands" not in said and "beat" not in said
        assert "tension" not in said
    assert all(r.json_schema == plan_schema(3) for r in model.calls("planner"))
    assert all(r.json_schema == EXTRACT_SCHEMA for r in model.calls("extractor"))
    for path in sorted(project.scenes_dir.iterdir()) + sorted(project.plans_dir.iterdir()):
        text = path.read_text()
        assert not any(f"\n{key}:" in text for key in OUTLINE_KEYS), path.name


def test_the_scene_that_lands_the_last_beat_is_told_it_ends_the_book(project):
    """The planner and the writer of the last beat's scene are told the book ends in it, as
    the arc's ending says; every writer is told what its beat must make happen; the scenes
    before the last chapter's hear nothing of the end."""
    outline_project(project, chapters=2, beats=1, scenes=1)
    model = ScriptedModel(otherwise=OfflineModel())
    run_ticks(project, 2, model, offline_seed=0)
    planners, writers = model.calls("planner"), model.calls("writer")
    first, last = (json.dumps(p.messages) for p in planners)
    assert "This is the book's last chapter: its last beat ends the book, as the arc ends: " \
           "She shuts the door." in last
    assert "this scene ends the book. In it the ending happens: She shuts the door." in last
    assert "ends the book" not in first and "last chapter" not in first
    assert "In this scene this must happen: Beat 1 of chapter 1 happens." in \
        writers[0].messages[-1]["content"]
    assert "This is the book's last scene" not in writers[0].messages[-1]["content"]
    task = writers[-1].messages[-1]["content"].split("## Scene 2")[1]
    assert "In this scene this must happen: Beat 1 of chapter 2 happens.\n" in task
    assert task.endswith("This is the book's last scene: it ends the story, resolving the "
                         "premise: She shuts the door. Close it; leave no question open.\n"
                         "Write scene 2 now, 200 to 400 words of prose.")


def test_the_last_scenes_instructions_said_again_in_its_prose_are_taken_out(project):
    """Issue 51, item 4: the embedded model's last scene ended "Close this scene; leave no
    question open." and another opened "The story continued as follows in a more detailed
    and vivid manner:". Those sentences go; the ending the scene was asked to tell (the
    story's words in the instruction, "She shuts the door.") stays."""
    outline_project(project, chapters=2, beats=1, scenes=1)
    model = ScriptedModel(otherwise=OfflineModel())
    run_ticks(project, 1, model, offline_seed=0)
    model.add("writer", "The story continued as follows in a more detailed and vivid manner:\n\n"
                        "The wind dropped at dusk. She shuts the door. Close this scene; leave "
                        "no question open.\n\nThe lamp burned on without her.")
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    assert "Close it; leave no question open." in model.calls("writer")[-1].messages[-1]["content"]
    body = result.scene_path.read_text().split("---\n", 2)[2].strip()
    assert body == ("The wind dropped at dusk. She shuts the door.\n\n"
                    "The lamp burned on without her.")
    assert any("1 sentence saying the writer's instructions again taken out: 'Close this scene"
               in n for n in result.notices)


def test_the_last_scene_is_told_its_ending_once_and_last(project):
    """The 1.5B's last scene was told its ending three times (the plan's intention, the beat,
    the ending: the same sentence) and then to go on from the scene before; it went on and
    never ended: the ending is said once, the last thing asked (after any going on). Its
    planner, told it three times too (the current beat, the last chapter's line, the
    finale), is told it once, as the current beat."""
    outline = short_outline(chapters=2, beats=1, scenes=1)
    last = replace(outline.beats()[-1], what=outline.arc.ending)
    save_outline(project.outline_file, replace(outline, acts=tuple(replace(a, chapters=tuple(
        replace(c, beats=(last,)) if c.number == 2 else c for c in a.chapters))
        for a in outline.acts)))
    model = ScriptedModel(otherwise=OfflineModel())
    run_ticks(project, 1, model, offline_seed=0)
    plan = {"title": "The Door", "intention": "She shuts the door.", "pov": "Mara",
            "location": "the lighthouse", "characters": ["Mara"], "tool_calls": [], "beat": "2.1"}
    model.add("planner", plan)
    run_ticks(project, 1, model, offline_seed=0)
    task = model.calls("writer")[-1].messages[-1]["content"].split("## Scene 2")[1]
    assert task.count("She shuts the door.") == 1
    assert task.split("\n")[-2].startswith("This is the book's last scene")     # asked last
    planner = model.calls("planner")[-1].messages[-1]["content"]     # its planner: once too
    assert planner.count("She shuts the door.") == 1
    assert "In it the current beat, the ending, happens." in planner


def test_a_small_local_model_is_offered_only_the_current_beat(project):
    """An embedded 1.5B offered the next beat too took it scene after scene (2.1 before
    1.2): a lean session's plan may name the current beat only."""
    outline_project(project, chapters=2, beats=2, scenes=2)
    model = ScriptedModel(otherwise=OfflineModel())
    with reconciled(project), Session.open(project, project.config(),
                                           make_model=lambda: model,
                                           now=lambda: NOW) as session:
        session.provider = LOCAL
        model.otherwise = OfflineModel()
        tick(session)
    (planner,) = model.calls("planner")
    assert planner.json_schema["properties"]["beat"]["enum"] == ["1.1"]
    assert '"beat": the id of the outline\'s beat this scene advances: "1.1", the current ' \
           'beat.' in planner.messages[0]["content"]
