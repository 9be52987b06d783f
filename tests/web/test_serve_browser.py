"""`novel serve` in a real browser: headless Chromium from the OS packages, driven by
Playwright through `executable_path` (no `playwright install`, which downloads; see
tests/support/browser.py).

The test starts the real command (`novel serve --port P`, a subprocess) over an offline
project and does what the issue asks: opens the library, reads scene 2, starts the
daemon from the page and sees ticks land without a reload, writes a steer note and sees
the next plan follow it, adds a lore entry (and sees it in `novel lore list`) and an
invalid one (and sees the error), stops the daemon, and takes a screenshot of each page
into the test's output (`<tmp_path>/screenshots`; the docs' four also into
$SCREENSHOTS_DIR when set: `SCREENSHOTS_DIR=docs` makes docs/serve_*.png).

A second test, on the app in a thread (tests/support/web_server.py) with a token, shows
what only a browser decides: the token's link followed from another site, the live page
under a rewind, and a seventh Live tab beside six.

./scripts/test installs Chromium when it is missing; the tests are skipped, saying why,
only where that was impossible.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from novel_agent.daemon.heartbeat import read_heartbeat, running
from novel_agent.story.project.folder import create_project
from novel_agent.story.scenes import load_scene
from tests.support.browser import (
    ARGS,
    CHROMIUM,
    answers,
    free_port,
    needs_chromium,
    playwright,
    screenshot,
    shown,
    wait_for,
)
from tests.support.clirunner import invoke
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving

NOTE = "Bring the storm ashore tonight."
TOKEN = "s3cret-token"
DOCS_SHOTS = ("library", "scene", "live", "context")

pytestmark = needs_chromium


@pytest.fixture
def server(project, projects_dir):
    """`novel serve` on a free port over projects_dir (harbour: 2 offline scenes; delta: new)."""
    run_ticks(project, 2)
    create_project(projects_dir / "delta", {"name": "delta", "premise": "Two sisters run the "
                                            "last ferry across a drowning delta."},
                   config={"llm": {"provider": "offline"}})
    port = free_port()
    novel = str(Path(sys.executable).parent / "novel")
    proc = subprocess.Popen([novel, "serve", "--port", str(port)], cwd=projects_dir.parent,
                            env={**os.environ, "NOVEL_PROJECTS_DIR": str(projects_dir)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: answers(url + "/") or proc.poll() is not None, what="novel serve")
        assert proc.poll() is None, proc.stdout.read().decode()
        yield url
    finally:
        beat = read_heartbeat(project)
        if running(beat):       # a failed test must not leave a daemon behind
            os.kill(beat.pid, 15)
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def shots(tmp_path):
    """Where screenshots go: the test's output, and (the docs' four) $SCREENSHOTS_DIR."""
    folder = tmp_path / "screenshots"
    folder.mkdir()

    def take(page, name: str) -> Path:
        return screenshot(page, folder / f"serve_{name}.png", docs=name in DOCS_SHOTS)

    return take


def test_the_book_and_its_daemon_in_a_browser(server, project, shots, tmp_path):
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 860})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            run_the_story(page, server, project, shots)
        finally:
            context.close()
            browser.close()
    assert errors == []
    names = sorted(p.name for p in (tmp_path / "screenshots").iterdir())
    assert names == [f"serve_{n}.png" for n in sorted(
        ["library", "book", "scene", "live", "steer", "lore", "lore_error", "memory",
         "context", "numbers", "stopped"])]


def run_the_story(page, url: str, project, shots) -> None:
    # the library: the project with its state
    page.goto(url + "/")
    row = page.locator("#project-harbour")
    assert row.locator("td").nth(1).inner_text() == "2"
    assert "never run" in row.inner_text()
    assert page.locator("#project-delta td").nth(1).inner_text() == "0"
    shots(page, "library")

    # the book, then scene 2
    row.get_by_role("link", name="harbour").click()
    page.wait_for_url("**/p/harbour/book")
    scene2 = load_scene(project.scene_path(2))
    assert page.locator("#scene-2 h3").inner_text() == scene2.title
    shots(page, "book")
    with page.expect_download() as download:
        page.click("#export-epub")
    assert download.value.suggested_filename == "harbour.epub"
    assert (project.root / "export" / "harbour.epub").read_bytes()[:2] == b"PK"
    page.goto(url + "/p/harbour/book")
    page.locator("#scene-2 h3 a").click()
    page.wait_for_url("**/p/harbour/scene/2")
    assert page.locator("h1").inner_text() == scene2.title
    assert page.locator("ul.summary li").all_inner_texts() == scene2.summary
    shots(page, "scene")

    # the live page: start the daemon, see ticks land without a reload
    page.get_by_role("link", name="Live").click()
    page.wait_for_url("**/p/harbour/live")
    page.evaluate("window.stillTheSamePage = true")
    page.fill("input[name=interval]", "1")
    page.click("#start")
    page.locator("#daemon-message").get_by_text("started novel run").wait_for()
    page.locator("#tick-3").wait_for(timeout=30_000)
    page.locator("#tick-4").wait_for(timeout=30_000)
    assert page.evaluate("window.stillTheSamePage") is True
    page.locator("#state").get_by_text("running").wait_for()
    page.locator("#log li").first.wait_for()
    shots(page, "live")

    # steer: write the note; a plan made after it follows it
    page.get_by_role("link", name="Steer").click()
    page.wait_for_url("**/p/harbour/steer")
    page.fill("textarea[name=text]", NOTE)
    page.click("#save-steer")
    page.locator(".message").get_by_text("saved steer.md").wait_for()
    assert project.steer_file.read_text() == NOTE + "\n"
    after = project.tick() + 2          # the tick in flight may have been planned before
    shots(page, "steer")
    wait_for(lambda: project.scene_path(after).is_file(), 60, f"scene {after}")
    page.goto(f"{url}/p/harbour/scene/{after}")
    assert NOTE in page.locator("p.intention").inner_text()

    # lore: a valid entry lands in `novel lore list`; an invalid one is refused
    page.get_by_role("link", name="Lore").click()
    page.wait_for_url("**/p/harbour/lore")
    page.fill("input[name=name]", "The brass locket")
    page.fill("input[name=keys]", "locket, brass locket")
    page.fill("textarea[name=content]", "Edda's mother's; it holds a key.")
    page.click("#add-lore")
    page.locator(".message").get_by_text("wrote lore/the_brass_locket.yaml").wait_for()
    listed = invoke("lore", "list", "-p", "harbour")
    assert "the_brass_locket     The brass locket" in listed.output
    shots(page, "lore")
    before = sorted(p.name for p in project.lore_dir.iterdir())
    page.fill("input[name=name]", "Ships")
    page.fill("input[name=keys]", "ship(")
    page.check("input[name=regex]")
    page.fill("textarea[name=content]", "Ships.")
    page.click("#add-lore")
    error = page.locator(".message.error")
    error.wait_for()
    assert "not added: " in error.inner_text()
    assert "key 'ship(' is not a valid regular expression" in error.inner_text()
    assert sorted(p.name for p in project.lore_dir.iterdir()) == before
    assert page.input_value("input[name=keys]") == "ship("      # kept, to fix and send again
    assert page.is_checked("input[name=regex]")
    shots(page, "lore_error")

    # memory, context, numbers
    page.get_by_role("link", name="Memory").click()
    page.wait_for_url("**/p/harbour/memory")
    page.locator("#characters").wait_for()
    shots(page, "memory")
    page.get_by_role("link", name="Context").click()
    page.wait_for_url("**/p/harbour/context")          # the page waits for its prompt build
    shown(page, ".budget-bar .seg")
    assert page.locator(".budget-bar .seg").count() >= 3
    shots(page, "context")
    page.get_by_role("link", name="Numbers").click()
    page.wait_for_url("**/p/harbour/numbers")
    page.locator("img.charts").wait_for()
    shots(page, "numbers")

    # stop the daemon from the live page and see it stop
    page.get_by_role("link", name="Live").click()
    page.wait_for_url("**/p/harbour/live")
    page.click("#stop")
    page.locator("#daemon-message").get_by_text("asked novel run").wait_for()
    page.locator("#state").get_by_text("stopped").wait_for(timeout=30_000)
    assert read_heartbeat(project).state == "stopped"
    shots(page, "stopped")


def test_what_the_browser_itself_decides(project, projects_dir):
    """What only a browser shows: the printed link with its token, followed from another
    site (a cross-site navigation, which carries no SameSite=Strict cookie), opens the page
    and a reload keeps it open; the live page drops the ticks a rewind takes away and
    shows the tick written again below the highest it had; a seventh Live tab loads
    beside six others."""
    run_ticks(project, 5)
    with serving(make_site(projects_dir, token=TOKEN), host="0.0.0.0") as client, \
            playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        url = f"http://127.0.0.1:{client.port}"
        try:
            context = browser.new_context()
            a_link_from_another_site(context, url)          # the cookie stays in `context`
            a_rewind_under_the_live_page(context, url, project)
            seven_live_tabs(context, url, project)
        finally:
            browser.close()


def a_link_from_another_site(context, url: str) -> None:
    page = context.new_page()
    link = f"{url}/p/harbour/book?token={TOKEN}"
    page.route("http://elsewhere.test/", lambda route: route.fulfill(
        body=f'<a id="printed" href="{link}">the book</a>', content_type="text/html"))
    page.goto("http://elsewhere.test/")
    page.click("#printed")
    page.wait_for_url(url + "/p/harbour/book")
    shown(page, "h1")
    assert page.locator("h1").inner_text() == "harbour"
    page.reload()
    assert page.locator("h1").inner_text() == "harbour"
    page.close()


def a_rewind_under_the_live_page(context, url: str, project) -> None:
    page = context.new_page()
    page.goto(url + "/p/harbour/live")
    shown(page, "#tick-5")
    assert invoke("rewind", "3", "-p", "harbour").exit_code == 0
    page.locator("#tick-5").wait_for(state="detached")
    page.locator("#tick-4").wait_for(state="detached")
    run_ticks(project, 1, offline_seed=7)            # tick 4 again, another scene
    title = load_scene(project.scene_path(4)).title
    page.locator("#tick-4").get_by_text(title).wait_for()
    assert page.locator("#ticks li").evaluate_all("items => items.map(i => i.id)") == [
        "tick-4", "tick-3", "tick-2", "tick-1"]
    page.close()


# Headless Chromium shows every tab as seen; this hides one as a browser hides a tab in
# the background: document.hidden, visibilityState 'hidden', and a visibilitychange.
HIDING = """(() => {
  let hidden = false;
  for (const [name, value] of [["hidden", () => hidden],
                               ["visibilityState", () => hidden ? "hidden" : "visible"]])
    Object.defineProperty(Document.prototype, name, {get: value, configurable: true});
  window.hide = (value) => {
    hidden = value;
    document.dispatchEvent(new Event("visibilitychange"));
  };
})();"""


def seven_live_tabs(context, url: str, project) -> None:
    """A browser opens at most six connections to a server (HTTP/1.1), and a Live tab's
    stream holds one: six in the background, then a seventh, which must load; a tab seen
    again shows the tick that landed meanwhile."""
    tabs = []
    for _ in range(6):
        tab = context.new_page()
        tab.add_init_script(HIDING)
        tab.goto(url + "/p/harbour/live")
        shown(tab, "#tick-4")
        tab.evaluate("hide(true)")
        tabs.append(tab)
    seventh = context.new_page()
    seventh.goto(url + "/p/harbour/live", timeout=10_000)
    shown(seventh, "#tick-4")
    run_ticks(project, 1)
    seventh.locator("#tick-5").wait_for(timeout=10_000)
    assert tabs[0].locator("#tick-5").count() == 0            # hidden: no stream
    tabs[0].evaluate("hide(false)")
    tabs[0].locator("#tick-5").wait_for(timeout=10_000)
