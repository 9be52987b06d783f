"""`novel serve`'s forms and what they write: a refused form keeps what was typed, lore as
the files want it (line endings, names in any script, a size a prompt can hold), and the
daemon's interval checked as `novel run --interval` and daemon.interval check it."""

from __future__ import annotations

import html
import re

import pytest

from novel_agent.story.lore import load_lorebook
from tests.support.projects import files_of
from tests.support.web_server import make_site, serving

SECRET = "test-secret"


def field(page: str, name: str) -> str:
    """What an input or textarea named `name` holds on `page`."""
    found = re.search(rf'<textarea name="{name}"[^>]*>(.*?)</textarea>|<input name="{name}"'
                      rf'[^>]*value="([^"]*)"', page, re.S)
    assert found, name
    return html.unescape(found.group(1) if found.group(1) is not None else found.group(2))


def test_a_refused_author_s_note_keeps_what_was_typed(project, projects_dir):
    project.steer_file.write_text("The old note.\n")
    before = files_of(project.root)
    typed = {"text": "Bring the storm ashore <tonight>.", "until": "soon", "ticks": "2"}
    with serving(make_site(projects_dir)) as client:
        refused = client.post("/p/harbour/steer", {**typed, "csrf": SECRET})
    assert refused.status == 422 and "&#39;until&#39; must be a whole number" in refused.text
    assert {name: field(refused.text, name) for name in typed} == typed
    assert files_of(project.root) == before


def test_lore_from_the_form_is_saved_with_unix_line_endings(project, projects_dir):
    """A browser sends a textarea's lines as CRLF (the HTML standard says so)."""
    with serving(make_site(projects_dir)) as client:
        added = client.post("/p/harbour/lore", {
            "name": "The bell", "keys": "bell\r\nbrass bell", "csrf": SECRET,
            "content": "It rings at dusk.\r\nNobody pulls the rope.\r\n"})
        path = project.lore_dir / "the_bell.yaml"
        edited = client.post("/p/harbour/lore/the_bell.yaml", {
            "text": path.read_text().replace("\n", "\r\n").replace("dusk", "dawn"),
            "csrf": SECRET})
    assert added.status == 200 and edited.status == 200
    assert b"\r" not in path.read_bytes()
    (entry,) = load_lorebook(project.lore_dir).entries
    assert entry.content == "It rings at dawn.\nNobody pulls the rope."
    assert entry.keys == ("bell", "brass bell")


def test_lore_names_in_any_script_get_files_of_their_own(project, projects_dir):
    names = {"灯台": "灯台.yaml", "港": "港.yaml", "Маяк Смотритель": "маяк_смотритель.yaml",
             "हिन्दी": "हिन्दी.yaml", "Café Noir": "café_noir.yaml"}
    with serving(make_site(projects_dir)) as client:
        added = [client.post("/p/harbour/lore", {"name": name, "keys": name, "csrf": SECRET,
                                                 "content": f"About {name}."})
                 for name in [*names, "★", "☆"]]
        again = client.post("/p/harbour/lore", {"name": "港", "keys": "x", "content": "y",
                                                "csrf": SECRET})
    assert [a.status for a in added] == [200] * 7
    files = sorted(p.name for p in project.lore_dir.glob("*.yaml"))
    assert set(names.values()) <= set(files) and len(files) == 7
    signs = sorted(set(files) - set(names.values()))        # no letter: a stable name each
    assert all(re.fullmatch(r"entry_[0-9a-f]{8}\.yaml", f) for f in signs), signs
    assert again.status == 422 and "a lore file of that name exists" in again.text
    book = load_lorebook(project.lore_dir)
    assert sorted(e.name for e in book.entries) == sorted([*names, "★", "☆"])


def test_a_lore_entry_over_the_limit_is_refused_saying_the_limit(project, projects_dir):
    big = "The lighthouse keeper's log, day after day. " * 2400        # 105,600 characters
    path = project.lore_dir / "log.yaml"
    path.write_text("keys: [log]\ncontent: short\n")
    before = files_of(project.root)
    with serving(make_site(projects_dir)) as client:
        added = client.post("/p/harbour/lore", {"name": "The log", "keys": "log",
                                                "content": big, "csrf": SECRET})
        edited = client.post("/p/harbour/lore/log.yaml", {
            "text": f"keys: [log]\ncontent: {big}\n", "csrf": SECRET})
        at_limit = client.post("/p/harbour/lore", {"name": "The log", "keys": "log",
                                                   "content": "x" * 10_000,
                                                   "csrf": SECRET})
    for refused in (added, edited):
        assert refused.status == 422
        assert ("&#39;content&#39; is 105,599 characters: an entry holds at most 10,000"
                in refused.text), refused.text[-600:]
    assert at_limit.status == 200
    assert files_of(project.root) == {**before, "lore/the_log.yaml": files_of(
        project.root)["lore/the_log.yaml"]}


@pytest.mark.parametrize("interval", ["nan", "1e400", "-0.5"])
def test_the_page_refuses_an_interval_novel_run_would_refuse(project, projects_dir, interval):
    with serving(make_site(projects_dir)) as client:
        answer = client.post("/p/harbour/daemon/start", {"ticks": "1", "interval": interval,
                                                          "csrf": SECRET},
                             headers={"HX-Request": "true"})
    assert answer.status == 400
    assert html.unescape(answer.text) == (
        '<p class="message error" role="status">\'interval\' must be a number of seconds from '
        f"0 to 604,800 (a week), not '{interval}'</p>")
    assert not (project.novel_dir / "daemon.json").exists()
    assert not (project.log_dir / "serve_run.out").exists()      # no run was started
