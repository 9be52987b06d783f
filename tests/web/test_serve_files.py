"""`novel serve` over a project whose files are broken: the library says which, a cache
(state.yaml) is rebuilt, a scene that cannot be read is a line on the pages that list it,
and what the server cannot read is its fault (a 500 naming the file), not the request's."""

from __future__ import annotations

import html
import re

import pytest

from novel_agent.story.project.folder import create_project
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving


def library_cells(page: str, name: str) -> list[str]:
    row = re.search(rf'<tr id="project-{name}">(.*?)</tr>', page, re.S).group(1)
    return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


@pytest.mark.parametrize("text,problem", [
    ("name: broken\ngeneration: {scene_max_words: [1\n", ":2: invalid YAML"),
    ("name: broken\ngeneration:\n  sceen_max_words: 5\n",
     ":3: unknown key 'generation.sceen_max_words'"),
    ("name: broken\ndaemon:\n  max_failures: 0\n", ":3: daemon.max_failures: must be at least 1"),
    ("name: broken\npremise: [a, b]\n", ":2: 'premise' must be text"),
])
def test_a_project_yaml_that_cannot_be_read_is_a_problem_in_the_library(project, projects_dir,
                                                                        text, problem):
    broken = create_project(projects_dir / "broken", {"name": "broken", "premise": "A keeper."},
                            config={"llm": {"provider": "offline"}})
    run_ticks(broken, 1)
    broken.project_file.write_text(text)
    with serving(make_site(projects_dir)) as client:
        page = client.get("/")
    assert page.status == 200
    (cells,) = [library_cells(page.text, "broken")[1:]]
    assert len(cells) == 1 and cells[0].startswith(str(broken.project_file) + problem), cells
    assert library_cells(page.text, "harbour")[1:3] == ["0", "0"]        # the others as ever


@pytest.mark.parametrize("page,broken", [
    ("steer", b"tick: [3\n"),
    ("context", b"tick: soon\nwriter_tiers: x\n"),
    ("numbers", b"tick: 3\n# caf\xe9\n"),
])
def test_a_state_yaml_that_cannot_be_read_is_rebuilt_from_the_scenes(project, projects_dir,
                                                                     page, broken):
    """state.yaml is a cache beside the scenes: `novel doctor --fix` rebuilds it, and so
    does a page that needs it (when no run holds the project), saying so."""
    run_ticks(project, 3)
    project.state_file.write_bytes(broken)
    with serving(make_site(projects_dir)) as client:
        answer = client.get(f"/p/harbour/{page}")
        again = client.get(f"/p/harbour/{page}")
    assert answer.status == 200, answer.text[-800:]
    assert project.state() == {"tick": 3}
    notice = re.search(r'<p class="message" role="status">(note: state.yaml could not be '
                       r'read.*?)</p>', answer.text, re.S)
    assert notice and notice.group(1).endswith(": rebuilt, the tick counter follows the scenes "
                                               "on disk (tick 3)"), answer.text[:3000]
    assert str(project.state_file) in html.unescape(notice.group(1))
    assert again.status == 200 and "could not be read" not in again.text


def test_a_scene_that_cannot_be_read_is_a_line_on_the_book_and_live_pages(project,
                                                                          projects_dir):
    run_ticks(project, 5)
    scene = project.scene_path(3)
    scene.write_text("---\ntick: [3\n---\nText.\n")
    with serving(make_site(projects_dir)) as client:
        library, book, live = (client.get(path) for path in (
            "/", "/p/harbour/book", "/p/harbour/live"))
        shown = client.get("/p/harbour/scene/3")
    assert library.status == 200 and str(scene) in library_cells(library.text, "harbour")[1]
    for page in (book, live):
        assert page.status == 200, page.text[-500:]
        line = re.search(r'<[a-z]+ class="[a-z ]*problem[a-z ]*" id="(?:problem|tick)-3">(.*?)'
                         r'</', page.text, re.S)
        assert line and f"scene 3 cannot be read: {scene}:2: did not find expected" in html.unescape(
            line.group(1)), page.text
    assert all(f'id="scene-{t}"' in book.text for t in (1, 2, 4, 5))
    assert all(f'id="tick-{t}"' in live.text for t in (1, 2, 4, 5))
    assert shown.status == 500 and str(scene) in html.unescape(shown.text)   # the server's file
    assert "Traceback" not in shown.text


@pytest.mark.parametrize("fault", ["project.yaml", "disk"])
def test_a_fault_of_the_server_is_a_500_with_one_line(project, projects_dir, monkeypatch, fault):
    """A file of the project that cannot be read, or a disk that fails, is the server's
    fault, not the request's: a 500 (a 4xx says the request was wrong)."""
    import errno

    import novel_agent.web.app as app
    if fault == "project.yaml":
        project.project_file.write_text("name: harbour\ngeneration:\n  sceen_max_words: 5\n")
        expected = f"{project.project_file}:3: unknown key 'generation.sceen_max_words'"
    else:
        def broken(*args):
            raise OSError(errno.EIO, "Input/output error", str(project.scene_path(1)))
        monkeypatch.setattr(app, "context_page", broken)
        expected = str(project.scene_path(1))
    with serving(make_site(projects_dir)) as client:
        answer = client.get("/p/harbour/context")
        fragment = client.get("/p/harbour/context", headers={"HX-Request": "true"})
    assert answer.status == 500 and fragment.status == 500
    assert expected in html.unescape(answer.text) and "Traceback" not in answer.text
    assert fragment.text.startswith('<p class="message error" role="status">')
