"""The writer's room, part one, in a real browser (headless Chromium through Playwright,
as tests/web/test_serve_browser.py drives it), on the app in a thread: scene 5 edited
from its page and the revise's report read (what memory no longer holds, what is new,
the later scene that relies on it, followed), a second tab's save refused with the diff
and its text kept, the rewrite-what-follows option asked first and taken back, the
Continuity page and a scene's own findings, and a held draft read, sent back (asked
first, then taken back with the note kept), its drop asked, and accepted.

Screenshots go to the test's output (`<tmp_path>/screenshots`), and into
$SCREENSHOTS_DIR when set (`SCREENSHOTS_DIR=docs` makes docs/serve_revise.png,
serve_conflict.png, serve_continuity.png and serve_held.png).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from novel_agent.audit.held import read_held
from novel_agent.story.project.folder import create_project
from novel_agent.story.scenes import load_scene
from tests.audit.test_audit_policy import held_tick_two
from tests.revision.test_revise import NEW5, NEW_X, first_run
from tests.support.browser import ARGS, CHROMIUM, screenshot, shown
from tests.support.projects import HARBOUR
from tests.support.scripted import ScriptedModel
from tests.support.web_server import make_site, serving
from tests.web.test_room_edit import scripted

playwright = pytest.importorskip("playwright.sync_api", reason="the test extra installs "
                                 "playwright: pip install -e '.[test]'")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=(
    f"no Chromium at {CHROMIUM}: ./scripts/test installs it (apt-get install chromium "
    "chromium-driver, as root); it could not here"))
DOCS_SHOTS = ("revise", "conflict", "continuity", "held")
NOTE = "Tobin drowned in scene 1: leave him out."


def test_edit_revise_and_continuity_in_a_browser(project, projects_dir, monkeypatch, tmp_path):
    first_run(project)                               # harbour: 12 scenes, 5 to revise
    weir = create_project(projects_dir / "weir", {**HARBOUR, "name": "weir"},
                          config={"llm": {"provider": "offline"}})
    held_tick_two(weir)                              # weir: tick 2 held on a dead man
    scripted(monkeypatch, ScriptedModel().add("extractor", NEW_X))
    folder = tmp_path / "screenshots"
    folder.mkdir()

    def shots(page, name: str) -> None:
        screenshot(page, folder / f"serve_{name}.png", docs=name in DOCS_SHOTS, full_page=True)

    with serving(make_site(projects_dir)) as client, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        url = f"http://127.0.0.1:{client.port}"
        errors: list[str] = []
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 860})
            context.on("page", lambda page: page.on("pageerror",
                                                    lambda e: errors.append(str(e))))
            edit_and_revise(context, url, project, shots)
            continuity_and_held(context, url, weir, shots)
        finally:
            browser.close()
    assert errors == []
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"serve_{n}.png" for n in [*DOCS_SHOTS, "edit", "confirm_rewrite", "held_confirm"])


def edit_and_revise(context, url: str, project, shots) -> None:
    # two tabs open scene 5's editor from its page
    first = context.new_page()
    first.goto(url + "/p/harbour/scene/5")
    first.click("#edit-scene")
    first.wait_for_url("**/p/harbour/scene/5/edit")
    second = context.new_page()
    second.goto(url + "/p/harbour/scene/5/edit")
    assert first.input_value("textarea[name=prose]") == load_scene(project.scene_path(5)).body

    # the first saves: the scene as typed, and the revise's report
    first.fill("input[name=title]", "The Salt Bridge")
    first.fill("textarea[name=prose]", NEW5)
    shots(first, "edit")
    first.click("#save-scene")
    shown(first, "#revise-report")
    lost = first.locator("ul.lost li").all_inner_texts()
    assert any("Mara Quill hid the ivory astrolabe" in line for line in lost)
    assert any("Tobin Keel waits at the Salt Bridge" in line
               for line in first.locator("ul.gained li").all_inner_texts())
    relies = first.locator("ul.relying li").first
    assert "scene 8 mentions “ivory astrolabe”" in relies.inner_text()
    shots(first, "revise")
    relies.get_by_role("link", name="scene 8").click()
    first.wait_for_url("**/p/harbour/scene/8")
    assert load_scene(project.scene_path(5)).title == "The Salt Bridge"

    # the second tab, opened on the old text, is refused with the diff; its text stays
    typed = second.input_value("textarea[name=prose]") + "\n\nThe second tab's <b>line</b>."
    second.fill("textarea[name=prose]", typed)
    second.click("#save-scene")
    shown(second, "#conflict-diff")
    diff = second.inner_text("#conflict-diff")
    assert "+The second tab's <b>line</b>." in diff and "+++ your text" in diff
    assert "-Mara walked out to the bridge." in diff         # the first tab's, on disk
    assert second.input_value("textarea[name=prose]") == typed.strip()
    assert "was changed since this editor was opened" in second.inner_text(".message.error")
    assert "<b>line</b>" not in load_scene(project.scene_path(5)).body
    shots(second, "conflict")

    # rewrite what follows: asked first, then back to the editor with the text as typed
    second.check("input[name=rewrite_after]")
    second.click("#save-scene")
    shown(second, "#confirm-rewrite")
    assert "take away scenes 6–12 (7 scenes)" in second.inner_text(".confirm")
    assert "kept/main-12" in second.inner_text(".confirm")
    shots(second, "confirm_rewrite")
    second.click("#back-to-editor")
    shown(second, "textarea[name=prose]")
    assert second.input_value("textarea[name=prose]") == typed.strip()
    assert second.is_checked("input[name=rewrite_after]")
    assert project.tick() == 12
    first.close()
    second.close()


def continuity_and_held(context, url: str, weir, shots) -> None:
    page = context.new_page()
    page.goto(url + "/p/weir/continuity")
    page.click("#held-notice a")
    page.wait_for_url("**/p/weir/held")
    assert "Tobin laughed and poured the tea for Mara." in page.inner_text("#held-draft")
    assert "Tobin Keel acts or speaks, dead since scene 1" in page.inner_text("ul.findings")
    shots(page, "held")

    # send back with a note: asked first; back, the note kept
    page.fill("textarea[name=note]", NOTE)
    page.click("#send-back")
    shown(page, "#confirm-held")
    assert NOTE in page.inner_text(".confirm") and "Nothing of them is kept" in \
        page.inner_text(".confirm")
    shots(page, "held_confirm")
    page.click("#back-to-held")
    shown(page, "textarea[name=note]")
    assert page.input_value("textarea[name=note]") == NOTE

    # drop: asked first; back to the held tick
    page.click("#drop-held")
    shown(page, "#confirm-held")
    assert "the next tick writes tick 2 again" in page.inner_text(".confirm")
    page.get_by_role("link", name="back to the held tick").click()
    page.wait_for_url("**/p/weir/held")
    assert read_held(weir.novel_dir) is not None

    # accept: the tick lands with its finding, which the book and the scene then show
    page.click("#accept-held")
    shown(page, "#held-result")
    assert "Tick 2 accepted as it was held" in page.inner_text("h1")
    assert weir.tick() == 2
    page.get_by_role("link", name="Continuity").click()
    page.wait_for_url("**/p/weir/continuity")
    assert "CED" in page.inner_text("#ced")
    section = page.locator("#subtype-causal-logic")
    assert "Tobin laughed and poured the tea for Mara." in section.inner_text()
    assert "vs Tobin Keel is dead: drowned at the weir" in section.inner_text()
    shots(page, "continuity")
    section.get_by_role("link", name="scene 2").first.click()
    page.wait_for_url("**/p/weir/scene/2")
    page.locator("#scene-findings ul.findings li").first.wait_for()
    assert "dead since scene 1" in page.inner_text("#scene-findings")
    page.close()
