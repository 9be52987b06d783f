"""`novel serve`'s answers to requests themselves: the token (a link's landing, its
redirect, the Authorization header), links to a project whose name needs encoding, and the
status of a fault (the server's, not the request's: a 500)."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

import pytest

from tests.support.web_server import make_site, serving

TOKEN = "s3cret-token"


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
