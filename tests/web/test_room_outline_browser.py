"""The Outline page and the manuscript's download in a real browser: headless Chromium from
the OS packages, driven by Playwright (as tests/web/test_serve_browser.py drives it), over
the app in a thread (tests/support/web_server.py). One browser, one page, in order: the
outline with its chart and the beats done or to come; a chapter's title edited in the page;
a refused edit that keeps what was typed; a locked chapter shown without a form; the Book
page's docx button, the file read back. The outline's screenshot goes to the test's output,
and to $SCREENSHOTS_DIR when set (`SCREENSHOTS_DIR=docs` makes docs/serve_outline.png)."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
import yaml

from novel_agent.story.outline.file import load_outline
from tests.support.browser import ARGS, CHROMIUM, screenshot, shown
from tests.support.projects import outline_project
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving

playwright = pytest.importorskip("playwright.sync_api", reason="the test extra installs "
                                 "playwright: pip install -e '.[test]'")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=(
    f"no Chromium at {CHROMIUM}: ./scripts/test installs it (apt-get install chromium "
    "chromium-driver, as root); it could not here"))


def test_the_outline_page_and_the_manuscript_in_a_browser(project, projects_dir, tmp_path):
    outline_project(project, chapters=3, beats=2, scenes=2)
    run_ticks(project, 3)             # the offline model lands 1.1, 1.2, 2.1; 2.2 is next
    with serving(make_site(projects_dir)) as client, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 860},
                                    accept_downloads=True)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            url = f"http://127.0.0.1:{client.port}/p/harbour"
            read_the_outline(page, url, tmp_path)
            edit_a_chapter(page, project)
            a_refused_edit(page, project)
            a_locked_chapter(page, url, project)
            download_the_manuscript(page, url, project)
        finally:
            browser.close()
    assert errors == []


def read_the_outline(page, url: str, tmp_path) -> None:
    page.goto(url + "/book")
    page.get_by_role("link", name="Outline").click()
    page.wait_for_url("**/p/harbour/outline")
    shown(page, "svg#tension-chart")
    assert page.locator("svg#tension-chart circle.scene-tension").count() == 3
    assert page.locator("svg#tension-chart polyline.target").get_attribute("points").count(",") \
        == 6
    assert page.locator("#beat-2-2 .state").inner_text() == "now"
    assert page.locator("#beat-1-1 .state").inner_text() == "done"
    assert page.locator("#chapter-3 h4 .state").inner_text() == "to come"
    assert page.locator("table.loops tbody tr").count() >= 1
    screenshot(page, tmp_path / "serve_outline.png")


def edit_a_chapter(page, project) -> None:
    chapter = page.locator("#chapter-3")
    chapter.locator("details.edit > summary").first.click()
    page.fill("#edit-chapter-3 input[name=title]", "The Cold Ledger")
    page.fill("#edit-chapter-3 textarea[name=purpose]", "Mara reads the ledger.")
    page.click("#save-chapter-3")
    page.locator(".message").get_by_text("saved outline/outline.yaml: chapter 3").wait_for()
    assert page.locator("#chapter-3 h4").inner_text().startswith("Chapter 3 · The Cold Ledger")
    saved = load_outline(project.outline_file).chapter(3)
    assert (saved.title, saved.purpose) == ("The Cold Ledger", "Mara reads the ledger.")


def a_refused_edit(page, project) -> None:
    before = project.outline_file.read_bytes()
    page.locator("#beat-1-1 details.edit > summary").click()
    page.fill("#edit-beat-1-1 input[name=tension]", "12")
    page.click("#save-beat-1-1")
    error = page.locator(".message.error")
    error.wait_for()
    assert "beat 1: 'tension' must be a whole number from 0 to 10, not 12" in error.inner_text()
    assert page.locator("#beat-1-1 details.edit").get_attribute("open") is not None
    assert page.input_value("#edit-beat-1-1 input[name=tension]") == "12"   # kept, to fix
    assert project.outline_file.read_bytes() == before


def a_locked_chapter(page, url: str, project) -> None:
    data = yaml.safe_load(project.outline_file.read_text())
    data["acts"][1]["chapters"][0]["locked"] = True                    # chapter 2
    project.outline_file.write_text(yaml.safe_dump(data, sort_keys=False))
    page.goto(url + "/outline")
    shown(page, "#chapter-2")
    assert page.locator("#chapter-2 form").count() == 0
    assert page.locator("#chapter-2 .lock").count() == 1 + 2          # the chapter, its beats
    assert page.locator("#chapter-3 form").count() == 1 + 2


def download_the_manuscript(page, url: str, project) -> None:
    page.goto(url + "/book")
    with page.expect_download() as download:
        page.click("#export-docx")
    assert download.value.suggested_filename == "harbour.docx"
    path = project.root / "export" / "harbour.docx"
    document = docx.Document(str(path))
    titles = [p.text for p in document.paragraphs if p.style.name == "Chapter Title"]
    assert titles == ["Chapter 1: Chapter 1", "Chapter 2: Chapter 2"]
    assert document.paragraphs[0].text.startswith("[Your Name]\tabout ")
