"""What keeps `novel serve` to the person who started it.

- On a loopback address only requests whose Host is that address (or localhost)
  are answered: a web page elsewhere cannot reach the server through a DNS name
  rebound to 127.0.0.1.
- With a token (required off loopback), every request carries it: once as
  `?token=...` (which sets an HttpOnly, SameSite=Strict cookie and lands on a page
  that opens the same address without it, on this server only), then by the
  cookie, or as `Authorization: Bearer` (the scheme in any case, as RFC 7235 has it).
- Every request that changes something (POST) must come from the page itself:
  an `Origin` naming another host is refused, and the form must carry the
  server's secret (`csrf` field or `X-CSRF-Token` header), which only pages the
  server rendered hold (no CORS header is ever sent, so no other site can read one).
- Every answer says nosniff, no framing, no referrer to other sites, and a content policy that
  allows scripts from the server's own /static only.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from html import escape
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse

from novel_agent.web.site import Site

COOKIE = "novel_token"     # + the port: browsers share cookies between ports of a host
SAFE = ("GET", "HEAD", "OPTIONS")
HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
     b"img-src 'self' data:; frame-ancestors 'none'; form-action 'self'"),
]
LANDING = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
           '<meta http-equiv="refresh" content="0; url={url}"><title>novel serve</title>'
           '</head><body><p>Token taken: <a href="{url}">go on</a>.</p></body></html>')
Scope = dict[str, Any]
ASGI = Callable[[Scope, Callable, Callable], Awaitable[None]]


def same(a: str, b: str) -> bool:
    """Constant-time equality of two secrets."""
    return hmac.compare_digest(a.encode(), b.encode())


class Guard:
    """ASGI middleware: the Host check, the token, the Origin check, the headers."""

    def __init__(self, app: ASGI, site: Site, allowed_hosts: tuple[str, ...] = ()):
        self.app, self.site, self.allowed_hosts = app, site, allowed_hosts

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refuse(scope)
        if refusal is not None:
            await refusal(scope, receive, self._with_headers(send))
            return
        await self.app(scope, receive, self._with_headers(send))

    def refuse(self, scope: Scope) -> Any:
        """A response refusing the request, or None to let it through."""
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.allowed_hosts and _hostname(host) not in self.allowed_hosts:
            return PlainTextResponse(f"refused: Host '{host}' is not this server's address",
                                     400)
        if self.site.token:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.get("token", "")
            if given and same(given, self.site.token):
                rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
                return self._landing(scope, local_path(scope["path"])
                                     + ("?" + rest if rest else ""))
            if not self._has_token(headers, _cookie(scope)):
                return PlainTextResponse("refused: this server needs its token: open the "
                                         "address `novel serve` printed (…/?token=…)", 401)
        if scope["method"] not in SAFE:
            origin = headers.get("origin")
            if origin and _origin_host(origin) != host:
                return PlainTextResponse(f"refused: a request from another site ({origin})",
                                         403)
        return None

    def _landing(self, scope: Scope, target: str) -> HTMLResponse:
        """The cookie, on a page that opens `target`. A page, not a redirect: the printed
        link followed from another site is a cross-site navigation, on which a browser
        sends no SameSite=Strict cookie, after a redirect or on a reload; the page's own
        navigation is same-site, so the cookie goes with it."""
        response = HTMLResponse(LANDING.format(url=escape(target)),
                                headers={"Cache-Control": "no-store"})
        response.set_cookie(_cookie(scope), self.site.token, httponly=True, samesite="strict")
        return response

    def _has_token(self, headers: Headers, name: str) -> bool:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and same(given.strip(), self.site.token):
            return True
        cookie = Request({"type": "http", "headers": [(b"cookie", headers.get("cookie", "")
                                                       .encode("latin-1"))]}).cookies
        return same(cookie.get(name, ""), self.site.token)

    @staticmethod
    def _with_headers(send: Callable) -> Callable:
        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + HEADERS
            await send(message)
        return wrapped


def _cookie(scope: Scope) -> str:
    """The token cookie's name for the server that got the request."""
    server = scope.get("server") or ("", 0)
    return f"{COOKIE}_{server[1]}"


def local_path(path: str) -> str:
    """A request's (decoded) path as a URL on this server only: encoded, with one leading
    slash, so that `//other.site/` (or `/\\other.site/`) is never read as another host."""
    return "/" + quote(path).lstrip("/")


def _hostname(host: str) -> str:
    """The name of a Host header, without its port."""
    if host.startswith("["):
        return host.split("]")[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _origin_host(origin: str) -> str:
    """The host[:port] of an Origin header."""
    return origin.split("://", 1)[-1].rstrip("/")


def check_csrf(site: Site, form: Any, headers: Any) -> bool:
    """Whether a form (or its X-CSRF-Token header) carries the server's secret."""
    given = str(form.get("csrf") or headers.get("x-csrf-token") or "")
    return bool(given) and same(given, site.csrf)
