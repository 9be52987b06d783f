"""Revise is a replay: a book whose extractor reads the prose (tests/support/reading_model.py:
deaths, places, objects, new people, the clock, a first name for a POV) and an edit by
hand made after the revised scene.

A revise with no edit leaves every memory file byte for byte as it was; revising scene 3
gives the memory of a book whose scene 3 was the new text from the start, after the
same later ticks and the same edit by hand; replaying every record gives the memory the
ticks wrote, their recorded changes and the clock."""

from __future__ import annotations

import yaml

from novel_agent.history.hooks import opened
from novel_agent.history.store import History
from novel_agent.revision.rederive import Derived, read_record, replay
from novel_agent.revision.revise import REVISED, revise
from novel_agent.story.decisions import plan_as_named
from novel_agent.story.memory.store import Memory
from novel_agent.story.project.folder import Project
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scene
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.fake_openai import API_KEY, FakeOpenAIServer
from tests.support.projects import files_of, fresh
from tests.support.reading_model import ReadingModel
from tests.support.scripted import ScriptedModel
from tests.support.story_server import StoryServer
from tests.support.ticking import NOW

EVENTS = {
    2: ["Anselm Vey came in from the rain.", "Anselm Vey picked up the brass key.",
        "It was Monday, day 2, dusk."],
    3: ["Lio Brand came in from the rain.", "Lio Brand picked up the tin whistle.",
        "Anselm Vey wondered about the tin whistle."],
    5: ["Petra Holm came in from the rain.", "Anselm Vey gave the brass key to Petra Holm.",
        "Everyone knew of the great fire."],
    7: ["Lio Brand lost the tin whistle.", "Lio Brand went to the Old Mill.",
        "Petra Holm and Lio Brand became rivals."],
    9: ["Anselm Vey read it aloud to everyone by the fire.", "Petra Holm was now afraid of the water.",
        "It was day 3, noon.", "Snow had fallen on the quay."],
    12: ["Petra Holm settled the tin whistle."],
    15: ["Quentin Harrowgate came in from the rain.", "Anselm Vey died at the weir.",
         "Quentin Harrowgate went to the Salt Bridge."],
    18: ["Lio Brand left for good.", "It was day 4, dawn."],
}
# scene 3 as the author rewrites it: Quentin comes in here, not in scene 15, and Lio
# finds a silver compass instead of the whistle (which he still loses in scene 7)
NEW3 = ("Quentin Harrowgate came in from the rain. Lio Brand came in from the rain. "
        "Lio Brand picked up the silver compass. It was day 1, dawn.\n\n"
        "The wind kept at the shutters all night, and nobody slept. The keeper counted the "
        "hours by the lamp and by the tide, and by the hours the lamp went out and came back.\n")
LAST = 20


def model_for(scripted=None):
    reading = ReadingModel(seed=0, events=EVENTS)
    if scripted is None:
        return reading
    scripted.otherwise = reading
    return scripted


def tick_book(project, upto, make=model_for, edit_after=16, config=None, env=None):
    """Tick `project` to `upto`, editing Petra's card by hand after tick `edit_after`."""
    with reconciled(project), Session.open(project, config or project.config(), env,
                                           make_model=make, now=lambda: NOW) as session:
        while project.tick() < upto:
            tick(session)
            if project.tick() == edit_after:
                hand_edit(project)


def hand_edit(project):
    path = project.memory_dir / "characters" / "petra_holm.yaml"
    card = yaml.safe_load(path.read_text())
    card["traits"] = [*card.get("traits", []), "limps since the flood"]
    card["description"] = "the ferrywoman's daughter"
    path.write_text(yaml.safe_dump(card, sort_keys=False, allow_unicode=True))


def memory_bytes(project):
    return {p.relative_to(project.root).as_posix(): p.read_bytes()
            for p in sorted(project.memory_dir.rglob("*.yaml"))}


def revised(project, number, text=None, scripted=None):
    with opened(project), Session.open(project, project.config(), now=lambda: NOW,
                                       make_model=lambda: model_for(scripted)) as session:
        return revise(session, number, text)


def test_a_revise_with_no_edit_leaves_memory_byte_for_byte(project):
    tick_book(project, LAST)
    before = memory_bytes(project)
    anselm = yaml.safe_load(before["memory/characters/anselm_vey.yaml"])
    assert anselm["status"] == "dead" and anselm["status_in"] == 15
    assert yaml.safe_load(before["memory/characters/quentin_harrowgate.yaml"])["first_seen"] == 15
    assert "limps since the flood" in before["memory/characters/petra_holm.yaml"].decode()
    result = revised(project, 3)
    assert memory_bytes(project) == before
    assert (result.lost, result.gained, result.changed) == ([], [], [])


def test_replaying_every_record_gives_the_memory_the_ticks_wrote(project):
    tick_book(project, LAST, edit_after=0)
    derived, story, config = Derived(Memory()), project.story(), project.config()
    for number in range(1, LAST + 1):
        record = read_record(project, number)
        changes = replay(derived, record, story=story, config=config,
                         body=load_scene(project.scene_path(number)).body)
        assert changes == record["memory_changes"], number
    on_disk = memory_bytes(project)
    clock = on_disk.pop("memory/clock.yaml")
    assert derived.clock_text().encode() == clock
    assert yaml.safe_load(clock) | {"text": "", "named": {}, "season": {}} == {
        "day": 4, "time": "06:00", "weekday": "Wednesday", "text": "", "scene": 18,
        "named": {}, "season": {}}         # the weekday of day 4 counted from day 2's Monday
    assert yaml.safe_load(clock)["season"] | {"said": ""} == {
        "name": "winter", "day": 3, "scene": 9, "said": ""}
    assert on_disk == fresh_files(project, derived.memory)
    # what the book holds, so the comparison above is of something
    records = [read_record(project, n) for n in range(1, LAST + 1)]
    assert any("cast_named" in r for r in records)       # a POV named by first name
    assert "Anselm Vey is dead" in records[14]["memory_changes"]
    assert not any("read it aloud" in f["text"] for f in derived.memory.facts)   # copied


def fresh_files(project, memory):
    from novel_agent.story.memory.files import memory_files
    return {p.relative_to(project.root).as_posix(): text.encode()
            for p, text in sorted(memory_files(memory.copy(), project.memory_dir).items())}


def test_revising_scene_3_is_a_book_whose_scene_3_was_the_new_text(project, tmp_path):
    tick_book(project, LAST)
    later = {n: (read_record(project, n), load_scene(project.scene_path(n)).body)
             for n in range(3, LAST + 1)}
    asked = ScriptedModel()
    result = revised(project, 3, NEW3, asked)
    # the other book: scenes 1-2 alike, scene 3 the new text, then every later tick
    # planned and written as the first book's were (its extractor reads each scene)
    other = fresh(tmp_path / "other")
    tick_book(other, 2)
    scripted = ScriptedModel()
    for number in range(3, LAST + 1):
        record, body = later[number]
        plan = plan_as_named(record)
        scripted.add("planner", {**plan.to_dict(), "title": record["title"]})
        scripted.add("writer", NEW3 if number == 3 else body)
    tick_book(other, LAST, make=lambda: model_for(scripted))
    assert memory_bytes(project) == memory_bytes(other)
    quentin = yaml.safe_load((project.memory_dir / "characters" /
                              "quentin_harrowgate.yaml").read_text())
    assert quentin["first_seen"] == 3 and quentin["place"] == "the Salt Bridge"
    # the report counts what scene 3's extraction applied, before and after
    record = read_record(project, 3)
    assert result.gained == [c for c in record["memory_changes"]
                             if c not in later[3][0]["memory_changes"]]
    assert "new character Quentin Harrowgate: arrived out of the storm" in result.gained
    assert "Lio Brand holds silver compass" in result.gained
    assert "Lio Brand holds tin whistle" in result.lost
    assert "memory/characters/quentin_harrowgate.yaml" in result.changed
    # the extractor was told the scene was revised, not what the old plan meant it to do
    prompt = "\n".join(m["content"] for m in asked.calls("extractor")[0].messages)
    assert REVISED in prompt and later[3][0]["intention"] not in prompt
    assert "Quentin Harrowgate came in from the rain." in prompt


def test_after_a_revise_the_dead_stay_dead_for_the_next_tick(project):
    tick_book(project, LAST)
    revised(project, 3)
    EVENTS[21] = ["Anselm Vey was now cheerful."]
    try:
        tick_book(project, LAST + 1)
    finally:
        del EVENTS[21]
    findings = read_record(project, LAST + 1)["audit"]["findings"]
    assert any("Anselm Vey" in f["message"] and f["against_scene"] == 15 for f in findings), \
        findings


def test_a_later_scene_relying_on_what_is_gone_is_named_for_its_prose_or_its_record(project):
    tick_book(project, 10, edit_after=0)
    plan8 = project.plan_path(8)
    record = yaml.safe_load(plan8.read_text())
    record["extraction"]["summary"].append("Petra recalls the great fire.")   # the record only
    plan8.write_text(yaml.safe_dump(record, sort_keys=False, allow_unicode=True))
    scene9 = project.scene_path(9)
    scene9.write_text(scene9.read_text().rstrip() + "\n\nNobody spoke of the great fire.\n")
    body = load_scene(project.scene_path(5)).body.replace("Everyone knew of the great fire.", "")
    result = revised(project, 5, body)
    assert "fact: The great fire is known to all in the town" in result.lost
    assert [r.line(5) for r in result.relying] == [
        "what tick 8 recorded in memory mentions “great fire”, which scene 5 no longer says "
        "(fact: The great fire is known to all in the town)",
        "scene 9 mentions “great fire”, which scene 5 no longer says (fact: The great fire is "
        "known to all in the town)"]


NOTHING = ("scene {n} is as its tick wrote it: nothing to revise (no file written, no entry "
           "made, no model called)\n")


def test_through_the_test_server_and_the_cli_a_revise_with_no_edit_changes_nothing(
        openai_project, cli):
    # on main it rewrote a checkpoint's bullet and overall.md, made an entry and asked
    # the server three times (the extractor, the checkpoint, the overall summary)
    project = Project(openai_project)
    story = StoryServer(project, model=ReadingModel(events=EVENTS))
    with FakeOpenAIServer(story) as server:
        config = project.config(flags={"llm.base_url": server.base_url})
        tick_book(project, LAST, make=None, config=config, env={"OPENAI_API_KEY": API_KEY})
        before, head, asked = files_of(project.root), History(project).head().sha, \
            len(server.requests)
        out = cli("revise", "3", "-p", "harbour", "--base-url", server.base_url).output
    story.close()
    assert out == NOTHING.format(n=3)
    assert files_of(project.root) == before and History(project).head().sha == head
    assert len(server.requests) == asked
    assert yaml.safe_load(before["memory/characters/anselm_vey.yaml"])["status"] == "dead"


def test_on_the_offline_model_a_revise_with_no_edit_changes_nothing(project, cli):
    from tests.support.ticking import run_ticks
    run_ticks(project, 12)
    before, head = files_of(project.root), History(project).head().sha
    assert cli("revise", "5", "-p", "harbour").output == NOTHING.format(n=5)
    assert cli("revise", "5", "-p", "harbour", "--file",
               str(project.scene_path(5))).output == NOTHING.format(n=5)
    assert files_of(project.root) == before and History(project).head().sha == head


def test_a_revise_whose_extraction_and_memory_are_as_they_were_remakes_no_summary(project):
    # a sentence that changes nothing the extractor reads: the scene's new text lands
    # (one file, one entry), its plan record, memory and summaries stay as they were
    tick_book(project, LAST)
    record = read_record(project, 3)
    body = load_scene(project.scene_path(3)).body.rstrip() + "\n\nThe kettle ticked.\n"
    kept = {p: b for p, b in files_of(project.root).items() if not p.startswith("scenes/")}
    head = History(project).head().sha
    model = ScriptedModel().add("extractor", record["extraction"])
    result = revised(project, 3, body, scripted=model)
    assert result.unchanged == ("scene 3's extraction and the memory that follows from it "
                                "are as they were: scenes/scene_003.md written, no summary "
                                "remade")
    assert (result.lost, result.gained, result.changed, result.summaries) == ([], [], [], [])
    assert [r.stage for r in model.requests] == ["extractor"]        # no summarizer
    after = files_of(project.root)
    assert "The kettle ticked." in after.pop("scenes/scene_003.md").decode()
    assert {p: b for p, b in after.items() if not p.startswith("scenes/")} == kept
    assert History(project).head().sha != head                 # the new text's entry
