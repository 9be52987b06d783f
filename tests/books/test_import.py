"""`novel import` and novel_agent.books.importer: a manuscript in, then `novel tick` goes on."""

from __future__ import annotations

import json
import os
import re

import pytest
import yaml

from novel_agent.books.importer import create_cast, import_manuscript
from novel_agent.books.split import load_manuscript
from novel_agent.errors import ImportStoppedError, ModelError
from novel_agent.models.offline import OfflineModel
from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scene, load_scenes, scene_ticks
from novel_agent.text.names import name_problem
from novel_agent.tick.prompt_log import log_path
from novel_agent.tick.session import Session
from tests.support.clirunner import invoke
from tests.support.fake_openai import API_KEY as KEY
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.manuscripts import PEOPLE, write_book
from tests.support.responders import stage_of
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks


def import_responder(body):
    """Valid extractor JSON naming who the scene names; bullets for the summarizer."""
    stage = stage_of(body)
    text = body["messages"][-1]["content"]
    if stage == "extractor":
        marker = re.findall(r"This is scene (\d+\.\d+)\.", text)[-1]
        present = re.findall(r"(\w+ \w+) came down to the harbour", text)
        return json.dumps({
            "summary": [f"Bullet one of scene {marker}.", f"{present[0]} walks the quay.",
                        "The harbour bell rings twice."],
            "facts": [f"Scene {marker} happened at the harbour"],
            "characters": [{"name": p, "state": f"seen in scene {marker}"} for p in present],
            "loops_opened": ["who rang the harbour bell"] if marker == "1.1" else [],
            "loops_resolved": [], "relationships": []})
    # the summarizer: bullets naming what its range established, so coverage is full
    facts = [f"- Scene {m} happened at the harbour." for m in
             dict.fromkeys(re.findall(r"This is scene (\d\.\d)\.", text))]
    return "\n".join(["- Mara Quill, Tobin Keel and Ilse Varga meet at the harbour.",
                      "- They ask who rang the harbour bell.", *facts])


def cli_env(**extra):
    env = {k: None for k in os.environ if k.startswith("NOVEL_") and k != "NOVEL_PROJECTS_DIR"}
    return {**env, "OPENAI_API_KEY": KEY, **extra}


@pytest.fixture
def openai_project(projects_dir):
    result = invoke("new", "harbour", "--premise", "A keeper finds a map.",
                    "--provider", "openai", env=cli_env())
    assert result.exit_code == 0
    return projects_dir / "harbour"


def test_import_then_tick_continues(openai_project, tmp_path):
    book = write_book(tmp_path / "book.md")
    env = cli_env(NOVEL_GENERATION_CHECKPOINT_SUMMARY_INTERVAL="4")
    with FakeOpenAIServer(import_responder) as server:
        result = invoke("import", str(book), "-p", "harbour", "--base-url",
                        server.base_url, "--model", "gpt-4o-mini", env=env)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-3:] == [
        "imported 9 scenes as ticks 1–9 (1,125 words)",
        "memory: 3 characters; summaries made: checkpoint_004, overall, checkpoint_008",
        "Next: novel tick -p harbour"]
    stages = [stage_of(r["json"]) for r in server.requests]
    assert stages.count("extractor") == 9
    # scenes in manuscript order, with front matter and the extractor's bullets
    scenes = load_scenes(openai_project / "scenes")
    assert [s.tick for s in scenes] == list(range(1, 10))
    assert [s.title for s in scenes][:4] == ["Chapter 1", "Chapter 1 (2)", "Chapter 1 (3)",
                                             "Chapter 2"]
    assert [re.findall(r"scene (\d\.\d)\.$", s.body)[0] for s in scenes] == [
        f"{c}.{s}" for c in (1, 2, 3) for s in (1, 2, 3)]
    assert scenes[4].summary[0] == "Bullet one of scene 2.2."
    assert scenes[4].tokens > 100 and scenes[4].words > 100
    assert scenes[4].pov in PEOPLE and scenes[4].pov in scenes[4].body
    # memory: characters created from the extraction, facts and the loop recorded
    memory = load_memory(openai_project / "memory")
    assert sorted(c["name"] for c in memory.characters.values()) == sorted(PEOPLE)
    assert memory.find_character("Ilse Varga")["first_seen"] == 1   # scene 1.1 names her
    assert memory.find_character("Mara Quill")["first_seen"] == 2
    assert memory.open_loops()[0]["description"] == "who rang the harbour bell"
    assert {"text": "Scene 3.3 happened at the harbour", "scene": 9} in memory.facts
    # checkpoints at the interval; usage recorded per call
    summaries = {p.name for p in (openai_project / "summaries").iterdir()}
    assert {"checkpoint_004.md", "checkpoint_008.md"} <= summaries
    import sqlite3
    with sqlite3.connect(openai_project / ".novel" / "index.db") as db:
        rows = db.execute("SELECT tick, stage FROM usage WHERE stage = 'extractor'").fetchall()
    assert sorted(rows) == [(t, "extractor") for t in range(1, 10)]
    # one offline tick continues at 10, and the writer sees the last imported scene
    result = invoke("tick", "-p", "harbour", "--provider", "offline", env=cli_env())
    assert result.exit_code == 0, result.output
    assert "tick 10 of harbour" in result.output
    assert (openai_project / "scenes" / "scene_010.md").is_file()
    log = json.loads(log_path(Project(openai_project), 10, "writer").read_text())
    prompt = "\n".join(m["content"] for m in log["messages"])
    so_far, tier1 = (prompt.split("## The story so far\n")[1].split("\n## ")[0],
                     prompt.split("## The last scenes in full")[1])
    # tier 3 tells the scenes up to the last checkpoint before the newest scene, the
    # recent tiers the rest: each scene once
    assert "### Scenes 1–4" in so_far and "### Scenes 5–8" in so_far
    assert "## Earlier scenes (summaries)" not in prompt
    assert "### Scene 9 — Chapter 3 (3)" in tier1 and scenes[-1].body.strip() in tier1


def offline_session(project, model):
    """A session on `model` (an offline model in it, or behind a scripted one, reads the
    story from each request's context, as the product's offline model does)."""
    return Session.open(project, project.config(), make_model=lambda: model)


def answer(text: str) -> dict:
    return {"summary": [text, "Then more.", "And more."], "facts": [], "characters": [],
            "loops_opened": [], "loops_resolved": [], "relationships": []}


class Interrupted(OfflineModel):
    """The offline model, until Ctrl-C arrives during the third extraction."""

    extractions = 0

    def complete(self, request):
        if request.stage == "extractor":
            self.extractions += 1
            if self.extractions == 3:
                raise KeyboardInterrupt
        return super().complete(request)


def failing_third(kind: str):
    """A model whose third extraction fails: a ModelError (scripted), or Ctrl-C."""
    if kind == "ctrl-c":
        return Interrupted(seed=1), KeyboardInterrupt
    model = ScriptedModel(otherwise=OfflineModel(seed=1))
    model.add("extractor", answer("One happens here.")).add("extractor", answer("Two happens here."))
    model.fail("extractor", ModelError("boom: the server went away"))
    return model, ImportStoppedError


@pytest.mark.parametrize("kind", ["model error", "ctrl-c"])
def test_interrupted_import_resumes_without_gaps(project, tmp_path, kind):
    book = write_book(tmp_path / "book.md")
    manuscript = load_manuscript(book, "auto", 400)
    model, raised = failing_third(kind)
    with reconciled(project), offline_session(project, model) as session:
        with pytest.raises(raised) as caught:
            import_manuscript(session, manuscript)
    if raised is ImportStoppedError:
        assert caught.value.done == 2 and caught.value.total == 9
        assert "2 of 9 pieces are imported" in str(caught.value)
        assert "run the same novel import again to resume" in str(caught.value)
    assert scene_ticks(project.scenes_dir) == [1, 2]
    assert project.tick() == 2 and project.state()["import"]["done"] == 2
    assert not log_path(project, 3, "extractor").exists()
    with reconciled(project), offline_session(project, OfflineModel(seed=1)) as session:
        result = import_manuscript(session, manuscript)
    assert result.skipped == 2 and result.ticks == list(range(3, 10))
    scenes = load_scenes(project.scenes_dir)
    assert [s.tick for s in scenes] == list(range(1, 10)) and project.tick() == 9
    assert [s.body for s in scenes] == [p.body for p in manuscript.pieces]
    assert scenes[1].summary[0] == ("Two happens here." if kind == "model error"  # offline:
                                    else "Mara Quill came down to the harbour in chapter 1.")
    # a third run of the same import changes nothing
    with reconciled(project), offline_session(project, OfflineModel(seed=1)) as session:
        again = import_manuscript(session, manuscript)
    assert again.ticks == [] and scene_ticks(project.scenes_dir) == list(range(1, 10))


def test_model_failure_through_the_cli_is_one_line(openai_project, tmp_path, snapshot):
    book = write_book(tmp_path / "book.md", chapters=1)
    calls = []

    def failing(body):
        if stage_of(body) == "extractor":
            calls.append(1)
            if len(calls) == 2:
                return {"status": 401, "error": "invalid api key"}
        return import_responder(body)

    with FakeOpenAIServer(failing) as server:
        result = invoke("import", str(book), "-p", "harbour", "--base-url",
                        server.base_url, env=cli_env())
    assert result.exit_code == 1
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "import stopped at piece 2 of 3" in error[0]
    assert "1 of 3 pieces are imported" in error[0]
    assert scene_ticks(openai_project / "scenes") == [1]


def test_no_extract_then_tick(project, tmp_path):
    book = write_book(tmp_path / "book.md")
    result = invoke("import", str(book), "-p", "harbour", "--no-extract", env=cli_env())
    assert result.exit_code == 0, result.output
    assert "imported 9 scenes as ticks 1–9" in result.output
    scenes = load_scenes(project.scenes_dir)
    assert [s.summary for s in scenes][:2] == [["Chapter 1"], ["Chapter 1 (2)"]]
    assert not list(project.log_dir.glob("*.json"))        # no model was asked
    assert load_memory(project.memory_dir).characters == {}
    assert project.tick() == 9
    result = invoke("tick", "-p", "harbour", env=cli_env())
    assert result.exit_code == 0, result.output
    assert "tick 10 of harbour" in result.output
    log = json.loads(log_path(project, 10, "writer").read_text())
    prompt = "\n".join(m["content"] for m in log["messages"])
    assert scenes[-1].body.strip() in prompt and "Chapter 1 (2)" in prompt


def test_import_is_appended_after_existing_scenes(project, tmp_path):
    run_ticks(project, 2)
    first = load_manuscript(write_book(tmp_path / "one.md", chapters=1), "auto", 400)
    with reconciled(project), offline_session(project, OfflineModel()) as session:
        import_manuscript(session, first, extract=False)
    assert scene_ticks(project.scenes_dir) == [1, 2, 3, 4, 5] and project.tick() == 5
    # a scene dropped in by hand, past the tick counter, is not overwritten
    dropped = project.scene_path(6)
    dropped.write_text("---\ntitle: By hand\n---\nWritten by hand.\n", encoding="utf-8")
    second = load_manuscript(write_book(tmp_path / "two.md", chapters=1, scenes=2), "auto", 400)
    with reconciled(project), offline_session(project, OfflineModel()) as session:
        result = import_manuscript(session, second)
    assert result.ticks == [7, 8] and project.tick() == 8
    assert load_scene(dropped).body.strip() == "Written by hand."
    assert load_scene(project.scene_path(7)).body == second.pieces[0].body
    assert project.state()["import"]["first_tick"] == 7


@pytest.mark.parametrize("name, data, message", [
    ("latin1.txt", "Caf\xe9 au lait.\n".encode("latin-1"), "not UTF-8 text"),
    ("missing.md", None, "no such file or folder"),
    ("empty.md", b"\n\n* * *\n", "no text to import"),
])
def test_unreadable_manuscript_writes_nothing(project, tmp_path, snapshot, name, data, message):
    path = tmp_path / name
    if data is not None:
        path.write_bytes(data)
    before = snapshot(project.root)
    result = invoke("import", str(path), "-p", "harbour", env=cli_env())
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and message in result.output
    assert snapshot(project.root) == before


# -- one sequence with the tick: the extractor's fallback, the prompt logs ------------
GARBAGE = {"summary": ["2017.03.12 2017.03.12 2017.03.12"], "facts": [], "characters": [],
           "loops_opened": [], "loops_resolved": [], "relationships": []}


def test_a_piece_whose_extraction_is_garbage_twice_still_lands(project, tmp_path):
    manuscript = load_manuscript(write_book(tmp_path / "book.md", chapters=1), "auto", 400)
    model = (ScriptedModel(otherwise=OfflineModel(seed=1))
             .add("extractor", answer("One happens here."))
             .add("extractor", GARBAGE).add("extractor", "I cannot."))    # piece 2, twice
    with reconciled(project), offline_session(project, model) as session:
        result = import_manuscript(session, manuscript)
    assert result.ticks == [1, 2, 3] and len(model.calls("extractor")) == 4
    (warning,) = result.warnings
    assert warning.startswith("scene 2: the extractor's answer could not be used (")
    assert warning.endswith("); the scene's own sentences stand as its summary")
    records = [yaml.safe_load(project.plan_path(t).read_text()) for t in (1, 2, 3)]
    assert ["extraction_fallback" in r for r in records] == [False, True, False]
    assert "after one repair attempt" in records[1]["extraction_fallback"]
    assert records[1]["memory_changes"] == [] and records[1]["imported"]["piece"] == 2
    body = manuscript.pieces[1].body
    assert load_scene(project.scene_path(2)).summary == [
        "Mara Quill came down to the harbour in chapter 1.",     # its own first two and last
        extract_sentences(body)[1], "This is scene 1.2."]
    assert load_scene(project.scene_path(1)).summary[0] == "One happens here."


def extract_sentences(text):
    from novel_agent.text.cleanup import sentences
    return sentences(text)


def test_import_strips_prompt_logs_past_keep_prompt_logs_as_a_tick_does(project, tmp_path):
    project.project_file.write_text(project.project_file.read_text()
                                    + "context:\n  keep_prompt_logs: 2\n"
                                    + "generation:\n  checkpoint_summary_interval: 3\n")
    manuscript = load_manuscript(write_book(tmp_path / "book.md"), "auto", 400)
    with reconciled(project), offline_session(project, OfflineModel(seed=1)) as session:
        import_manuscript(session, manuscript)
    logs = sorted(project.log_dir.glob("tick_*_*.json"))
    kept = {int(p.name[5:8]) for p in logs if "messages" in json.loads(p.read_text())}
    assert len(logs) >= 9 and kept == {8, 9}


def test_a_failed_piece_keeps_no_draft(project, tmp_path):
    manuscript = load_manuscript(write_book(tmp_path / "book.md", chapters=1), "auto", 400)
    model = ScriptedModel().fail("extractor", ModelError("boom: the server went away"))
    with reconciled(project), offline_session(project, model) as session:
        with pytest.raises(ImportStoppedError) as caught:
            import_manuscript(session, manuscript)
    assert str(caught.value).startswith("import stopped at piece 1 of 3: boom: the server "
                                        "went away; 0 of 3 pieces are imported")
    assert not project.drafts_dir.exists() or not list(project.drafts_dir.iterdir())
    assert scene_ticks(project.scenes_dir) == []


# -- who the extractor names: created only when the piece writes the whole name ------
def story_check(name):
    return name_problem(name, title="The Drowned Map", premise="A keeper finds a map.")


@pytest.mark.parametrize("said, body, created", [
    ("The Launderer's Map", "The launderer's map lay open. Mara read it twice.", None),
    ("The Launderer's Map", "She read the launderer's map by the lamp.", None),
    ("The Launderer's Map", "The launderer kept a map. The tide turned.", None),
    ("Someone", "Someone knocked twice. Nobody answered.", None),
    ("Ilse", "Ilse waited. Nobody came.", None),              # only where a sentence starts
    ("The Drowned Map", "She had read The Drowned Map twice.", None),   # the book's title
    ("Mara Quill", "The door opened and Mara Quill came in.", "Mara Quill"),
    ("mara  quill", "The door opened.\nMara\nQuill came in.", "Mara Quill"),  # as written
    ("Ilse", "The door opened and Ilse came in.", "Ilse"),
    ("Anne of Cleves", "They sent word to Anne of Cleves at dawn.", "Anne of Cleves"),
    # words an extractor proposed for a real book: a pronoun, a day, a title alone, a word
    # opening quoted speech, parts of place names
    ("She", "She came in. Later she left.", None),
    ("Thursday", "They sailed on Thursday at dawn.", None),
    ("Miss", "They sent for Miss Harrow at once.", None),
    ("That", "He said, \"That was all.\"", None),
    ("Keel", "Tobin ran down Keel Street to Keel Point.", None),
    ("Street", "Keel Street was empty. Tobin ran down Keel Street.", None),
    ("Point", "They walked out to Keel Point.", None),
    ("Tobin", "Then Tobin left. The tide turned.", "Tobin"),        # "Then" is no name's
    ("Harrow", "They sent for Miss Harrow at once.", "Harrow"),
    ("Tomas", "Old Tomas watched from the boat.", "Tomas"),
])
def test_create_cast_takes_only_names_the_piece_writes(said, body, created):
    memory = Memory()
    extraction = Extraction(summary=["x"], characters=[{"name": said, "state": "here"}])
    changes = create_cast(memory, extraction, body, 4, story_check)
    names = [c["name"] for c in memory.characters.values()]
    assert names == ([created] if created else [])
    assert changes == ([f"new character: {created}"] if created else [])


def test_a_piece_spelling_a_known_name_one_letter_off_adds_no_one():
    """Fails on main: "Katryn Holloway" was made a second person, with a file of its own."""
    memory = Memory()
    create_cast(memory, Extraction(summary=["x"], characters=[{"name": "Katrin Holloway"}]),
                "Katrin Holloway came in from the rain.", 3, story_check)
    extraction = Extraction(summary=["x"], characters=[{"name": "Katryn Holloway",
                                                        "state": "reading"}])
    assert create_cast(memory, extraction, "Katryn Holloway read the letter by the lamp.", 4,
                       story_check) == []
    assert list(memory.characters) == ["katrin_holloway"]
    assert memory.characters["katrin_holloway"]["aliases"] == ["Katryn Holloway"]
    both = "Katrin Holloway handed the letter to Katryn Holloway, her cousin from the coast."
    assert create_cast(Memory(characters={"katrin_holloway": {
        "id": "katrin_holloway", "name": "Katrin Holloway"}}), extraction, both, 5,
        story_check) == ["new character: Katryn Holloway"]          # side by side: two


def test_an_invented_name_is_neither_a_character_nor_the_pov(project, tmp_path):
    book = tmp_path / "book.md"
    book.write_text("# Chapter 1\n\nThe launderer's map lay open on the table. Mara Quill "
                    "read it twice, then folded it. The launderer watched.\n", encoding="utf-8")
    model = ScriptedModel().add("extractor", {**answer("Mara reads a map."), "characters": [
        {"name": "The Launderer's Map", "state": "open"}, {"name": "Mara Quill",
                                                           "state": "reading"}]})
    with reconciled(project), offline_session(project, model) as session:
        import_manuscript(session, load_manuscript(book, "auto", 400))
    memory = load_memory(project.memory_dir)
    assert [c["name"] for c in memory.characters.values()] == ["Mara Quill"]
    scene = load_scene(project.scene_path(1))
    assert scene.pov == "Mara Quill" and scene.characters == ["Mara Quill"]


JUNK = {"1": ["She", "His", "Beneath", "Afterwards", "That", "Tobin"],
        "2": ["Point", "Keel", "Street", "Miss", "Thursday", "Tuesday"],
        "3": ["Edda Lorn", "Miss Harrow", "Tobin"]}


def junk_responder(body):
    """The extractor of a real run: every capitalized word a character, and Tuesday dead."""
    if stage_of(body) != "extractor":
        return "- Edda Lorn and Tobin walk out to Keel Point."
    piece = re.findall(r"\(piece (\d)\)", body["messages"][-1]["content"])[-1]
    return json.dumps({"summary": ["Edda Lorn walks to Keel Point.", "Tobin says nothing.",
                                   "Miss Harrow waits under the lamp."],
                       "facts": [], "characters": [{"name": n, "state": "seen"}
                                                   for n in JUNK[piece]],
                       "loops_opened": [], "loops_resolved": [], "relationships": [],
                       "present": JUNK[piece][-3:],
                       "status": [{"name": "Tuesday", "status": "dead", "how": "gone"}]})


def test_import_through_an_openai_server_makes_no_junk_characters(openai_project, tmp_path):
    book = tmp_path / "book.md"
    book.write_text(
        "# One\n\nShe came down Keel Street on Thursday. His coat was wet through. "
        "Beneath the lamp, Miss Harrow waited. Afterwards, Edda Lorn walked out to Keel "
        "Point with Tobin. That was the last of it. (piece 1)\n\n"
        "# Two\n\nOn Tuesday the tide came in over Keel Point. Miss Harrow said nothing to "
        "Tobin. Tobin kept to Keel Street until Thursday. (piece 2)\n\n"
        "# Three\n\nEdda Lorn found Miss Harrow at the harbour. \"That was Tuesday,\" said "
        "Tobin. Tuesday was gone. (piece 3)\n", encoding="utf-8")
    with FakeOpenAIServer(junk_responder) as server:
        result = invoke("import", str(book), "-p", "harbour", "--base-url",
                        server.base_url, env=cli_env())
    assert result.exit_code == 0, result.output
    memory = load_memory(openai_project / "memory")
    assert sorted(c["name"] for c in memory.characters.values()) == [
        "Edda Lorn", "Miss Harrow", "Tobin"]
    audit = invoke("audit", "-p", "harbour", "--json", env=cli_env())
    findings = json.loads(audit.output)["findings"]
    assert not [f for f in findings if "Tuesday" in f["message"] + f["against"]]


# -- the offline model on a piece with no plan POV or place ----------------------------
def test_the_offline_extractor_sums_up_a_piece_by_its_own_words(tmp_path, projects_dir):
    project = create_project(projects_dir / "plain", {"name": "plain", "premise": "A bell."},
                             config={"llm": {"provider": "offline"}})    # no protagonist
    manuscript = load_manuscript(write_book(tmp_path / "book.md", chapters=1), "auto", 400)
    with reconciled(project), offline_session(project, OfflineModel(seed=1)) as session:
        import_manuscript(session, manuscript)
    scenes = load_scenes(project.scenes_dir)
    assert [s.summary[0] for s in scenes] == [
        f"{who} came down to the harbour in chapter 1." for who in
        ("Ilse Varga", "Mara Quill", "Tobin Keel")]
    bullets = [b for s in scenes for b in s.summary]
    assert all(b in " ".join(manuscript.text.split()) for b in bullets), bullets
    assert load_memory(project.memory_dir).facts == []     # nothing made up


# -- the command line: the progress bar, Ctrl-C -------------------------------------------
FRAME = re.compile(r"importing  \[([#-]+)\]\s+(\d+)%")


def frames(output):
    """The progress bar's frames as (filled cells, percent)."""
    return [(bar.count("#"), int(pct)) for bar, pct in FRAME.findall(output)]


@pytest.fixture
def terminal(monkeypatch):
    """Click draws the bar only on a terminal; CliRunner's streams are not one."""
    import click._termui_impl
    monkeypatch.setattr(click._termui_impl, "isatty", lambda stream: True)


def ctrl_c_on_third_extraction(monkeypatch):
    calls = []
    complete = OfflineModel.complete

    def interrupted(self, request):
        if request.stage == "extractor":
            calls.append(1)
            if len(calls) == 3:       # once: the run after it goes on
                raise KeyboardInterrupt
        return complete(self, request)

    monkeypatch.setattr(OfflineModel, "complete", interrupted)


def test_the_progress_bar_moves_a_piece_at_a_time(project, tmp_path, terminal):
    book = write_book(tmp_path / "book.md", chapters=1)
    result = invoke("import", str(book), "-p", "harbour", env=cli_env())
    assert result.exit_code == 0
    assert frames(result.stderr) == [(0, 0), (12, 33), (24, 66), (36, 100)]
    assert result.stdout.splitlines() == ["imported 3 scenes as ticks 1–3 (375 words)",
                                          "memory: 1 characters; summaries made: none",
                                          "Next: novel tick -p harbour"]


def test_ctrl_c_says_what_landed_and_how_to_resume(project, tmp_path, terminal, monkeypatch):
    book = write_book(tmp_path / "book.md", chapters=1)
    ctrl_c_on_third_extraction(monkeypatch)
    result = invoke("import", str(book), "-p", "harbour", env=cli_env())
    assert result.exit_code == 130
    assert frames(result.stderr) == [(0, 0), (12, 33), (24, 66)]
    assert result.stderr.splitlines()[-1] == ("interrupted: 2 of 3 pieces are imported (2 in "
                                              "this run); run the same novel import again to "
                                              "resume")
    assert "Aborted!" not in result.output and result.stdout == ""
    assert scene_ticks(project.scenes_dir) == [1, 2]
    resumed = invoke("import", str(book), "-p", "harbour", env=cli_env())
    assert resumed.exit_code == 0
    assert resumed.stdout.splitlines()[0] == ("imported 1 scenes as ticks 3–3 (125 words), "
                                              "after 2 imported before")
    assert scene_ticks(project.scenes_dir) == [1, 2, 3]
