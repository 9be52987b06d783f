"""The writer's room's history, branches and search in a real browser (headless Chromium
through Playwright, tests/support/browser.py), one page going through them in turn: the
log and an edit's diff, a rewind confirmed and undone, a branch made at tick 2 (the
header says so on every page), switched from and deleted, a redo with a note, and a
search from the header's box to a scene. Screenshots go to the test's output, and to
$SCREENSHOTS_DIR when set (`SCREENSHOTS_DIR=docs` makes docs/serve_history.png, ...)."""

from __future__ import annotations

from novel_agent.history.store import History
from novel_agent.story.scenes import load_scene
from tests.support.browser import launch, needs_chromium, playwright, screenshot, shown
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving

pytestmark = needs_chromium

DOCS_SHOTS = ("history", "entry", "rewind", "search")
NOTE = "Sefa burns the ledger before dawn."


def test_history_branches_and_search_in_a_browser(project, projects_dir, tmp_path):
    run_ticks(project, 5)
    path = project.scene_path(4)                   # an edit by hand: its diff, word by word
    first = load_scene(path).body.split("\n\n")[0]
    path.write_text(path.read_text().replace(first, first.replace(" ", " very ", 1), 1))
    folder = tmp_path / "screenshots"
    folder.mkdir()

    def shot(page, name: str) -> None:
        screenshot(page, folder / f"serve_{name}.png", docs=name in DOCS_SHOTS)

    with serving(make_site(projects_dir)) as client, playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            url = f"http://127.0.0.1:{client.port}/p/harbour"
            the_log_and_a_diff(page, url, project, shot)
            a_rewind_and_its_undo(page, project, shot)
            a_branch_at_tick_2(page, project, shot)
            a_redo_with_a_note(page, project)
            a_search(page, shot)
        finally:
            browser.close()
    assert errors == []


def branch_shown(page) -> str:
    return page.locator("#branch strong").inner_text()


def the_log_and_a_diff(page, url: str, project, shot) -> None:
    page.goto(url + "/history")
    shown(page, "#log-entries")
    newest = page.locator("#log-entries tbody tr").first
    assert "edited by hand: scenes/scene_004.md" in newest.inner_text()
    assert branch_shown(page) == "main"
    shot(page, "history")
    newest.locator("td").nth(2).get_by_role("link").click()
    page.wait_for_url("**/history/entry/*")
    assert page.locator("section.diff h2 code").first.inner_text() == "scenes/scene_004.md"
    assert page.locator("section.diff ins").first.text_content().strip() == "very"
    shot(page, "entry")
    page.locator("section.diff h2 a.read").first.click()
    page.wait_for_url("**/scene/4")
    assert " very " in page.locator("article").inner_text()
    page.get_by_role("link", name="History").first.click()
    page.wait_for_url("**/history")


def a_rewind_and_its_undo(page, project, shot) -> None:
    at_five = project.scene_path(5).read_text()
    page.click(f"#entry-{History(project).entry_at(3).short} a.rewind")
    page.wait_for_url("**/history/rewind?tick=3")
    assert "kept as the tag kept/main-5" in page.locator("#kept").inner_text()
    assert not page.locator("details ul.files").is_visible()    # the files, folded
    shot(page, "rewind")
    page.click("#confirm-rewind")
    page.locator(".message").get_by_text("rewound main: tick 5 → tick 3").wait_for()
    assert project.tick() == 3 and not project.scene_path(5).exists()
    page.click("#undo")
    assert "2 scenes brought back (4, 5)" in page.locator("#confirm").inner_text()
    page.click("#confirm-undo")
    page.locator(".message").get_by_text("undone: main: tick 3 → tick 5").wait_for()
    assert project.scene_path(5).read_text() == at_five


def a_branch_at_tick_2(page, project, shot) -> None:
    page.click(f"#entry-{History(project).entry_at(2).short} a.branch-here")
    page.wait_for_url("**/branches?at=2")
    assert page.input_value("input[name=at]") == "2"
    page.fill("input[name=name]", "whatif")
    page.click("#new-branch")
    page.locator(".message").get_by_text("on new branch whatif, at tick 2").wait_for()
    assert branch_shown(page) == "whatif" and project.tick() == 2
    page.get_by_role("link", name="Book").click()
    page.wait_for_url("**/book")
    assert branch_shown(page) == "whatif"
    page.click("#branch")                                  # the header's branch: the list
    page.wait_for_url("**/branches")
    shot(page, "branches")
    page.click("#branch-main button.switch")
    page.locator(".message").get_by_text("on branch main, at tick 5").wait_for()
    assert branch_shown(page) == "main" and project.tick() == 5
    page.click("#branch-whatif a.delete")
    assert "kept as the tag deleted/whatif" in page.locator("#kept").inner_text()
    page.click("#confirm-delete")
    page.locator(".message").get_by_text("deleted branch whatif").wait_for()
    assert page.locator("#branch-whatif").count() == 0


def a_redo_with_a_note(page, project) -> None:
    page.get_by_role("link", name="History").first.click()
    page.wait_for_url("**/history")
    page.click(f"#entry-{History(project).entry_at(5).short} a.redo")
    page.wait_for_url("**/history/redo?tick=5")
    page.fill("textarea[name=note]", NOTE)
    page.click("#confirm-redo")
    page.locator(".message").get_by_text("wrote tick 5 again").wait_for()
    page.click("#redone")
    page.wait_for_url("**/scene/5")
    assert f"as the author asks: {NOTE}" in page.locator("article").inner_text()


def a_search(page, shot) -> None:
    box = page.locator("form.search input[name=q]")
    box.fill("lantern")
    box.press("Enter")
    page.wait_for_url("**/search?q=lantern")
    shown(page, "#hits li")
    assert page.input_value("form.search input[name=q]") == "lantern"
    shot(page, "search")
    hit = page.locator("#hits li.scene a.to").first
    title = hit.inner_text()
    hit.click()
    page.wait_for_url("**/scene/*")
    assert page.locator("h1").inner_text() == title
