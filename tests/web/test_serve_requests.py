"""`novel serve`'s answers to requests themselves: the token (a link's landing, its
redirect, the Authorization header), links to a project whose name needs encoding, and the
status of a fault (the server's, not the request's: a 500)."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

import pytest

from novel_agent.story.project.folder import create_project
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving

TOKEN = "s3cret-token"
SECRET = "test-secret"


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_authorization_scheme_is_case_insensitive(project, projects_dir, scheme):
    with serving(make_site(projects_dir, token=TOKEN), host="0.0.0.0") as client:
        answer = client.get("/", headers={"Authorization": f"{scheme} {TOKEN}"})
        wrong = client.get("/", headers={"Authorization": f"{scheme} nope"})
    assert answer.status == 200 and wrong.status == 401


def where_it_goes(answer) -> str:
    """Where a browser goes from `answer`: a redirect's Location, or the page's refresh."""
    if 300 <= answer.status < 400:
        return answer.headers["location"]
    found = re.search(r'<meta http-equiv="refresh" content="0; url=([^"]*)">', answer.text)
    assert found, answer.text
    return html.unescape(found.group(1))


def test_the_token_lands_on_a_page_that_sets_the_cookie_and_opens_the_address(project,
                                                                               projects_dir):
    """A page, not a redirect: a link followed from another site is a cross-site
    navigation, which carries no SameSite=Strict cookie even after a redirect (the browser
    test follows one); the page's own navigation is same-site."""
    with serving(make_site(projects_dir, token=TOKEN), host="0.0.0.0") as client:
        landing = client.get(f"/p/harbour/book?token={TOKEN}&page=1")
        cookie = landing.headers["set-cookie"]
        opened = client.get(where_it_goes(landing), headers={"Cookie": cookie.split(";")[0]})
    assert landing.status == 200 and landing.headers["cache-control"] == "no-store"
    assert where_it_goes(landing) == "/p/harbour/book?page=1"
    assert cookie.startswith(f"novel_token_{client.port}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert opened.status == 200 and "<h1>harbour</h1>" in opened.text


@pytest.mark.parametrize("path", ["//evil.example/", "//evil.example/p/harbour/book",
                                  "/\\evil.example/", "///evil.example/"])
def test_the_token_s_landing_never_leaves_the_server(project, projects_dir, path):
    with serving(make_site(projects_dir, token=TOKEN), host="0.0.0.0") as client:
        answer = client.get(f"{path}?token={TOKEN}")
    target = where_it_goes(answer)
    assert target.startswith("/") and not target.startswith("//"), target
    assert urlsplit(target).netloc == "" and "\\" not in target
    assert "evil.example" in target           # the same path, on this server


def test_a_project_whose_name_needs_encoding_links_to_itself(projects_dir):
    """`my book#2`: a '#' left as it is cuts the link at it, a space breaks it."""
    name = "my book#2"
    book = create_project(projects_dir / name, {"name": name, "premise": "A keeper."},
                          config={"llm": {"provider": "offline"}})
    run_ticks(book, 2)
    (book.lore_dir / "the bell#1.yaml").write_text("keys: [bell]\ncontent: It rings.\n")
    encoded = "/p/my%20book%232/"
    with serving(make_site(projects_dir)) as client:
        pages = {path: client.get(path) for path in ("/", encoded + "book", encoded + "live",
                                                     encoded + "memory", encoded + "lore")}
        links = {link for page in pages.values() for link in re.findall(
            r'(?:href|action|hx-post|src|data-events)="([^"]*)"', page.text)}
        ours = {urlsplit(html.unescape(link)).path for link in links
                if "/p/" in link and "/static/" not in link}
        assert all(path.startswith(encoded) for path in ours), ours
        answers = {path: client.get(path).status for path in ours
                   if not path.endswith("/events")}     # a stream: it never ends
        export = client.post(encoded + "export", {"format": "md", "csrf": SECRET})
        downloaded = client.get(urlsplit(export.headers["location"]).path)
    assert all(page.status == 200 for page in pages.values())
    assert re.search(r'book" class="here">Book</a>', pages[encoded + "book"].text)
    assert {urlsplit(p).path.removeprefix(encoded) for p in ours} >= {
        "book", "live", "steer", "lore", "memory", "context", "numbers", "scene/1", "scene/2",
        "events", "daemon/start", "daemon/stop", "export", "lore/the%20bell%231.yaml"}
    assert answers == {path: 405 if path.endswith(("/start", "/stop", "/export")) else 200
                       for path in ours if not path.endswith("/events")}
    assert export.headers["location"].endswith(encoded + "download/my%20book%232.md")
    assert downloaded.status == 200 and downloaded.text.startswith("# my book#2")
