"""`novel revise N`: an edited scene that the memory follows (novel_agent.revision.revise).

A scripted extractor answers for the edited scene 5 without one fact and with a place
renamed; memory after the revise equals the memory of a fresh run whose scene 5 was
that text all along (every later tick answered as the first run's were), the
checkpoint over 5 is remade, the report names the later scene that uses the dropped
fact, and the next prompts hold no trace of the old scene 5."""

from __future__ import annotations

import signal

import yaml

from novel_agent.history.hooks import opened
from novel_agent.history.store import History
from novel_agent.models.offline import OfflineModel
from novel_agent.revision.revise import revise
from novel_agent.story.memory.files import memory_files
from novel_agent.story.memory.read import load_memory
from novel_agent.story.scenes import load_scene
from novel_agent.tick.session import Session
from tests.support.crashes import forked
from tests.support.projects import fresh, story_files
from tests.support.scripted import ScriptedModel
from tests.support.story_factory import prose
from tests.support.ticking import NOW, run_ticks

OLD5 = (prose(150, 5) + "\n\nThe Zanzibar clockwork ticked in the mill. Mara pushed the ivory astrolabe "
        "deep beneath the stone where the wheel turns, and Tobin Keel waited at the Old "
        "Mill.\n\n" + prose(80, 6))
NEW5 = (prose(150, 5) + "\n\nMara walked out to the bridge. Tobin Keel waited at the Salt "
        "Bridge, where the water ran fast.\n\n" + prose(80, 6))
OLD_X = {"summary": ["Mara hides the key.", "The clockwork ticks in the mill.",
                     "Tobin waits at the Old Mill."],
         "facts": ["Mara Quill hid the ivory astrolabe under the mill stone",
                   "Tobin Keel waits at the Old Mill"],
         "characters": [{"name": "Mara Quill", "state": "hid the ivory astrolabe"}],
         "loops_opened": [], "loops_resolved": [], "relationships": []}
NEW_X = {"summary": ["Mara walks out to the bridge.", "The Salt Bridge shakes in the flood.",
                     "Tobin waits at the Salt Bridge."],
         "facts": ["Tobin Keel waits at the Salt Bridge"],
         "characters": [{"name": "Mara Quill", "state": "walked to the bridge"}],
         "loops_opened": [], "loops_resolved": [], "relationships": []}
LATER8 = prose(160, 8) + "\n\nShe thought of the ivory astrolabe, cold under its stone.\n\n" + \
    prose(90, 9)


def tick_with(project, **answers):
    model = ScriptedModel()
    for stage, answer in answers.items():
        model.add(stage, answer)
    run_ticks(project, 1, model=model, offline_seed=0)


def first_run(project):
    run_ticks(project, 4)
    tick_with(project, writer=OLD5, extractor=OLD_X)
    run_ticks(project, 2)
    tick_with(project, writer=LATER8)
    run_ticks(project, 4)


def records(project, ticks):
    out = {}
    for tick in ticks:
        record = yaml.safe_load(project.plan_path(tick).read_text())
        plan = {k: record[k] for k in ("title", "intention", "pov", "location", "characters",
                                       "tool_calls")}
        out[tick] = (plan, load_scene(project.scene_path(tick)).body, record["extraction"])
    return out


def memory_of(project):
    return memory_files(load_memory(project.memory_dir), project.memory_dir).values()


def revised(project, text=None, model=None):
    model = model or ScriptedModel(otherwise=OfflineModel(seed=0))
    model.add("extractor", NEW_X)
    with opened(project), Session.open(project, project.config(), make_model=lambda: model,
                               now=lambda: NOW) as session:
        return revise(session, 5, text)


def test_memory_after_revise_is_a_fresh_run_whose_scene_5_was_the_new_text(project, tmp_path):
    first_run(project)
    later = records(project, range(6, 13))
    facts = (project.memory_dir / "facts.yaml").read_text()
    assert "hid the ivory astrolabe" in facts and "Old Mill" in facts
    project.scene_path(5).write_text(project.scene_path(5).read_text().replace(
        OLD5.strip(), NEW5.strip()))                         # the author's edit
    result = revised(project)
    # the fresh run: scene 5 the new text, every later tick answered as before
    other = fresh(tmp_path / "fresh")
    run_ticks(other, 4)
    tick_with(other, writer=NEW5, extractor=NEW_X)
    for tick in range(6, 13):
        plan, body, extraction = later[tick]
        tick_with(other, planner=plan, writer=body, extractor=extraction)
    assert list(memory_of(project)) == list(memory_of(other))
    facts = (project.memory_dir / "facts.yaml").read_text()
    assert "hid the ivory astrolabe" not in facts and "Old Mill" not in facts and "Salt Bridge" in facts
    assert load_scene(project.scene_path(5)).summary == NEW_X["summary"]
    # the checkpoint over 5 (and the overall summary) remade
    assert result.summaries == ["checkpoint_010", "overall"]
    checkpoint = (project.summaries_dir / "checkpoint_010.md").read_text()
    assert "Old Mill" not in checkpoint and "clockwork" not in checkpoint
    # what scene 5 no longer says, and who relied on it
    assert "fact: Mara Quill hid the ivory astrolabe under the mill stone" in result.lost
    assert "fact: Tobin Keel waits at the Salt Bridge" in result.gained
    assert [r.line(5) for r in result.relying] == [
        "scene 8 mentions “ivory astrolabe”, which scene 5 no longer says (fact: Mara Quill hid "
        "the ivory astrolabe under the mill stone)"]
    assert History(project).head().subject.startswith("revised scene 5: ")
    assert not (project.novel_dir / "revise.yaml").exists()
    # the next prompts hold no trace of the old scene 5
    run_ticks(project, 1)
    for stage in ("planner", "writer"):
        prompt = (project.log_dir / f"tick_013_{stage}.json").read_text()
        assert "Zanzibar" not in prompt and "hid the ivory astrolabe" not in prompt
        assert "Old Mill" not in prompt


def test_revise_from_a_file_through_the_cli(project, cli, tmp_path):
    run_ticks(project, 6)
    new = tmp_path / "new3.md"
    new.write_text("---\ntitle: ignored\n---\n" + prose(220, 3) + "\n\nThe Quay lamp went out.\n")
    result = cli("revise", "3", "--file", str(new), "-p", "harbour")
    assert "revised scene 3:" in result.output
    scene = load_scene(project.scene_path(3))
    assert scene.body.strip().endswith("The Quay lamp went out.")
    assert scene.words == len(scene.body.split())
    record = yaml.safe_load(project.plan_path(3).read_text())
    assert record["extraction"]["summary"] == scene.summary
    kinds = [e.kind for e in History(project).entries()[:1]]
    assert kinds == ["revise"]


def test_bad_revise_requests_change_nothing(project, cli, snapshot, tmp_path):
    run_ticks(project, 2)
    before = snapshot(project.root)
    out = cli("revise", "7", "-p", "harbour", ok=False).output
    assert "Error: no scene 7 to revise: the scenes are 1–2" in out
    empty = tmp_path / "empty.md"
    empty.write_text("\n")
    out = cli("revise", "1", "--file", str(empty), "-p", "harbour", ok=False).output
    assert f"Error: {empty}: the new text is empty" in out
    assert snapshot(project.root) == before


def test_killed_inside_a_revise_the_project_is_before(project, cli):
    run_ticks(project, 11)
    scene = project.scene_path(4)
    scene.write_text(scene.read_text().replace("\n\n", "\n\nBy hand. ", 1))
    cli("status", "-p", "harbour")               # the edit gets its entry
    before = story_files(project)
    for point in ("before_journal", "mid_commit"):
        assert forked(project, ["revise", "4"], point) == -signal.SIGKILL
        status = cli("status", "-p", "harbour").output
        assert story_files(project) == before, point
        if point == "mid_commit":
            assert "the revise of scene 4 was interrupted: the project is back as it was " \
                   "before it" in status
    cli("revise", "4", "-p", "harbour")
    assert History(project).head().kind == "revise"
    assert not (project.novel_dir / "revise.yaml").exists()
    assert cli("doctor", "-p", "harbour").exit_code == 0


def test_rewrite_after_writes_the_later_scenes_again(project, cli, tmp_path):
    run_ticks(project, 12)
    old7 = project.scene_path(7).read_text()
    new = tmp_path / "new5.md"
    new.write_text(prose(230, 55) + "\n\nThe lighthouse went dark for good.\n")
    out = cli("revise", "5", "--file", str(new), "--rewrite-after", "-p", "harbour").output
    assert "ticks 6–12 taken away (kept as kept/main-12); writing them again" in out
    assert out.count("  → scenes/scene_0") == 7
    assert project.tick() == 12
    assert (project.summaries_dir / "checkpoint_010.md").is_file()
    subjects = [e.subject for e in History(project).entries()]
    assert [s.split(":")[0] for s in subjects[:8]] == [
        "tick 12", "tick 11", "summaries", *(f"tick {t}" for t in range(10, 5, -1))]
    assert subjects[8] == "ticks 6–12 taken away to be written again (kept as kept/main-12)"
    assert subjects[9].startswith("revised scene 5: ")
    kept = History(project).git.run("show", "kept/main-12:scenes/scene_007.md").decode()
    assert kept == old7
    # memory is what the rewritten ticks made of the revised scene
    from novel_agent.revision.rederive import replay_range
    from novel_agent.story.memory.store import Memory
    derived = replay_range(project, Memory(), 1, 12, project.config())
    assert memory_files(derived, project.memory_dir) == \
        memory_files(load_memory(project.memory_dir), project.memory_dir)
    assert cli("doctor", "-p", "harbour").exit_code == 0
