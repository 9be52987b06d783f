"""`novel outline`, `show`, `edit` and `regen`: on the offline model and through the real
openai SDK; each change an entry of the history; refused while another process holds the
project; a book without an outline written as before; the author's comments kept."""

from __future__ import annotations

import json
import sys

import pytest
import yaml

from novel_agent.history.store import History
from novel_agent.story.outline.curves import target_tension
from novel_agent.story.outline.file import load_outline
from novel_agent.story.project.folder import Project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.projects import annotate, comments_of, outline_project, set_llm
from tests.support.responders import outline_responder, stage_of, story_responder
from tests.support.stress_model import StressModel
from tests.support.ticking import NOW


def small(project) -> None:
    set_llm(project.root, outline__chapters=4, outline__beats_per_chapter=2,
            outline__scenes_per_chapter=2)


def test_outline_makes_it_level_by_level_and_refuses_to_make_it_twice(project, cli):
    small(project)
    out = cli("outline", "-p", "harbour").output.splitlines()
    assert out[0].startswith("model: offline model")
    assert [line.split()[:3] for line in out[1:5]] == [
        ["arc", "the", "arc"], ["acts", "3", "acts"], ["chapters", "4", "chapters"],
        ["beats", "8", "beats"]]
    assert out[3].split()[3:5] == ["3", "calls"] and out[4].split()[3:5] == ["4", "calls"]
    assert out[5] == ("wrote harbour/outline/outline.yaml: 3 acts, 4 chapters, 8 beats, "
                      "8 scenes planned")
    outline = load_outline(project.outline_file)
    assert [len(c.beats) for c in outline.chapters()] == [2, 2, 2, 2]
    assert [e.subject for e in History(project).entries()][:1] == [
        "outline made: 3 acts, 4 chapters, 8 beats, 8 scenes planned"]
    assert History(project).entries()[0].kind == "outline"
    before = project.outline_file.read_bytes()
    again = cli("outline", "-p", "harbour", ok=False)
    assert again.exit_code == 1 and again.output.count("\n") == 1
    assert "harbour has an outline (harbour/outline/outline.yaml)" in again.output
    assert "--force" in again.output and project.outline_file.read_bytes() == before
    set_llm(project.root, outline__chapters=5)
    assert "5 chapters" in cli("outline", "-p", "harbour", "--force").output
    assert [e.kind for e in History(project).entries()] == ["outline", "hand", "outline", "start"]


def test_the_offline_outline_is_the_same_every_time_and_tells_a_whole_story(project, cli):
    cli("outline", "-p", "harbour")
    first = project.outline_file.read_bytes()
    cli("outline", "-p", "harbour", "--force")
    assert project.outline_file.read_bytes() == first
    outline = load_outline(project.outline_file)
    assert "the drowned man's map" in outline.arc.ending
    assert len({c.title for c in outline.chapters()}) == 24             # no title twice
    assert len({b.what for b in outline.beats()}) > 30
    tensions = [b.tension for b in outline.beats()]
    assert max(tensions) == 10 and tensions[0] < 4 and tensions[-1] < tensions[-8]


def test_show_prints_the_tree_and_json(project, cli):
    small(project)
    cli("outline", "-p", "harbour")
    data = yaml.safe_load(project.outline_file.read_text())
    data["acts"][1]["chapters"][0]["locked"] = True                # chapter 2
    del data["acts"][0]["chapters"][0]["beats"][1]["tension"]      # the curve's, then
    project.outline_file.write_text(yaml.safe_dump(data, sort_keys=False))
    shown = cli("outline", "show", "-p", "harbour").output.splitlines()
    assert shown[0] == "harbour: 3 acts, 4 chapters, 8 beats, 8 scenes planned (curve three_act)"
    assert shown[1].startswith("arc: Mara Quill is drawn in") and shown[2].startswith("ending: ")
    assert shown[4].startswith("act 1  The Discovery")
    chapter = next(line for line in shown if line.startswith("  chapter 2 "))
    assert chapter.endswith("(2 scenes)  [locked]")
    beat = next(line for line in shown if line.startswith("    1.2 "))
    assert beat.split()[1:3] == ["tension", f"~{round(target_tension('three_act', 1.5 / 8))}"]
    data = json.loads(cli("outline", "show", "-p", "harbour", "--json").output)
    assert (data["project"], data["curve"], data["planned_scenes"]) == ("harbour", "three_act", 8)
    assert data["acts"][0]["chapters"][0]["beats"][1] == {
        "id": "1.2", "what": data["acts"][0]["chapters"][0]["beats"][1]["what"], "tension": 4}
    assert data["acts"][1]["chapters"][0]["locked"] is True


def test_a_book_without_an_outline_is_told_how_to_make_one_and_ticks_as_before(project, cli):
    for args in (("show",), ("edit",), ("regen", "--from", "1")):
        result = cli("outline", *args, "-p", "harbour", ok=False)
        assert result.exit_code == 1
        assert "harbour has no outline yet: make one with `novel outline -p harbour`" \
            in result.output
    cli("tick", "-p", "harbour", "-n", "2")
    assert not (project.root / "outline").exists()
    assert "outline" not in {e.kind for e in History(project).entries()}


def editor(tmp_path, *replacements: tuple[str, str]):
    """An $EDITOR that makes the nth replacement on its nth run."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys, pathlib\n"
        f"count = pathlib.Path({str(tmp_path / 'count')!r})\n"
        "n = int(count.read_text()) if count.exists() else 0\n"
        "count.write_text(str(n + 1))\n"
        f"old, new = {list(replacements)!r}[n]\n"
        "f = pathlib.Path(sys.argv[1])\n"
        "f.write_text(f.read_text().replace(old, new, 1))\n")
    return {"EDITOR": f"{sys.executable} {script}", "VISUAL": None}


def test_edit_is_saved_only_once_valid_and_a_bad_edit_leaves_the_file(project, cli, tmp_path):
    small(project)
    cli("outline", "-p", "harbour")
    path = project.outline_file
    original = path.read_text()
    first = next(l for l in original.splitlines() if l.startswith("      tension: "))
    line = original.splitlines().index(first) + 1
    env = editor(tmp_path, (first, "      tension: 12"), ("      tension: 12", "      tension: 7"))
    result = invoke("outline", "edit", "-p", "harbour", env=env, input="y\n")
    assert result.exit_code == 0, result.output
    error = next(l for l in result.output.splitlines() if l.startswith("not saved: "))
    assert error == (f"not saved: {path}:{line}: act 1, chapter 1, beat 1: 'tension' must be a "
                     "whole number from 0 to 10, not 12")
    assert result.output.endswith("saved harbour/outline/outline.yaml: 3 acts, 4 chapters, "
                                  "8 beats, 8 scenes planned\n")
    assert path.read_text() == original.replace(first, "      tension: 7", 1)
    assert History(project).entries()[0].subject == "outline edited"
    edited = path.read_text()
    (tmp_path / "count").unlink()
    env = editor(tmp_path, ("      tension: 7", "      tension: 12"))
    declined = invoke("outline", "edit", "-p", "harbour", env=env, input="n\n")
    assert declined.exit_code == 1 and declined.output.endswith(
        "Error: harbour/outline/outline.yaml left as it was\n")
    assert path.read_text() == edited
    path.write_text(edited.replace("      tension: 7", "      tension: 12", 1))   # by hand
    assert "'tension' must be a whole number" in cli("outline", "show", "-p", "harbour",
                                                     ok=False).output
    mend = editor(tmp_path, ("      tension: 12", "      tension: 6"))
    (tmp_path / "count").unlink()
    assert invoke("outline", "edit", "-p", "harbour", env=mend).exit_code == 0
    assert load_outline(path).beats()[0].tension == 6


def test_edit_regen_and_ticks_keep_the_authors_comments(project, cli, tmp_path):
    outline_project(project, chapters=3, beats=2, scenes=2)
    said = annotate(project.outline_file)
    cli("tick", "-p", "harbour", "-n", "2")
    mara = project.memory_dir / "characters" / "mara_quill.yaml"
    hers = annotate(mara)
    env = editor(tmp_path, ("title: Chapter 3", "title: The Bell"))
    assert invoke("outline", "edit", "-p", "harbour", env=env).exit_code == 0
    assert load_outline(project.outline_file).chapter(3).title == "The Bell"
    assert comments_of(project.outline_file) == said
    cli("outline", "regen", "--from", "2", "-p", "harbour")
    assert load_outline(project.outline_file).chapter(3).title != "The Bell"
    assert comments_of(project.outline_file) == said
    was = yaml.safe_load(mara.read_text())
    cli("tick", "-p", "harbour", "-n", "2")
    assert yaml.safe_load(mara.read_text()) != was and comments_of(mara) == hers


def test_regen_rewrites_from_a_chapter_keeping_what_is_locked(openai_project):
    """Through the real SDK: every outline call is asked under its JSON schema; a rewrite
    from chapter 2 keeps chapter 1, the locked chapter 3 and the locked beat 2.2."""
    set_llm(openai_project, outline__chapters=4, outline__beats_per_chapter=2)
    with FakeOpenAIServer(outline_responder) as server:
        made = invoke("outline", "-p", "harbour", "--base-url", server.base_url, ok=True)
        assert "wrote harbour/outline/outline.yaml: 3 acts, 4 chapters, 8 beats" in made.output
        asked = [r["json"] for r in server.requests if r["path"].endswith("/chat/completions")]
        assert len(asked) == 1 + 1 + 3 + 4 and {stage_of(b) for b in asked} == {"outline"}
        assert all(b["response_format"]["type"] == "json_schema" for b in asked)
        path = openai_project / "outline" / "outline.yaml"
        data = yaml.safe_load(path.read_text())
        chapters = [c for act in data["acts"] for c in act["chapters"]]
        assert [c["title"] for c in chapters] == ["Chapter 1", "Chapter 2", "Chapter 3",
                                                  "Chapter 4"]
        chapters[2]["locked"] = True
        chapters[1]["beats"][1]["locked"] = True
        chapters[1]["beats"][1]["what"] = "Mara keeps the map."
        for chapter in chapters:
            chapter["title"] += " (old)"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        server.requests.clear()
        rewrote = invoke("outline", "regen", "--from", "2", "-p", "harbour", "--base-url",
                         server.base_url, ok=True)
    assert rewrote.output.splitlines()[-1] == ("rewrote chapters 2–4 in harbour/outline/"
                                               "outline.yaml, but for 3 (locked)")
    after = load_outline(path)
    assert [c.title for c in after.chapters()] == ["Chapter 1 (old)", "Chapter 2",
                                                   "Chapter 3 (old)", "Chapter 4"]
    assert [b.what for b in after.chapter(2).beats] == ["Beat 1 of chapter 2 happens.",
                                                        "Mara keeps the map."]
    kinds = [(e.kind, e.subject) for e in History(Project(openai_project)).entries()]
    assert kinds[0] == ("outline", "outline rewritten from chapter 2: chapters 2, 4")
    assert kinds[1][0] == "hand"                 # the edit by hand, recorded before it


def test_a_garbage_answer_is_one_line_and_leaves_no_outline(openai_project):
    def garbage(body):
        return "I would rather write a poem." if stage_of(body) == "outline" \
            else story_responder(body)
    with FakeOpenAIServer(garbage) as server:
        result = invoke("outline", "-p", "harbour", "--base-url", server.base_url, ok=False)
    error = result.output.splitlines()[-1]
    assert error.startswith("Error: outline answer is not a JSON object: 'I would rather")
    assert error.endswith("(after one repair attempt)")
    assert not (openai_project / "outline").exists()
    assert len([r for r in server.requests if r["path"].endswith("/chat/completions")]) == 2


@pytest.mark.parametrize("args", [(), ("regen", "--from", "1"), ("edit",)])
def test_no_outline_command_changes_a_project_another_process_holds(project, cli, args):
    small(project)
    if args:
        cli("outline", "-p", "harbour")
    before = project.outline_file.read_bytes() if args else None
    project.acquire_lock()
    try:
        result = cli("outline", *args, "-p", "harbour", *(["--force"] if not args else []),
                     ok=False)
    finally:
        project.release_lock()
    assert result.exit_code == 1 and "is busy" in result.output and "--wait" in result.output
    assert (project.outline_file.read_bytes() if args else project.outline_file.exists()) == \
        (before if args else False)


def test_regen_keeps_the_beats_the_book_has_landed(project, cli):
    outline_project(project, chapters=3, beats=2, scenes=2)
    before = load_outline(project.outline_file)
    cli("tick", "-p", "harbour", "-n", "3")         # the offline model lands 1.1, 1.2, 2.1
    out = cli("outline", "regen", "--from", "1", "-p", "harbour").output
    assert out.splitlines()[-1] == ("rewrote chapters 1–3 in harbour/outline/outline.yaml, "
                                    "but for 1 (landed)")
    after = load_outline(project.outline_file)

    def said(number):
        chapter = after.chapter(number)
        return [chapter.title, *(b.what for b in chapter.beats)]
    assert said(1) == ["Chapter 1", "Beat 1 of chapter 1 happens.",     # its beats landed:
                       "Beat 2 of chapter 1 happens."]                  # kept whole
    assert said(2)[1] == "Beat 1 of chapter 2 happens."                 # landed: kept
    assert said(2)[0] != "Chapter 2" and said(2)[2] != "Beat 2 of chapter 2 happens."
    assert before.chapter(3).title not in said(3)


def test_novel_log_shows_a_revision_at_a_checkpoint(project, cli):
    outline_project(project, chapters=3, beats=2, scenes=2)
    with reconciled(project), Session.open(project, project.config(), now=lambda: NOW,
                                           make_model=lambda: StressModel()) as session:
        for _ in range(3):           # it lands no beat: chapter 1 closes at its stretch
            tick(session)
    lines = cli("log", "-p", "harbour").output.splitlines()
    revised = [line for line in lines if "outline revised" in line]
    assert len(revised) == 1 and revised[0].split()[1:3] == ["tick", "3"]
    assert revised[0].split("outline revised ")[1].startswith(
        "at chapter 2: 2 beats missed") and revised[0].endswith("[outline/outline.yaml]")
