"""The writer's room's history, branches and search over HTTP: `novel log` as a page with
each entry's diff (escaped), rewind and undo and redo each confirmed first and refused
(409, every file as it was) while a daemon holds the project or after the book moved,
branches made at a tick, switched and deleted, the branch in every page's header, and
`novel search` from the header's box with its hits linked."""

from __future__ import annotations

import html
import re

import pytest

import novel_agent.tick.pipeline as pipeline
from novel_agent.errors import ModelError
from novel_agent.history.store import History
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import load_scene
from novel_agent.web import history_pages
from tests.support.projects import files_of
from tests.support.repo import ROOT
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving

SECRET = "test-secret"
PAGES = ("book", "live", "steer", "lore", "memory", "context", "numbers", "history",
         "branches", "search")


def book_state(project: Project) -> tuple[dict[str, bytes], str]:
    """Every file of the project, and the history's refs and HEAD: what a refused act
    must leave as it was."""
    history = History(project)
    refs = history.git.text("for-each-ref", "--format=%(refname) %(objectname)")
    return files_of(project.root), refs + "\n" + history.git.text("symbolic-ref", "HEAD")


def head_of(page: str) -> str:
    """The entry a confirmation page was made at (its form's `head`)."""
    return re.search(r'name="head" value="([0-9a-f]{40})"', page).group(1)


def text_of(page: str) -> str:
    """A page's text, tags out and entities decoded, spaces as one (none before a stop)."""
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    return re.sub(r" ([,.;:)])", r"\1", text).replace("( ", "(")


def header_branch(page: str) -> str | None:
    found = re.search(r'id="branch"[^>]*>branch <strong>([^<]*)</strong>', page)
    return found.group(1) if found else None


def hold(project: Project) -> Project:
    """Another holder of the project's lock, as a running daemon is."""
    daemon = Project(project.root)
    daemon.acquire_lock()
    return daemon


# -- the log and the diffs ---------------------------------------------------------------
def test_the_log_lists_every_entry_newest_first_each_linking_to_its_diff(project,
                                                                         projects_dir):
    run_ticks(project, 3)
    with serving(make_site(projects_dir)) as client:
        log = client.get("/p/harbour/history")
        entries = History(project).entries()
        diff = client.get(f"/p/harbour/history/entry/{entries[0].short}")
    assert log.status == 200
    links = re.findall(r'href="[^"]*/p/harbour/history/entry/([0-9a-f]{8})"><code>', log.text)
    assert links == [e.short for e in entries]
    assert "tick 3: " + load_scene(project.scene_path(3)).title in text_of(log.text)
    assert "On branch main, at tick 3." in text_of(log.text)
    assert diff.status == 200
    assert '<code>scenes/scene_003.md</code> <span class="badge added">added</span>' in diff.text
    first = load_scene(project.scene_path(3)).body.split("\n\n")[0]
    assert f"<ins>{html.escape(first)}</ins>" in diff.text
    assert ".novel/" not in re.sub(r"<p class=\"hint\".*", "", diff.text.split("<main>")[1])


def test_an_edit_by_hand_is_an_entry_whose_diff_shows_the_words_escaped(project,
                                                                        projects_dir):
    run_ticks(project, 2)
    path = project.scene_path(2)
    text = path.read_text()
    paragraph = load_scene(path).body.split("\n\n")[0]
    words = paragraph.split()
    changed = " ".join([*words[:3], "<script>alert(1)</script>", *words[4:]])
    path.write_text(text.replace(paragraph, changed))
    with serving(make_site(projects_dir)) as client:
        log = client.get("/p/harbour/history")          # opens the project, as `novel log`
        hand = History(project).head()
        diff = client.get(f"/p/harbour/history/entry/{hand.sha}")
    assert "edited by hand: scenes/scene_002.md" in text_of(log.text)
    assert hand.kind == "hand"
    assert "<script>alert" not in diff.text
    assert f"<del>{html.escape(words[3])}</del><ins>&lt;script&gt;alert(1)&lt;/script&gt;</ins>" \
        in diff.text
    assert f"<span>{html.escape(' '.join(words[:3]))} </span>" in diff.text  # the rest kept


def test_the_log_pages_keep_each_tick_s_acts_on_its_newest_entry(project, projects_dir,
                                                                monkeypatch, cli):
    run_ticks(project, 3)
    path = project.scene_path(1)
    path.write_text(path.read_text() + "\nA line added by hand.\n")
    cli("log", "-p", "harbour")                           # records the edit: tick 3 again
    monkeypatch.setattr(history_pages, "LOG_PAGE", 1)
    pages = [history_pages.log_page(project, n) for n in (1, 2, 3, 5)]
    assert [[(r.entry.tick, r.entry.kind, r.last_of_tick) for r in page.rows]
            for page in pages] == [[(3, "hand", True)], [(3, "tick", False)],
                                   [(2, "tick", True)], [(0, "start", True)]]
    assert [page.more for page in pages] == [True, True, True, False]
    with serving(make_site(projects_dir)) as client:
        second = client.get("/p/harbour/history?page=2")
    assert 'class="redo"' not in second.text and 'rel="prev" href="?page=1"' in second.text


@pytest.mark.parametrize("sha", ["zzzzzzzz", "0000000", "HEAD", "..%2F..%2Fetc"])
def test_an_entry_that_is_not_there_is_a_404(project, projects_dir, sha):
    run_ticks(project, 1)
    with serving(make_site(projects_dir)) as client:
        answer = client.get(f"/p/harbour/history/entry/{sha}")
    assert answer.status == 404


def test_a_project_without_history_shows_no_branch_until_it_is_opened(project,
                                                                      projects_dir):
    with serving(make_site(projects_dir)) as client:
        book = client.get("/p/harbour/book")               # reads, opens nothing
        log = client.get("/p/harbour/history")             # opens it, as `novel log` does
        again = client.get("/p/harbour/book")
    assert book.status == 200 and 'id="branch"' not in book.text
    assert "history begins at tick 0" in text_of(log.text)
    assert header_branch(again.text) == "main"


def test_without_git_the_log_says_the_history_is_off(project, projects_dir, monkeypatch):
    monkeypatch.setattr("novel_agent.history.git.git_executable", lambda: None)
    with serving(make_site(projects_dir)) as client:
        log = client.get("/p/harbour/history")
        branches = client.get("/p/harbour/branches")
        rewind = client.get("/p/harbour/history/rewind?tick=0")
    assert log.status == 200 and "No history: off: git is not on PATH (install git)." in \
        text_of(log.text)
    assert "No history: off: git is not on PATH" in text_of(branches.text)
    assert "cannot rewind: the history needs the `git` executable" in text_of(rewind.text)
    assert 'id="branch"' not in log.text


# -- rewind and undo ---------------------------------------------------------------------
def test_a_rewind_is_confirmed_first_then_undo_brings_back_exactly(project, projects_dir):
    run_ticks(project, 2)
    at_two = files_of(project.root)
    run_ticks(project, 3)
    at_five = book_state(project)
    with serving(make_site(projects_dir)) as client:
        confirm = client.get("/p/harbour/history/rewind?tick=2")
        assert book_state(project) == at_five              # asking changes nothing
        said = text_of(confirm.text)
        assert ("Branch main goes from tick 5 to tick 2: the project will be exactly as it "
                "was after tick 2") in said
        assert "3 scenes taken away (3, 4, 5)" in said
        assert ("What is there now is kept as the tag kept/main-5, and Undo on the History "
                "page brings it back.") in said
        done = client.post("/p/harbour/history/rewind",
                           {"csrf": SECRET, "tick": "2", "head": head_of(confirm.text)})
        assert done.status == 200
        assert ("rewound main: tick 5 → tick 2; 3 scenes taken away; what was there is kept "
                "as kept/main-5 (Undo on the History page brings it back)") in text_of(done.text)
        assert files_of(project.root) == at_two and project.tick() == 2
        ask_undo = client.get("/p/harbour/history/undo")
        assert ("Branch main goes from tick 2 to tick 5" in text_of(ask_undo.text)
                and "3 scenes brought back (3, 4, 5)" in text_of(ask_undo.text)
                and "kept as the tag kept/main-2" in text_of(ask_undo.text))
        undone = client.post("/p/harbour/history/undo",
                             {"csrf": SECRET, "head": head_of(ask_undo.text)})
    assert undone.status == 200 and "undone: main: tick 2 → tick 5" in text_of(undone.text)
    files, refs = book_state(project)
    assert files == at_five[0]
    assert History(project).git.text("tag") == "kept/main-2\nkept/main-5"


def test_a_confirmation_made_before_a_tick_landed_is_refused(project, projects_dir):
    run_ticks(project, 3)
    with serving(make_site(projects_dir)) as client:
        confirm = client.get("/p/harbour/history/rewind?tick=1")
        run_ticks(project, 1)                              # the daemon's tick lands
        before = book_state(project)
        refused = client.post("/p/harbour/history/rewind",
                              {"csrf": SECRET, "tick": "1", "head": head_of(confirm.text)})
    assert refused.status == 409
    assert "not rewound: the book changed since this page was made" in text_of(refused.text)
    assert "goes from tick 4 to tick 1" in text_of(refused.text)     # asked again, anew
    assert book_state(project) == before


ACTS = {  # act: (its confirmation, its form, what a refusal says)
    "rewind": ("history/rewind?tick=1", {"tick": "1"}, "not rewound"),
    "undo": ("history/undo", {}, "not undone"),
    "redo": ("history/redo?tick=3", {"tick": "3", "note": "Rain <all> night."}, "not redone"),
    "branch new": ("branches", {"name": "storm", "at": "1"}, "not made"),
    "branch switch": ("branches", {"branch": "other"}, "not switched"),
    "branch delete": ("branches/delete?branch=other", {"branch": "other"}, "not deleted"),
}
POSTS = {"rewind": "history/rewind", "undo": "history/undo", "redo": "history/redo",
         "branch new": "branches/new", "branch switch": "branches/switch",
         "branch delete": "branches/delete"}


@pytest.mark.parametrize("act", list(ACTS))
def test_each_act_is_refused_while_a_daemon_holds_the_project(project, projects_dir, cli,
                                                              act):
    run_ticks(project, 3)
    cli("branch", "new", "other", "-p", "harbour")
    cli("branch", "switch", "main", "-p", "harbour")
    cli("rewind", "2", "-p", "harbour")
    cli("rewind", "--undo", "-p", "harbour")
    page, form, said = ACTS[act]
    with serving(make_site(projects_dir)) as client:
        confirm = client.get(f"/p/harbour/{page}")
        head = head_of(confirm.text) if 'name="head"' in confirm.text else ""
        before = book_state(project)
        daemon = hold(project)
        try:
            asked = client.get(f"/p/harbour/{page}")
            refused = client.post(f"/p/harbour/{POSTS[act]}",
                                  {"csrf": SECRET, "head": head, **form})
        finally:
            daemon.release_lock()
    assert refused.status == 409
    assert f"{said}: project 'harbour' is busy: process " in text_of(refused.text)
    assert "busy: project 'harbour' is busy" in text_of(asked.text)     # said before asked
    assert book_state(project) == before
    if act == "redo":                                      # the note typed is kept
        assert "<textarea name=\"note\" rows=\"3\" cols=\"70\">Rain &lt;all&gt; night." \
            "</textarea>" in refused.text


@pytest.mark.parametrize("act", list(ACTS))
def test_each_act_needs_the_form_secret(project, projects_dir, act):
    run_ticks(project, 2)
    before = book_state(project)
    with serving(make_site(projects_dir)) as client:
        refused = client.post(f"/p/harbour/{POSTS[act]}", {**ACTS[act][1], "tick": "1"})
    assert refused.status == 403 and book_state(project) == before


def test_a_rewind_past_the_book_cannot_be_confirmed(project, projects_dir):
    run_ticks(project, 2)
    with serving(make_site(projects_dir)) as client:
        asked = client.get("/p/harbour/history/rewind?tick=7")
        undo = client.get("/p/harbour/history/undo")
    assert "cannot rewind: cannot rewind to tick 7: the project is at tick 2" in \
        text_of(asked.text)
    assert "cannot undo: nothing to undo: branch 'main' was never rewound" in text_of(undo.text)
    assert 'id="confirm-rewind"' not in asked.text and 'id="confirm-undo"' not in undo.text


# -- redo --------------------------------------------------------------------------------
def test_redo_writes_the_tick_again_with_the_note_and_undo_brings_the_old_back(project,
                                                                               projects_dir):
    run_ticks(project, 5)
    at_five = files_of(project.root)
    with serving(make_site(projects_dir)) as client:
        confirm = client.get("/p/harbour/history/redo?tick=4")
        said = text_of(confirm.text)
        assert "Branch main goes back from tick 5 to tick 3: 2 scenes taken away (4, 5)" in said
        assert "kept as the tag kept/main-5, and Undo on the History page brings it back" in said
        done = client.post("/p/harbour/history/redo", {
            "csrf": SECRET, "tick": "4", "head": head_of(confirm.text),
            "note": "Mara keeps the key\r\nto herself."})
        assert done.status == 200, text_of(done.text)
        title = load_scene(project.scene_path(4)).title
        assert (f"rewound main: tick 5 → tick 3; 2 scenes taken away; what was there is kept "
                f"as kept/main-5 (Undo on the History page brings it back); wrote tick 4 "
                f"again: \"{title}\"") in text_of(done.text)
        assert project.tick() == 4 and not project.scene_path(5).exists()
        assert "as the author asks: Mara keeps the key to herself." in \
            load_scene(project.scene_path(4)).body
        assert not (project.novel_dir / "redo.yaml").exists()
        ask = client.get("/p/harbour/history/undo")
        client.post("/p/harbour/history/undo", {"csrf": SECRET, "head": head_of(ask.text)})
    assert files_of(project.root) == at_five


def test_a_redo_whose_tick_fails_is_put_back_and_said_in_one_line(project, projects_dir,
                                                                  monkeypatch):
    run_ticks(project, 4)
    before = book_state(project)

    def fails(session, on_stage=None, note=""):
        raise ModelError("the model answered 503 three times")

    monkeypatch.setattr(pipeline, "tick", fails)
    with serving(make_site(projects_dir)) as client:
        confirm = client.get("/p/harbour/history/redo?tick=3")
        failed = client.post("/p/harbour/history/redo", {
            "csrf": SECRET, "tick": "3", "head": head_of(confirm.text), "note": "Rain."})
    assert failed.status == 500
    assert ("not redone: the model answered 503 three times; the redo of tick 3 was "
            "interrupted before its tick landed: the project is back at tick 4") \
        in text_of(failed.text)
    assert ">Rain.</textarea>" in failed.text
    assert book_state(project) == before


# -- branches ----------------------------------------------------------------------------
def test_branches_made_at_a_tick_switched_and_deleted_with_the_branch_in_the_header(
        project, projects_dir):
    run_ticks(project, 4)
    with serving(make_site(projects_dir)) as client:
        assert header_branch(client.get("/p/harbour/book").text) == "main"
        asked = client.get("/p/harbour/branches?at=2")
        assert 'name="at" size="5" value="2"' in asked.text
        made = client.post("/p/harbour/branches/new", {"csrf": SECRET, "name": "whatif",
                                                       "at": "2"})
        assert "on new branch whatif, at tick 2" in text_of(made.text)
        assert project.tick() == 2 and not project.scene_path(3).exists()
        for page in PAGES:
            assert header_branch(client.get(f"/p/harbour/{page}").text) == "whatif", page
        run_ticks(project, 1)
        switched = client.post("/p/harbour/branches/switch", {"csrf": SECRET,
                                                              "branch": "main"})
        assert "on branch main, at tick 4" in text_of(switched.text)
        assert header_branch(switched.text) == "main" and project.tick() == 4
        confirm = client.get("/p/harbour/branches/delete?branch=whatif")
        said = text_of(confirm.text)
        assert "Branch whatif (at tick 3; its last entry: tick 3: " in said
        assert "the project stays on main, and no file of it changes" in said
        assert "Its entries are kept as the tag deleted/whatif" in said
        before = files_of(project.root)
        deleted = client.post("/p/harbour/branches/delete", {"csrf": SECRET,
                                                             "branch": "whatif"})
    assert ("deleted branch whatif; its entries are kept as the tag deleted/whatif"
            in text_of(deleted.text))
    assert 'id="branch-whatif"' not in deleted.text
    assert files_of(project.root) == before
    assert History(project).git.resolve("refs/tags/deleted/whatif") is not None


@pytest.mark.parametrize("post, form, message", [
    ("new", {"name": "a b", "at": ""}, "not made: 'a b' is not a branch name"),
    ("new", {"name": "main", "at": ""}, "not made: a branch 'main' exists already"),
    ("new", {"name": "late", "at": "9"}, "not made: no history entry for tick 9"),
    ("new", {"name": "late", "at": "soon"}, "not made: 'at' must be a whole number"),
    ("switch", {"branch": "main"}, "not switched: already on branch 'main'"),
    ("switch", {"branch": "nope"}, "not switched: no branch 'nope' (branches: main)"),
    ("delete", {"branch": "main"}, "not deleted: cannot delete branch 'main': the project "
                                   "is on it"),
])
def test_a_refused_branch_request_is_one_line_and_changes_nothing(project, projects_dir,
                                                                  post, form, message):
    run_ticks(project, 2)
    before = book_state(project)
    with serving(make_site(projects_dir)) as client:
        refused = client.post(f"/p/harbour/branches/{post}", {"csrf": SECRET, **form})
    assert refused.status == 422 and message in text_of(refused.text)
    assert book_state(project) == before
    if post == "new":                                      # what was typed is kept
        assert f'name="name" value="{html.escape(form["name"])}"' in refused.text


def test_the_header_never_fails_a_page_over_the_history(project, projects_dir):
    run_ticks(project, 1)
    head = project.novel_dir / "history.git" / "HEAD"
    with serving(make_site(projects_dir)) as client:
        for garbage in (b"\xff\xfe not text", b"ref: refs/heads/../../x\n", b""):
            head.write_bytes(garbage)
            page = client.get("/p/harbour/book")
            assert page.status == 200 and header_branch(page.text) is None
        head.unlink()
        assert client.get("/p/harbour/book").status == 200


# -- search ------------------------------------------------------------------------------
def test_search_is_a_box_on_every_page_keeping_the_query(project, projects_dir):
    run_ticks(project, 2)
    with serving(make_site(projects_dir)) as client:
        for page in PAGES:
            found = re.search(r'<form class="search" role="search" method="get" '
                              r'action="[^"]*/p/harbour/search">', client.get(
                                  f"/p/harbour/{page}").text)
            assert found, page
        asked = client.get('/p/harbour/search?q=%22a+lantern%22+%3Cb%3E')
        nothing = client.get("/p/harbour/search?q=zzyzx")
        bad = client.get("/p/harbour/search?q=x&kind=ghost")
    box = re.search(r'<input type="search" name="q" value="([^"]*)" placeholder', asked.text)
    assert html.unescape(box.group(1)) == '"a lantern" <b>' and "<b>" not in box.group(1)
    assert "nothing found for “zzyzx”" in text_of(nothing.text)
    assert bad.status == 400 and "no kind 'ghost'" in text_of(bad.text)


def test_search_hits_link_to_their_scenes_memory_and_lore(project, projects_dir, cli):
    run_ticks(project, 3)
    cli("lore", "add", "The brass locket", "--key", "locket", "--content",
        "A brass locket holds the key to the archive.", "-p", "harbour")
    mara = load_scene(project.scene_path(1)).pov
    with serving(make_site(projects_dir)) as client:
        lore = client.get("/p/harbour/search?q=%22brass+locket%22")
        people = client.get(f"/p/harbour/search?q={mara.split()[0]}&kind=character")
        scenes = client.get("/p/harbour/search?q=" + load_scene(project.scene_path(2)).title
                            .split()[-1] + "&kind=scene")
    assert re.search(r'<a class="to" href="[^"]*/p/harbour/lore/the_brass_locket.yaml">'
                     r'The brass locket</a>', lore.text)
    assert "<mark>brass locket</mark>" in lore.text
    assert re.search(rf'<a class="to" href="[^"]*/p/harbour/memory#characters">{mara}</a>',
                     people.text)
    assert re.search(r'href="[^"]*/p/harbour/scene/\d+">last seen in scene \d+</a>',
                     people.text)
    ticks = re.findall(r'<a class="to" href="[^"]*/p/harbour/scene/(\d+)">', scenes.text)
    assert ticks and set(ticks) <= {"1", "2", "3"} and "2" in ticks


def test_the_docs_show_the_history_s_screenshots():
    text = (ROOT / "docs" / "guides" / "browser.md").read_text()
    for name in ("history", "entry", "rewind", "search"):
        assert f"](../serve_{name}.png)" in text
        assert (ROOT / "docs" / f"serve_{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "`tests/web/test_room_history_browser.py` the history's and the search's" in text
