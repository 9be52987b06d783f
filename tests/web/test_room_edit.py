"""The writer's room in `novel serve`, part one, over HTTP: a scene edited and revised in
the page (its file written as the scene file is, the revise's report shown, a second
tab's save refused with a diff, rewriting what follows after a confirmation), the book's
continuity findings and a scene's, and the tick the audit held, accepted, dropped or
sent back with a note. Each refusal (a daemon holding the project, a bad form) leaves
every file as it was and the form as typed."""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import replace

import pytest

from novel_agent.audit.held import read_held
from novel_agent.history.store import History
from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import load_scene, word_count
from novel_agent.tick.session import Session
from novel_agent.tick.stages.audit import audit_project
from tests.audit.test_audit_cli import three_scenes
from tests.audit.test_audit_policy import held_tick_two
from tests.revision.test_revise import NEW5, NEW_X, first_run
from tests.support.audit_cases import GOOD, PLAN2, extraction
from tests.support.projects import files_of
from tests.support.scripted import ScriptedModel
from tests.support.web_server import make_site, serving
from tests.web.test_serve_forms import field

SECRET = "test-secret"


def scripted(monkeypatch, model: ScriptedModel) -> ScriptedModel:
    """The sessions the pages open answer with `model` (the offline model where it has
    nothing queued), as a project whose provider answered so would."""
    real = Session.open
    model.otherwise = model.otherwise or OfflineModel(seed=0)

    def opening(*args, **kwargs):
        kwargs.pop("make_model", None)
        return real(*args, make_model=lambda: model, **kwargs)
    monkeypatch.setattr(Session, "open", opening)
    return model


def opened_editor(client, tick: int = 5) -> dict[str, str]:
    """The editor's form as the page gives it."""
    page = client.get(f"/p/harbour/scene/{tick}/edit")
    assert page.status == 200, page.text
    return {"title": field(page.text, "title"), "prose": field(page.text, "prose"),
            "base": value_of(page.text, "base"),
            "csrf": SECRET}


def sha(project: Project, tick: int) -> str:
    return hashlib.sha256(project.scene_path(tick).read_bytes()).hexdigest()


def value_of(page: str, name: str) -> str:
    """What the input named `name` holds (its attributes in any order), or a textarea."""
    for tag in re.findall(r"<input\b[^>]*>", page):
        if f'name="{name}"' in tag:
            return html.unescape(re.search(r'value="([^"]*)"', tag).group(1))
    return field(page, name)


def links(page: str) -> str:
    """A page with its links' origin left out (url_for makes them absolute)."""
    return re.sub(r'"http://127\.0\.0\.1:\d+/', '"/', page)


def text_of(page: str) -> str:
    """A page's main text, tags out, entities read, spaces collapsed."""
    main = page.split("<main>", 1)[-1]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", main)).split())


# -- editing and revising ---------------------------------------------------------------
def test_an_edited_scene_is_saved_as_its_file_and_revised_with_the_report(project, projects_dir,
                                                                          monkeypatch):
    first_run(project)
    before = load_scene(project.scene_path(5))
    scripted(monkeypatch, ScriptedModel().add("extractor", NEW_X))
    with serving(make_site(projects_dir)) as client:
        scene = client.get("/p/harbour/scene/5").text
        form = opened_editor(client)
        assert form["prose"] == before.body and form["title"] == before.title
        assert form["base"] == sha(project, 5)
        saved = client.post("/p/harbour/scene/5/edit", {**form, "title": "The Salt Bridge",
                                                        "prose": NEW5.replace("\n", "\r\n")})
    assert 'href="/p/harbour/scene/5/edit"' in links(scene)
    assert saved.status == 200, saved.text
    after = load_scene(project.scene_path(5))
    assert after == replace(before, title="The Salt Bridge", body=NEW5.strip(),
                            summary=NEW_X["summary"], words=word_count(NEW5),
                            tokens=after.tokens)                 # the front matter kept
    shown = text_of(saved.text)
    assert "Scene 5 revised" in shown
    lost = shown.split("What memory no longer holds", 1)[1].split("What is new")[0]
    gained = shown.split("What is new", 1)[1].split("Scenes that rely")[0]
    assert "Mara Quill hid the ivory astrolabe under the mill stone" in lost
    assert "Tobin Keel waits at the Salt Bridge" in gained
    assert "Tobin Keel waits at the Salt Bridge" not in lost
    assert ('<a href="/p/harbour/scene/8">scene 8</a>: scene 8 mentions “ivory astrolabe”, '
            "which scene 5 no longer says") in links(saved.text)
    assert "remade: checkpoint_010" in shown.lower() or "Summaries remade: checkpoint_010" \
        in shown
    assert History(project).head().subject.startswith("revised scene 5:")


def test_a_second_tab_s_save_is_refused_with_a_diff_and_keeps_its_text(project, projects_dir):
    from tests.support.ticking import run_ticks
    run_ticks(project, 6)
    with serving(make_site(projects_dir)) as client:
        first, second = opened_editor(client), opened_editor(client)
        one = client.post("/p/harbour/scene/5/edit", {
            **first, "prose": first["prose"] + "\n\nThe first tab's new paragraph."})
        on_disk, moved = files_of(project.root), sha(project, 5)
        typed = {**second, "title": "Two <tabs>",
                 "prose": second["prose"] + "\n\nThe second tab's <b>own</b> line."}
        refused = client.post("/p/harbour/scene/5/edit", typed)
        unchanged = files_of(project.root)
        again = client.post("/p/harbour/scene/5/edit", {
            **typed, "base": value_of(refused.text, "base")})
    assert one.status == 200 and "Scene 5 revised" in one.text
    assert refused.status == 409 and unchanged == on_disk
    assert "scene 5 was changed since this editor was opened" in text_of(refused.text)
    assert field(refused.text, "prose") == typed["prose"].strip()
    assert field(refused.text, "title") == "Two <tabs>"
    assert value_of(refused.text, "base") == moved != second["base"]
    diff = html.unescape(re.sub(r"<[^>]+>", "", refused.text.split('id="conflict-diff">')[1]
                                .split("</pre>")[0]))
    assert diff.startswith("--- scenes/scene_005.md (on disk now)\n+++ your text\n")
    assert "\n-The first tab's new paragraph." in diff
    assert "\n+The second tab's <b>own</b> line." in diff and "\n-title: " not in diff[:60]
    assert "<b>own</b>" not in refused.text                       # escaped, never markup
    assert "&lt;b&gt;own&lt;/b&gt;" in refused.text
    assert again.status == 200          # saved over the first, after reading the diff
    body = load_scene(project.scene_path(5)).body
    assert "The second tab's <b>own</b> line." in body and "first tab" not in body


def test_a_save_is_refused_with_the_text_kept_while_a_daemon_holds_the_project(
        project, projects_dir):
    from tests.support.ticking import run_ticks
    run_ticks(project, 3)
    with serving(make_site(projects_dir)) as client:
        form = opened_editor(client, 2)
        typed = {**form, "prose": "A new scene two."}
        before = files_of(project.root)
        with Project(project.root).locked():          # as `novel run` holds it
            busy = client.post("/p/harbour/scene/2/edit", typed)
            revise = client.post("/p/harbour/scene/2/revise", {"csrf": SECRET})
        after = files_of(project.root)
    assert busy.status == 409 and "not saved: project &#39;harbour&#39; is busy" in busy.text
    assert field(busy.text, "prose") == "A new scene two."
    assert revise.status == 409 and "is busy" in revise.text
    assert after == before


@pytest.mark.parametrize("change, status, said", [
    ({"prose": "  \r\n "}, 422, "the scene&#39;s text is empty"),
    ({"prose": "x" * 200_001}, 422, "200,001 characters, over the 200,000"),
    ({"title": "t" * 201}, 422, "the title is 201 characters"),
    ({"base": ""}, 422, "the form does not say which text it was opened on"),
    ({"base": "0" * 64}, 409, "scene 2 was changed since this editor was opened"),
    ({"csrf": "forged"}, 403, "refused: the form did not come from this server"),
])
def test_a_bad_form_is_refused_and_nothing_is_written(project, projects_dir, change, status,
                                                      said):
    from tests.support.ticking import run_ticks
    run_ticks(project, 3)
    with serving(make_site(projects_dir)) as client:
        form = {**opened_editor(client, 2), "prose": "Typed <here>.", **change}
        before = files_of(project.root)
        answer = client.post("/p/harbour/scene/2/edit", form)
        missing = client.get("/p/harbour/scene/9/edit")
    assert answer.status == status and said in answer.text, answer.text[-1500:]
    if status != 403:
        assert field(answer.text, "prose") == form["prose"]
    assert files_of(project.root) == before
    assert missing.status == 404 and "no scene 9 in harbour" in missing.text


def test_an_unchanged_text_writes_nothing_and_a_hand_edit_is_revised_from_the_page(
        project, projects_dir):
    from tests.support.ticking import run_ticks
    run_ticks(project, 3)
    with serving(make_site(projects_dir)) as client:
        before = files_of(project.root)
        same = client.post("/p/harbour/scene/2/edit", opened_editor(client, 2))
        unchanged = files_of(project.root)
        path = project.scene_path(2)
        path.write_text(path.read_text().rstrip() + "\n\nA line added by hand.\n")
        revised = client.post("/p/harbour/scene/2/revise", {"csrf": SECRET})
    assert same.status == 200 and "Scene 2 unchanged" in same.text
    assert "nothing saved, nothing revised" in same.text and unchanged == before
    assert revised.status == 200 and "Scene 2 revised" in revised.text
    assert History(project).head().subject.startswith("revised scene 2:")


def test_rewriting_what_follows_asks_first_then_keeps_the_later_scenes_under_a_tag(
        project, projects_dir):
    from tests.support.browser import wait_for
    from tests.support.ticking import run_ticks
    run_ticks(project, 5)
    old4 = project.scene_path(4).read_bytes()
    with serving(make_site(projects_dir)) as client:
        form = {**opened_editor(client, 3), "rewrite_after": "1"}
        form["prose"] += "\n\nThe storm came ashore."
        before = files_of(project.root)
        asked = client.post("/p/harbour/scene/3/edit", form)
        back = client.post("/p/harbour/scene/3/edit", {**form, "back": "1"})
        untouched = files_of(project.root)
        done = client.post("/p/harbour/scene/3/edit", {**form, "confirm": "yes"})
        kept = History(project).git.resolve("refs/tags/kept/main-5")
        wait_for(lambda: project.tick() == 5 and "tick 5" in
                 (project.log_dir / "daemon.log").read_text(errors="replace"),
                 60, "the later scenes written again")
    assert asked.status == 200 and untouched == before
    said = text_of(asked.text)
    assert "take away scenes 4–5 (2 scenes)" in said and "kept in the history under the " \
        "tag kept/main-5" in said and "Scenes 1–3 are kept as they are." in said
    assert value_of(asked.text, "prose") == form["prose"]          # carried, hidden
    assert back.status == 200 and field(back.text, "prose") == form["prose"]
    assert 'name="rewrite_after" value="1" checked' in back.text
    assert done.status == 200, done.text
    shown = text_of(done.text)
    assert "Scenes 4–5 were taken away, kept in the history under the tag kept/main-5" in shown
    assert "is writing the 2 scenes again" in shown
    assert kept is not None
    assert History(project).git.run("show", "kept/main-5:scenes/scene_004.md") == old4
    assert "The storm came ashore." in load_scene(project.scene_path(3)).body


def test_rewriting_after_the_last_scene_is_refused_saying_why(project, projects_dir):
    from tests.support.ticking import run_ticks
    run_ticks(project, 3)
    with serving(make_site(projects_dir)) as client:
        form = {**opened_editor(client, 3), "rewrite_after": "1", "prose": "The end."}
        before = files_of(project.root)
        answer = client.post("/p/harbour/scene/3/edit", form)
    assert answer.status == 422 and "scene 3 is the last scene" in answer.text
    assert field(answer.text, "prose") == "The end." and files_of(project.root) == before


# -- continuity -------------------------------------------------------------------------
def test_the_continuity_page_shows_the_findings_by_subtype_with_both_quotes_and_the_ced(
        project, projects_dir):
    three_scenes(project)
    book = audit_project(project, project.config())
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/continuity")
        two = client.get("/p/harbour/scene/2/findings")
        one = client.get("/p/harbour/scene/1/findings")
        scene = client.get("/p/harbour/scene/2")
        none = client.get("/p/harbour/scene/7/findings")
    assert page.status == 200
    shown = text_of(page.text)
    assert f"CED {book.ced:.3f} (2 / {book.words / 10_000:.2f} × 10,000 words)" in shown
    assert shown.index("style (narrative style): 1") < shown.index(
        "causal logic (timeline and plot): 1")
    assert ("critical scene 2 : Tobin Keel acts or speaks, dead since scene 1 Tobin laughed "
            "and poured the tea for Mara. vs Tobin Keel is dead: drowned at the weir "
            "( scene 1 )") in shown
    assert '<a href="/p/harbour/scene/2">scene 2</a>' in links(page.text)
    assert '(<a href="/p/harbour/scene/1">scene 1</a>)' in links(page.text)
    assert 'href="/p/harbour/continuity" class="here"' in links(page.text)
    assert two.status == 200 and "Tobin Keel acts or speaks, dead since scene 1" in two.text
    assert "the title of scene 1" not in two.text
    assert one.status == 200 and "no findings in scene 1" in one.text
    assert 'hx-get="/p/harbour/scene/2/findings"' in links(scene.text)
    assert none.status == 404


def test_a_book_with_no_finding_and_one_with_no_scene(project, projects_dir):
    with serving(make_site(projects_dir)) as client:
        empty = client.get("/p/harbour/continuity")
        from tests.support.ticking import run_ticks
        run_ticks(project, 2)
        clean = client.get("/p/harbour/continuity")
    assert empty.status == 200 and "No scene yet: nothing to audit." in empty.text
    assert clean.status == 200 and "CED 0.000" in text_of(clean.text)


# -- the held tick ------------------------------------------------------------------------
def test_a_held_draft_is_read_then_accepted(project, projects_dir):
    held_tick_two(project)
    with serving(make_site(projects_dir)) as client:
        notice = client.get("/p/harbour/continuity")
        page = client.get("/p/harbour/held")
        before = files_of(project.root)
        with Project(project.root).locked():
            busy = client.post("/p/harbour/held/accept", {"csrf": SECRET})
        unchanged = files_of(project.root)
        accepted = client.post("/p/harbour/held/accept", {"csrf": SECRET})
        after = client.get("/p/harbour/held")
    assert "Tick 2 (“Tea”) is held by the continuity audit with 1 finding" in text_of(notice.text)
    assert 'href="/p/harbour/held"' in links(notice.text)
    shown = text_of(page.text)
    assert page.status == 200 and "Tick 2 is held: “Tea”" in shown
    assert "Tobin laughed and poured the tea for Mara." in page.text
    assert "Tobin Keel acts or speaks, dead since scene 1" in shown
    assert "cannot be accepted" not in shown
    assert busy.status == 409 and "not accepted: project &#39;harbour&#39; is busy" in busy.text
    assert unchanged == before
    assert accepted.status == 200, accepted.text
    assert "Tick 2 accepted as it was held" in text_of(accepted.text)
    assert '<a href="/p/harbour/scene/2">scene 2: “Tea”</a>' in links(accepted.text)
    assert project.tick() == 2 and read_held(project.novel_dir) is None
    assert "No tick is held" in after.text


def test_an_edited_held_draft_cannot_be_accepted_and_says_why(project, projects_dir):
    held_tick_two(project)
    draft = project.drafts_dir / "draft_002.md"
    draft.write_text(draft.read_text().replace("Tobin laughed", "Tobin wept"))
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/held")
        before = files_of(project.root)
        refused = client.post("/p/harbour/held/accept", {"csrf": SECRET})
    assert "It cannot be accepted as it is" in page.text and "Tobin wept" in page.text
    assert 'id="accept-held" disabled' in page.text
    assert refused.status == 422 and "was edited after it was held" in refused.text
    assert files_of(project.root) == before


def test_dropping_a_held_draft_asks_first(project, projects_dir):
    held_tick_two(project)
    with serving(make_site(projects_dir)) as client:
        before = files_of(project.root)
        asked = client.post("/p/harbour/held/drop", {"csrf": SECRET})
        untouched = files_of(project.root)
        with Project(project.root).locked():
            busy = client.post("/p/harbour/held/drop", {"csrf": SECRET, "confirm": "yes"})
        still = files_of(project.root)
        dropped = client.post("/p/harbour/held/drop", {"csrf": SECRET, "confirm": "yes"})
        again = client.post("/p/harbour/held/drop", {"csrf": SECRET, "confirm": "yes"})
    said = text_of(asked.text)
    assert asked.status == 200 and untouched == before
    assert "Drop the held tick 2?" in said and "Nothing of them is kept" in said
    assert "the next tick writes tick 2 again" in said
    assert busy.status == 409 and "not dropped: project &#39;harbour&#39; is busy" in busy.text
    assert still == before
    assert dropped.status == 200
    assert "Dropped the held tick 2 “Tea”; the next tick writes it again" in text_of(dropped.text)
    assert read_held(project.novel_dir) is None and project.tick() == 1
    assert not (project.drafts_dir / "draft_002.md").exists()
    assert again.status == 422 and "harbour has no tick held by the continuity audit" in again.text


def test_a_held_draft_sent_back_with_a_note_is_written_again_told_it(project, projects_dir,
                                                                    monkeypatch):
    held_tick_two(project)
    note = "Tobin drowned in scene 1: <leave him out>."
    model = scripted(monkeypatch, ScriptedModel().add("planner", PLAN2).add("writer", GOOD)
                     .add("extractor", extraction(["Mara Quill"])))
    with serving(make_site(projects_dir)) as client:
        before = files_of(project.root)
        empty = client.post("/p/harbour/held/send-back", {"csrf": SECRET, "note": " "})
        asked = client.post("/p/harbour/held/send-back", {"csrf": SECRET, "note": note})
        back = client.post("/p/harbour/held/send-back", {"csrf": SECRET, "note": note,
                                                         "back": "1"})
        with Project(project.root).locked():
            busy = client.post("/p/harbour/held/send-back", {"csrf": SECRET, "note": note,
                                                             "confirm": "yes"})
        untouched = files_of(project.root)
        sent = client.post("/p/harbour/held/send-back", {"csrf": SECRET, "note": note,
                                                         "confirm": "yes"})
    assert empty.status == 422 and "a draft is sent back with a note" in empty.text
    assert asked.status == 200 and "the note" not in asked.text[:0]
    assert "Send back the held tick 2?" in text_of(asked.text) and note in html.unescape(
        asked.text)
    assert back.status == 200 and field(back.text, "note") == note
    assert busy.status == 409 and field(busy.text, "note") == note
    assert untouched == before
    assert sent.status == 200, sent.text
    assert "Tick 2 written again with the note" in text_of(sent.text)
    assert project.tick() == 2 and read_held(project.novel_dir) is None
    assert History(project).head().subject.endswith(f" (note: {note})")
    assert any(note in str(call) for call in model.calls("writer"))


def test_the_docs_show_the_room_s_screenshots():
    from tests.support.repo import ROOT, page
    text = page("guides/browser.md")
    for name in ("revise", "conflict", "continuity", "held"):
        assert f"](../serve_{name}.png)" in text
        assert (ROOT / "docs" / f"serve_{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "`SCREENSHOTS_DIR=docs ./scripts/test tests/web/test_room_edit_browser.py`" in text
