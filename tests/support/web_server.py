"""`novel serve`'s app on a real uvicorn server in a thread (127.0.0.1, a free port), and
a small HTTP client that follows no redirect, for the web tests."""

from __future__ import annotations

import http.client
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import uvicorn

from novel_agent.web.app import create_app
from novel_agent.web.site import Site

NOVEL = (str(Path(sys.executable).parent / "novel"),)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    text: str


class Client:
    """Requests to one server: GET and POST (a form), with the page's CSRF secret."""

    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.port, self.host = port, host
        self.headers: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict | None = None,
                headers: dict[str, str] | None = None) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        body = urlencode(form, doseq=True) if form is not None else None
        sent = {"Host": f"{self.host}:{self.port}", **self.headers, **(headers or {})}
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                        response.read().decode("utf-8", errors="replace"))
        conn.close()
        return answer

    def request_bytes(self, path: str) -> bytes:
        """The body of GET path as bytes (an image), asserting a 200."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("GET", path, headers={"Host": f"{self.host}:{self.port}"})
        response = conn.getresponse()
        assert response.status == 200, response.status
        body = response.read()
        conn.close()
        return body

    def get(self, path: str, **kw) -> Answer:
        return self.request("GET", path, **kw)

    def post(self, path: str, form: dict, **kw) -> Answer:
        return self.request("POST", path, form, **kw)

    def csrf(self, path: str = "/") -> str:
        """The form secret, as a page of the server carries it."""
        found = re.search(r'name="csrf" value="([^"]+)"|"X-CSRF-Token": "([^"]+)"',
                          self.get(path).text.replace("&#34;", '"'))
        return found.group(1) or found.group(2)


@contextmanager
def serving(site: Site, host: str = "127.0.0.1") -> Iterator[Client]:
    """The app over `site` on 127.0.0.1:<free port> until the block ends."""
    config = uvicorn.Config(create_app(site, host), host="127.0.0.1", port=0,
                            log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    site.stopping = lambda: server.should_exit
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Client(port, "127.0.0.1" if host in ("0.0.0.0", "::") else host)
    finally:
        server.should_exit = True
        thread.join(10)


def make_site(projects_dir: Path, **kw) -> Site:
    """A Site over a projects folder, with a fixed secret and a fast live feed."""
    values = {"projects_dir": projects_dir, "env": {}, "novel_command": NOVEL,
              "csrf": "test-secret", "poll": 0.1, **kw}
    return Site(**values)
