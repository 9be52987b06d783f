"""Issue 42's "done when", walked in a real browser (headless Chromium through Playwright,
tests/support/browser.py) over the app in a thread, by one page and without a terminal:
on a 20-scene book the writer edits scene 5 and reads the revise's report, makes a branch
at scene 12, has the Live page's daemon (`novel run`, a subprocess, on the offline model)
write scenes 13 and 14 on it, switches back to main, rewinds and undoes the rewind, and
reads the continuity findings.

A screenshot at each step goes to the test's output, and to $SCREENSHOTS_DIR when set
(`SCREENSHOTS_DIR=docs` makes docs/walkthrough_1_revise.png ... walkthrough_6_continuity.png,
which docs/guides/browser.md shows in order).
"""

from __future__ import annotations

import os

from novel_agent.daemon.heartbeat import read_heartbeat, running
from novel_agent.history.branches import current
from novel_agent.history.store import History
from novel_agent.story.scenes import load_scene
from tests.revision.test_revise import NEW5, NEW_X, first_run, tick_with
from tests.support.audit_cases import BAD, DIES, PLAN1, PLAN2, extraction
from tests.support.browser import launch, needs_chromium, playwright, screenshot, shown
from tests.support.projects import files_of
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving
from tests.web.test_room_edit import scripted

pytestmark = needs_chromium

SHOTS = ("1_revise", "2_branch", "3_written", "4_main", "5_rewind", "5_undone",
         "6_continuity")


def twenty_scenes(project) -> None:
    """Scenes 1-12 as the revise's tests have them (scene 5 hides the ivory astrolabe,
    scene 8 thinks of it), 13-14, Tobin Keel drowning in 15 and pouring the tea in 16 (a
    finding), 17-20; the offline model's seed 5 after 12, so that what the daemon
    writes on a branch (seed 0) is not main's scenes again."""
    first_run(project)
    run_ticks(project, 2, offline_seed=5)
    tick_with(project, planner=PLAN1, writer=PROSE15, extractor=DIES)
    tick_with(project, planner=PLAN2, writer=BAD,
              extractor=extraction(["Mara Quill", "Tobin Keel"]))
    run_ticks(project, 4, offline_seed=5)
    assert project.tick() == 20


PROSE15 = "Tobin Keel drowned at the weir while Mara watched. " * 3


def test_a_writer_edits_branches_writes_rewinds_and_reads_the_findings(
        project, projects_dir, monkeypatch, tmp_path):
    twenty_scenes(project)
    scripted(monkeypatch, ScriptedModel().add("extractor", NEW_X))   # the revise's reading
    folder = tmp_path / "screenshots"
    folder.mkdir()

    def shot(page, name: str) -> None:
        # the page fits its 1,100 pixels: the header's links and search box in sight
        assert page.evaluate("document.documentElement.scrollWidth") <= 1100, name
        box = page.locator("form.search input").bounding_box()
        assert box and box["x"] + box["width"] <= 1100, name
        screenshot(page, folder / f"walkthrough_{name}.png")

    site = make_site(projects_dir, env=dict(os.environ))     # `novel run` as this Python
    with serving(site) as client, playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            url = f"http://127.0.0.1:{client.port}/p/harbour"
            edit_scene_5(page, url, project, shot)
            main = files_of(project.scenes_dir)
            branch_at_12(page, url, project, shot)
            two_scenes_on_the_branch(page, project, main, shot)
            back_to_main(page, project, main, shot)
            rewind_and_undo(page, project, shot)
            the_findings(page, shot)
        finally:
            browser.close()
            beat = read_heartbeat(project)
            if running(beat):            # a failed test must not leave a daemon behind
                os.kill(beat.pid, 15)
    assert errors == []
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"walkthrough_{name}.png" for name in SHOTS)


def header_branch(page) -> str:
    return page.locator("#branch strong").inner_text()


def edit_scene_5(page, url: str, project, shot) -> None:
    page.goto(url + "/scene/5")
    page.click("#edit-scene")
    page.wait_for_url("**/scene/5/edit")
    page.fill("input[name=title]", "The Salt Bridge")
    page.fill("textarea[name=prose]", NEW5)
    page.click("#save-scene")
    shown(page, "#revise-report")
    assert "Scene 5 revised" in page.locator("h1").inner_text()
    assert any("Mara Quill hid the ivory astrolabe" in line
               for line in page.locator("ul.lost li").all_inner_texts())
    assert any("Tobin Keel waits at the Salt Bridge" in line
               for line in page.locator("ul.gained li").all_inner_texts())
    assert "scene 8 mentions “ivory astrolabe”" in page.locator("ul.relying li").first.inner_text()
    shot(page, "1_revise")
    scene = load_scene(project.scene_path(5))
    assert (scene.title, scene.body) == ("The Salt Bridge", NEW5.strip())


def branch_at_12(page, url: str, project, shot) -> None:
    page.goto(url + "/history")
    assert header_branch(page) == "main"
    page.click(f"#entry-{History(project).entry_at(12).short} a.branch-here")
    page.wait_for_url("**/branches?at=12")
    page.fill("input[name=name]", "storm")
    page.click("#new-branch")
    page.locator(".message").get_by_text("on new branch storm, at tick 12").wait_for()
    assert header_branch(page) == "storm"
    assert current(project) == "storm" and project.tick() == 12
    assert not project.scene_path(13).exists()
    # the book as it was after tick 12: scene 5 before the edit, which stays on main
    assert "The Salt Bridge" not in project.scene_path(5).read_text()
    shot(page, "2_branch")


def two_scenes_on_the_branch(page, project, main: dict[str, bytes], shot) -> None:
    page.get_by_role("link", name="Live").click()
    page.wait_for_url("**/live")
    assert header_branch(page) == "storm"
    page.fill("input[name=ticks]", "2")
    page.fill("input[name=interval]", "0")
    page.click("#start")
    page.locator("#daemon-message").get_by_text("started novel run").wait_for()
    page.locator("#tick-13").wait_for(timeout=40_000)
    page.locator("#tick-14").wait_for(timeout=40_000)
    page.locator("#state").get_by_text("stopped").wait_for(timeout=40_000)
    assert not running(read_heartbeat(project))
    shot(page, "3_written")
    assert current(project) == "storm" and project.tick() == 14
    assert [entry.tick for entry in History(project).entries()[:2]] == [14, 13]
    for tick in (13, 14):                       # the branch's own, not main's again
        name = project.scene_path(tick).name
        assert project.scene_path(tick).read_bytes() != main[name]


def back_to_main(page, project, main: dict[str, bytes], shot) -> None:
    storm = {tick: project.scene_path(tick).read_bytes() for tick in (13, 14)}
    page.click("#branch")                           # the header's branch: the list
    page.wait_for_url("**/branches")
    assert page.locator("#branch-storm td.num").inner_text() == "14"
    assert page.locator("#branch-main td.num").inner_text() == "20"
    assert page.locator("#branch-storm td").nth(2).inner_text().startswith("tick 14: ")
    page.click("#branch-main button.switch")
    page.locator(".message").get_by_text("on branch main, at tick 20").wait_for()
    assert header_branch(page) == "main"
    assert page.locator("#branch-storm td").nth(2).inner_text().startswith("tick 14: ")
    shot(page, "4_main")
    assert files_of(project.scenes_dir) == main                 # all 20, as main had them
    assert all(project.scene_path(t).read_bytes() != storm[t] for t in (13, 14))
    page.get_by_role("link", name="Book").click()
    page.wait_for_url("**/book")
    assert page.locator("#scene-20").count() == 1 and page.locator("#scene-21").count() == 0


def rewind_and_undo(page, project, shot) -> None:
    before = files_of(project.root)
    page.get_by_role("link", name="History").first.click()
    page.wait_for_url("**/history")
    page.click(f"#entry-{History(project).entry_at(17).short} a.rewind")
    page.wait_for_url("**/history/rewind?tick=17")
    confirm = page.locator("#confirm").inner_text()
    assert "goes from tick 20 to tick 17" in confirm
    assert "3 scenes taken away (18, 19, 20)" in confirm
    assert "kept as the tag kept/main-20" in page.locator("#kept").inner_text()
    shot(page, "5_rewind")
    page.click("#confirm-rewind")
    page.locator(".message").get_by_text("rewound main: tick 20 → tick 17").wait_for()
    assert project.tick() == 17
    assert [t for t in range(1, 21) if project.scene_path(t).exists()] == list(range(1, 18))
    page.get_by_role("link", name="Book").click()            # the scenes taken away
    page.wait_for_url("**/book")
    assert page.locator("#scene-17").count() == 1 and page.locator("#scene-18").count() == 0

    page.get_by_role("link", name="History").first.click()
    page.wait_for_url("**/history")
    page.click("#undo")
    assert "3 scenes brought back (18, 19, 20)" in page.locator("#confirm").inner_text()
    page.click("#confirm-undo")
    page.locator(".message").get_by_text("undone: main: tick 17 → tick 20").wait_for()
    shot(page, "5_undone")
    assert files_of(project.root) == before
    page.get_by_role("link", name="Book").click()
    page.wait_for_url("**/book")
    assert page.locator("#scene-20").count() == 1


def the_findings(page, shot) -> None:
    page.get_by_role("link", name="Continuity").click()
    page.wait_for_url("**/continuity")
    assert "CED" in page.inner_text("#ced")
    section = page.locator("#subtype-causal-logic")
    assert "Tobin Keel acts or speaks, dead since scene 15" in section.inner_text()
    assert "Tobin laughed and poured the tea for Mara." in section.inner_text()
    shot(page, "6_continuity")
    section.get_by_role("link", name="scene 16").first.click()
    page.wait_for_url("**/scene/16")
    page.locator("#scene-findings ul.findings li").first.wait_for()
    assert "dead since scene 15" in page.inner_text("#scene-findings")
