"""The Outline page of `novel serve`: without an outline it says how to make one; with one,
the acts, chapters and beats done or to come, the tension chart (target against realized)
and the loops with their payoffs; a part not locked edited in the page under the checks of
`novel outline edit` (a refused edit keeps what was typed and leaves the file), a locked
part refused, and a part changed in the file since the page was made not written over; an
edit keeps the author's comments in the file."""

from __future__ import annotations

import html
import re

import yaml

from novel_agent.history.store import History
from novel_agent.story.outline.file import load_outline
from tests.support.projects import annotate, comments_of, outline_project
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving

SECRET = "test-secret"


def message(page: str) -> str:
    found = re.search(r'<p class="message[^"]*" role="status">(.*?)</p>', page, re.S)
    assert found, page[:2000]
    return html.unescape(found.group(1))


def form_of_part(page: str, key: str) -> str:
    """The edit form of part `key` ("chapter-3", "beat-3-1") on the page, with its <details>."""
    found = re.search(rf'<details class="edit"( open)?><summary>edit</summary>\s*<form[^>]*'
                      rf'id="edit-{key}">(.*?)</form>', page, re.S)
    assert found, key
    return ("open " if found.group(1) else "") + found.group(2)


def value(form: str, name: str) -> str:
    found = re.search(rf'<textarea name="{name}"[^>]*>(.*?)</textarea>|<input [^>]*name="{name}"'
                      rf'[^>]*value="([^"]*)"', form, re.S)
    assert found, name
    return html.unescape(found.group(1) if found.group(1) is not None else found.group(2))


def test_without_an_outline_the_page_says_how_to_make_one(project, projects_dir):
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/outline")
        book = client.get("/p/harbour/book")
        refused = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "arc",
                                                     "summary": "x", "ending": "y"})
        missing = client.get("/p/nowhere/outline")
    assert page.status == 200 and missing.status == 404
    assert "harbour has no outline yet: make one with <code>novel outline -p harbour</code>" \
        in page.text
    assert re.search(r'<nav>.*href="[^"]*/p/harbour/outline">Outline</a>', book.text, re.S)
    assert refused.status == 422 and not project.outline_file.exists()
    assert "harbour has no outline yet" in message(refused.text)


def test_the_page_shows_the_book_against_its_outline(project, projects_dir):
    outline_project(project, chapters=3, beats=2, scenes=2)
    run_ticks(project, 3)             # the offline model lands 1.1, 1.2, 2.1; 2.2 is next
    loops = project.memory_dir / "loops"       # the tick's loop (payoff: chapter 3), and two by hand
    (loops / "the_bell.yaml").write_text("id: the_bell\ndescription: who rings the bell\n"
                                          "status: progressing\nopened_in: 1\npayoff: '2.2'\n")
    (loops / "the_key.yaml").write_text("id: the_key\ndescription: what the key opens\n"
                                         "status: resolved\nopened_in: 1\nresolved_in: 2\n"
                                         "payoff: '9'\n")
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/outline").text
    beats = {beat: state for state, beat in re.findall(
        r'<li class="beat at-([a-z-]+)" id="beat-(\d-\d)"', page)}
    assert beats == {"1-1": "done", "1-2": "done", "2-1": "done", "2-2": "now",
                     "3-1": "to-come", "3-2": "to-come"}
    chapters = dict(re.findall(r'<div class="outline-chapter at-([a-z-]+)" id="chapter-(\d)"',
                               page))
    assert chapters == {"done": "1", "now": "2", "to-come": "3"}
    assert "act 2 of 3, chapter 2 of 3" in page and "3 of 6 beats done" in page
    # the chart: the target through the six beats, a dot per scene rated, linked to it
    chart = re.search(r'<svg class="tension".*?</svg>', page, re.S).group(0)
    target = re.search(r'<polyline class="target" points="([^"]+)"', chart).group(1)
    assert len(target.split()) == 6
    dots = re.findall(r'<a href="[^"]*/p/harbour/scene/(\d+)"><circle class="scene-tension"', chart)
    assert dots == ["1", "2", "3"]
    xs = [float(x) for x in re.findall(r'<circle class="scene-tension" cx="([\d.]+)"', chart)]
    (now,) = [float(x) for x in re.findall(r'<line class="now" x1="([\d.]+)"', chart)]
    slot = xs[1] - xs[0]                          # a planned scene's width: 2 to a chapter
    assert abs((xs[2] - xs[1]) - slot) < 0.2 and abs((now - xs[2]) - slot) < 0.2
    # the loops, each with where it is meant to pay off
    rows = [[html.unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in
             re.findall(r"<td>(.*?)</td>", row)]
            for row in re.findall(r'<tr id="loop-\d+"[^>]*>(.*?)</tr>', page)]
    assert rows == [
        ["who rings the bell due", "progressing", "beat 2.2: Beat 2 of chapter 2 happens.", "1",
         "–"],
        ["where a lantern came from", "open", "chapter 3: Chapter 3", "3", "–"],
        ["what the key opens", "resolved", "9 (not in the outline: the last chapter)", "1", "2"]]


def test_an_edit_is_saved_as_novel_outline_edit_saves_it(project, projects_dir):
    outline_project(project, chapters=3, beats=2, scenes=2)
    before = load_outline(project.outline_file)
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/outline").text
        form = form_of_part(page, "chapter-2")
        saved = client.post("/p/harbour/outline", {
            "csrf": SECRET, "part": "chapter:2", "was": value(form, "was"),
            "title": "The Cold Ledger", "purpose": "Mara reads\r\nthe ledger.", "scenes": "3"})
        beat = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "beat:3.1",
                                                   "what": "The door opens.", "tension": "9"})
        again = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "beat:3.1",
                                                    "what": "The door opens.", "tension": "9"})
    assert saved.status == 200 and message(saved.text) == "saved outline/outline.yaml: chapter 2"
    assert "Chapter 2 · The Cold Ledger" in saved.text
    after = load_outline(project.outline_file)
    chapter = after.chapter(2)
    assert (chapter.title, chapter.purpose, chapter.scenes) == ("The Cold Ledger",
                                                                "Mara reads the ledger.", 3)
    assert chapter.beats == before.chapter(2).beats and after.arc == before.arc
    assert beat.status == 200 and after.chapter(3).beats[0].what == "The door opens."
    assert load_outline(project.outline_file).chapter(3).beats[0].tension == 9
    assert again.status == 200 and message(again.text) == "beat 3.1 unchanged: nothing saved"
    text = project.outline_file.read_text()
    assert re.search(r"title: The Cold Ledger\n +purpose: Mara reads the ledger\.\n +scenes: 3\n"
                     r" +beats:\n", text)                        # laid out as the file was
    assert [e.subject for e in History(project).entries()][:2] == ["outline edited"] * 2


def test_an_edit_keeps_the_authors_comments_and_the_files_layout(project, projects_dir):
    outline_project(project, chapters=3, beats=2, scenes=2)
    said = annotate(project.outline_file)
    with serving(make_site(projects_dir)) as client:
        arc = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "arc",
                                                  "summary": "Mara follows the drowned map.",
                                                  "ending": "She shuts the door."})
        beat = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "beat:2.1",
                                                   "what": "The bell rings.", "tension": "6"})
    assert arc.status == beat.status == 200
    assert comments_of(project.outline_file) == said
    text = project.outline_file.read_text()
    assert "arc:   # mine: its first key\n  summary: Mara follows the drowned map.  # mine: a " \
           "key within\n" in text
    assert "    - id: '2.1'\n      what: The bell rings.\n      tension: 6\n" in text
    outline = load_outline(project.outline_file)
    assert (outline.arc.summary, outline.chapter(2).beats[0].tension) == \
        ("Mara follows the drowned map.", 6)


def test_a_refused_edit_keeps_what_was_typed_and_leaves_the_file(project, projects_dir):
    outline_project(project, chapters=3, beats=2, scenes=2)
    before = project.outline_file.read_bytes()
    typed = {"what": "Mara <b>burns</b> the map.", "tension": "12"}
    with serving(make_site(projects_dir)) as client:
        refused = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "beat:1.2",
                                                     **typed})
        words = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "chapter:1",
                                                    "title": "", "purpose": "p",
                                                    "scenes": "many"})
    assert refused.status == 422
    said = message(refused.text)
    assert said == (f"not saved: {project.outline_file}: act 1, chapter 1, beat 2: 'tension' "
                    "must be a whole number from 0 to 10, not 12")
    form = form_of_part(refused.text, "beat-1-2")
    assert form.startswith("open ")                       # the part's form, opened
    assert {k: value(form, k) for k in typed} == typed
    assert "<b>burns</b>" not in refused.text                 # escaped, as typed
    assert words.status == 422 and "chapter 1: 'title' must be text" in message(words.text)
    assert value(form_of_part(words.text, "chapter-1"), "scenes") == "many"
    assert project.outline_file.read_bytes() == before


def test_a_locked_part_is_shown_not_edited(project, projects_dir):
    outline_project(project, chapters=3, beats=2, scenes=2)
    data = yaml.safe_load(project.outline_file.read_text())
    data["acts"][1]["locked"] = True                                  # act 2: chapter 2
    data["acts"][2]["chapters"][0]["beats"][1]["locked"] = True       # beat 3.2
    project.outline_file.write_text(yaml.safe_dump(data, sort_keys=False))
    before = project.outline_file.read_bytes()
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/outline").text
        refused = [client.post("/p/harbour/outline", {"csrf": SECRET, "part": part, **fields})
                   for part, fields in (("beat:2.1", {"what": "Gone.", "tension": "3"}),
                                        ("chapter:2", {"title": "New", "scenes": "2"}),
                                        ("beat:3.2", {"what": "Gone.", "tension": "3"}))]
        allowed = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "beat:3.1",
                                                     "what": "Still free.", "tension": ""})
        unknown = [client.post("/p/harbour/outline", {"csrf": SECRET, "part": part,
                                                      "what": "x"}) for part in
                   ("beat:9.1", "scene:1", "")]
    assert 'id="edit-chapter-2"' not in page and 'id="edit-beat-2-1"' not in page
    assert 'id="edit-act-2"' not in page and 'id="edit-beat-3-2"' not in page
    assert 'id="edit-beat-3-1"' in page and 'id="edit-chapter-3"' in page
    assert page.count('<span class="lock"') == 5       # act 2, chapter 2, its 2 beats, 3.2
    assert [r.status for r in refused] == [422, 422, 422]
    assert [message(r.text).split(": ", 2)[2] for r in refused] == [
        "beat 2.1 is locked (locked: true on act 2): unlock it in the file to edit it",
        "chapter 2 is locked (locked: true on act 2): unlock it in the file to edit it",
        "beat 3.2 is locked (locked: true on beat 3.2): unlock it in the file to edit it"]
    assert 'id="kept-beat-2-1"' in refused[0].text and "Gone." in refused[0].text
    assert allowed.status == 200
    assert [message(r.text).split(": ", 2)[2] for r in unknown] == [
        "the outline has no beat 9.1 to edit",
        "no part 'scene:1' to edit: a part is arc, act:N, chapter:N or beat:ID",
        "no part '' to edit: a part is arc, act:N, chapter:N or beat:ID"]
    after = load_outline(project.outline_file)
    assert after.chapter(3).beats[0].what == "Still free."
    assert after.chapter(3).beats[0].tension is None                  # empty: the curve's
    assert after.chapter(2) == load_outline_from(before, project).chapter(2)


def load_outline_from(text: bytes, project):
    from novel_agent.story.outline.file import parse_outline

    return parse_outline(text.decode(), str(project.outline_file))


def test_a_part_changed_in_the_file_meanwhile_is_not_written_over(project, projects_dir):
    outline_project(project, chapters=3, beats=2, scenes=2)
    with serving(make_site(projects_dir)) as client:
        was = value(form_of_part(client.get("/p/harbour/outline").text, "arc"), "was")
        project.outline_file.write_text(project.outline_file.read_text().replace(
            "She shuts the door.", "She opens the door."))                   # another hand
        edited = project.outline_file.read_bytes()
        stale = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "arc", "was": was,
                                                   "summary": "Mine.", "ending": "Mine too."})
    assert stale.status == 422
    assert "the arc changed in the file since this page was made" in message(stale.text)
    assert value(form_of_part(stale.text, "arc"), "ending") == "Mine too."
    assert project.outline_file.read_bytes() == edited


def test_an_edit_while_a_run_holds_the_project_is_refused(project, projects_dir):
    outline_project(project, chapters=3, beats=2, scenes=2)
    before = project.outline_file.read_bytes()
    project.acquire_lock()
    try:
        with serving(make_site(projects_dir)) as client:
            busy = client.post("/p/harbour/outline", {"csrf": SECRET, "part": "beat:1.1",
                                                      "what": "Typed.", "tension": "4"})
            forged = client.post("/p/harbour/outline", {"part": "beat:1.1", "what": "x"})
    finally:
        project.release_lock()
    assert busy.status == 409 and "is busy" in message(busy.text)
    assert value(form_of_part(busy.text, "beat-1-1"), "what") == "Typed."
    assert forged.status == 403
    assert project.outline_file.read_bytes() == before


def test_a_broken_outline_is_one_line_on_the_page(project, projects_dir):
    outline_project(project)
    project.outline_file.write_text(project.outline_file.read_text().replace(
        "scenes: 2", "scenes: lots", 1))
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/outline")
    assert page.status == 200
    problem = re.search(r'id="outline-problem"[^>]*>(.*?)</p>', page.text, re.S).group(1)
    assert "'scenes' must be a whole number from 1 to 1000, not 'lots'" in html.unescape(problem)
    assert "novel outline edit -p harbour" in page.text


def test_the_book_page_downloads_the_manuscript_as_docx(project, projects_dir):
    run_ticks(project, 2)
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/book").text
        made = client.post("/p/harbour/export", {"csrf": SECRET, "format": "docx",
                                                 "chapters": "auto"})
        location = made.headers["location"]
        got = client.get(location[location.index("/p/"):])
    assert '<button type="submit" name="format" value="docx" id="export-docx">docx</button>' \
        in page
    assert made.status == 303 and location.endswith("/p/harbour/download/harbour.docx")
    assert got.status == 200 and got.headers["content-type"] == (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    assert 'filename="harbour.docx"' in got.headers["content-disposition"]
    assert (project.root / "export" / "harbour.docx").read_bytes()[:2] == b"PK"
