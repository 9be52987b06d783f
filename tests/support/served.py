"""What the fake servers share: a ThreadingHTTPServer on a free 127.0.0.1 port, served in a
daemon thread, started and stopped (or used as a context manager) by the test."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class Served:
    """A fake server's life: `start` binds a free port and serves in a daemon thread,
    `stop` ends it, cutting slow answers still in flight short (`_stopping`). A subclass
    gives its request handler (`handler_class`; the handler finds the server as `fake`)
    and names its thread."""

    thread_name = "fake-server"

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """The class that answers this server's requests."""
        raise NotImplementedError

    @property
    def origin(self) -> str:
        """http://127.0.0.1:PORT, once started."""
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        """Bind a free port and serve in a daemon thread."""
        handler = type("Handler", (self.handler_class(),), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow answers still in flight are cut short."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
