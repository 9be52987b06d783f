"""`novel serve`'s answers to requests themselves: the token (a link's landing, its
redirect, the Authorization header), links to a project whose name needs encoding, and the
status of a fault (the server's, not the request's: a 500)."""

from __future__ import annotations

import pytest

from tests.support.web_server import make_site, serving

TOKEN = "s3cret-token"


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_authorization_scheme_is_case_insensitive(project, projects_dir, scheme):
    with serving(make_site(projects_dir, token=TOKEN), host="0.0.0.0") as client:
        answer = client.get("/", headers={"Authorization": f"{scheme} {TOKEN}"})
        wrong = client.get("/", headers={"Authorization": f"{scheme} nope"})
    assert answer.status == 200 and wrong.status == 401
