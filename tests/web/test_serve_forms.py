"""`novel serve`'s forms and what they write: a refused form keeps what was typed, lore as
the files want it (line endings, names in any script, a size a prompt can hold), and the
daemon's interval checked as `novel run --interval` and daemon.interval check it."""

from __future__ import annotations

import html
import re

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
