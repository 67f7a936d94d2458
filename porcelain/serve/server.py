"""The HTTP side of `jp serve`: who may ask (token, Host), what every answer carries
(security headers), and which page answers (`routes.py`).

Standard library only: a ``ThreadingHTTPServer`` on loopback.  A request is
served only with the token: in the URL jp printed (``?token=...``, answered with
a redirect that drops it from the address bar and sets it as an ``HttpOnly``,
``SameSite=Strict`` cookie) or in that cookie.  The Host header must name the
address the server listens on (no DNS rebinding).  The store is opened anew
for each request, so every page shows the refs as they are now.
"""

from __future__ import annotations

import hmac
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from porcelain import clock
from porcelain.serve.routes import NotFound, Reply, route

if TYPE_CHECKING:
    from gitstore import Conversation, Store

COOKIE = "jp_token"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    "script-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


@dataclass
class Site:
    """What every request is checked against and served from."""

    open_store: Callable[[], Store]
    window: Callable[[Store, Conversation], tuple[str, int]]
    host: str = "127.0.0.1"
    port: int = 0
    token: str = field(default_factory=lambda: clock.secret(32))

    def hosts(self) -> set[str]:
        """The Host headers a request may carry: a loopback name, or the bound host."""
        names = {"127.0.0.1", "localhost", "[::1]"}
        if not is_loopback(self.host):
            names.add(f"[{self.host}]" if ":" in self.host.strip("[]") else self.host)
        return {f"{name}:{self.port}" for name in names}

    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host.strip("[]") else self.host
        return f"http://{shown}:{self.port}/?{urlencode({'token': self.token})}"


class Handler(BaseHTTPRequestHandler):
    server_version = "jp-serve"
    sys_version = ""
    site: Site  # set on the class made for one server (``make_server``)

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        self._answer(self._reply())

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(self._reply(), body=False)

    def do_POST(self) -> None:  # noqa: N802
        self._answer(_text(HTTPStatus.METHOD_NOT_ALLOWED, "jp serve is read-only"))

    do_PUT = do_DELETE = do_PATCH = do_POST  # noqa: N815

    def _reply(self) -> Reply:
        if self.headers.get("Host", "") not in self.site.hosts():
            return _text(HTTPStatus.MISDIRECTED_REQUEST, "refused: unknown Host header")
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        given = query.pop("token", [None])[0]
        if given is not None and hmac.compare_digest(given.encode(), self.site.token.encode()):
            return _login(parts.path, query, self.site.token)
        if not self._has_cookie():
            return _text(HTTPStatus.FORBIDDEN, "refused: open the URL `jp serve` printed")
        try:
            return route(self.site, parts.path, query)
        except NotFound as exc:
            return _text(HTTPStatus.NOT_FOUND, f"not found: {exc}")
        except Exception as exc:  # a page that failed must not stop the server
            sys.stderr.write(f"jp serve: {self.path[:200]!r} failed: {type(exc).__name__}\n")
            return _text(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error (see the server's log)")

    def _has_cookie(self) -> bool:
        try:
            jar = SimpleCookie(self.headers.get("Cookie", ""))
        except CookieError:
            return False
        morsel = jar.get(COOKIE)
        return morsel is not None and hmac.compare_digest(
            morsel.value.encode(), self.site.token.encode()
        )

    def _answer(self, reply: Reply, body: bool = True) -> None:
        self.send_response(reply.status)
        headers = {**HEADERS, "Content-Type": reply.content_type, **reply.headers}
        headers["Content-Length"] = str(len(reply.body))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: a request line holds the token on the first visit."""


def _text(status: HTTPStatus, text: str) -> Reply:
    return Reply(int(status), "text/plain; charset=utf-8", (text + "\n").encode())


def _login(path: str, query: dict[str, list[str]], token: str) -> Reply:
    """The token was in the URL: keep it as a cookie, and show the page without it."""
    rest = urlencode(query, doseq=True)
    cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
    return Reply(
        int(HTTPStatus.SEE_OTHER),
        "text/plain; charset=utf-8",
        b"",
        {"Location": (path or "/") + (f"?{rest}" if rest else ""), "Set-Cookie": cookie},
    )


def make_server(site: Site) -> ThreadingHTTPServer:
    """Bind ``site.host:site.port`` (port 0: any free one, written back to ``site``)."""
    handler = type("SiteHandler", (Handler,), {"site": site})
    family_host = site.host.strip("[]")
    server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer
    if ":" in family_host:
        import socket  # lazy: only an IPv6 address needs the socket family

        server_class = type("V6Server", (ThreadingHTTPServer,), {"address_family": socket.AF_INET6})
    server = server_class((family_host, site.port), handler)
    server.daemon_threads = True
    site.port = server.server_address[1]
    return server
