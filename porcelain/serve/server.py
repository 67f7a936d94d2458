"""The HTTP side of `jp serve`: who may ask (token, Host), what every answer carries
(security headers), and which page answers (`routes.py`).

Standard library only: a ``ThreadingHTTPServer`` on loopback.  Every page
lives under a root path drawn at random for this run (``/jp-KEY/``), and a
request is served only with the token: in the URL jp printed
(``/jp-KEY/?token=...``, answered with a redirect that drops it from the
address bar and sets it as an ``HttpOnly``, ``SameSite=Strict`` cookie named for
the port, whose ``Path`` is the root) or in that cookie.  Browsers send a cookie
to every port of a host, so the root path is what keeps the credential from
another server on 127.0.0.1: the browser sends it only to paths under this run's
root, which no other server, page or link knows.  jp's own links are written
from ``/``; the server puts the root in front of them (``_rooted``).  The Host
header must name the address the server listens on (no DNS rebinding).  The
store is opened anew for each request, so every page shows the refs as they
are now.
"""

from __future__ import annotations

import errno
import hmac
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from porcelain import clock
from porcelain.serve.routes import BadRequest, NotFound, Reply, route

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gitstore import Conversation, Store
    from porcelain.domain.prices import Price

SHOW_SECRETS = "secrets"  # ?secrets=1: a page shows what the scanner found (loopback only)
COOKIE = "jp-serve-{port}"
LINKS = re.compile(rb'(\s(?:href|src|action|data-live)=")/(?!/)')
FOLLOW = "X-Next"  # a live page's next address, a path of the site like its links
MAX_CONNECTIONS = 64  # at once; one more is answered 503 and closed at once
PER_CLIENT = 8  # at once from one address (a browser opens 6); one more is answered 429
HEADER_SECONDS = 5.0  # the request line and headers must all arrive within this
REQUEST_SECONDS = 60.0  # a whole request, its answer included
IDLE_SECONDS = 10.0  # a read or a write that makes no progress for this long ends it
BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    b"Retry-After: 5\r\nContent-Length: 30\r\nConnection: close\r\n\r\n"
    b"busy: too many connections\r\n\r\n"
)
CROWDED = (
    b"HTTP/1.0 429 Too Many Requests\r\nContent-Type: text/plain\r\n"
    b"Retry-After: 5\r\nContent-Length: 39\r\nConnection: close\r\n\r\n"
    b"busy: too many connections from you\r\n\r\n"
)
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    "script-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def address(host: str) -> IPv4Address | IPv6Address | None:
    """``host`` as an IP address (``[::1]`` too), or None for a name."""
    try:
        return ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Loopback by address: an address of 127.0.0.0/8 or ::1, or the name
    ``localhost``; any other name (``127.example.com``) is not."""
    found = address(host)
    return host.lower() == "localhost" if found is None else found.is_loopback


def is_wildcard(host: str) -> bool:
    """``0.0.0.0`` or ``::``: every address of the machine."""
    found = address(host)
    return found is not None and found.is_unspecified


@lru_cache(maxsize=1)
def machine_names() -> frozenset[str]:
    """The names a request reaching a server on every address may give: this
    machine's host name and its fully qualified one."""
    names = {socket.gethostname(), socket.getfqdn()}
    return frozenset(name.lower() for name in names if name)


@dataclass
class Site:
    """What every request is checked against and served from."""

    open_store: Callable[[], Store]
    window: Callable[[Store, Conversation], tuple[str, int]]
    # the user's prices, read anew for each page that shows a cost (none: jp's table alone)
    prices: Callable[[], Mapping[str, Price]] = dict
    host: str = "127.0.0.1"
    port: int = 0
    token: str = field(default_factory=lambda: clock.secret(32))
    key: str = field(default_factory=lambda: clock.secret(16))

    @property
    def root(self) -> str:
        """This run's root path: every page is under it, and the cookie too."""
        return f"/jp-{self.key}"

    @property
    def cookie(self) -> str:
        return COOKIE.format(port=self.port)

    def allows(self, header: str) -> bool:
        """The Host header names this server: its port, and a loopback name, the
        address it listens on, or (listening on every address) any address or
        this machine's name.  An address cannot be rebound by DNS; a name other
        than these could be (DNS rebinding), so it is refused."""
        name, colon, port = header.rpartition(":")
        if not colon or port != str(self.port) or not name:
            return False
        if name.lower() in ("127.0.0.1", "localhost", "[::1]", _shown(self.host).lower()):
            return True
        given = address(name) if name.startswith("[") == (":" in name) else None
        if is_wildcard(self.host):
            return given is not None or name.lower() in machine_names()
        return given is not None and given == address(self.host)

    def url(self) -> str:
        """The URL to open: on every address, the machine's name stands for it."""
        host = socket.gethostname() if is_wildcard(self.host) else self.host
        return f"http://{_shown(host)}:{self.port}{self.root}/?{urlencode({'token': self.token})}"


def _shown(host: str) -> str:
    """``host`` as a URL spells it: an IPv6 address in brackets."""
    host = host.strip("[]")
    return f"[{host}]" if ":" in host else host


class Handler(BaseHTTPRequestHandler):
    server_version = "jp-serve"
    sys_version = ""
    timeout = IDLE_SECONDS
    site: Site  # set on the class made for one server (``make_server``)
    server: Server

    def parse_request(self) -> bool:
        """The request line and headers are in: from here the whole request's limit holds."""
        ok = super().parse_request()
        self.server.parsed(self.connection)
        return ok

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        self._answer(self._reply())

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(self._reply(), body=False)

    def do_POST(self) -> None:  # noqa: N802
        self._answer(_text(HTTPStatus.METHOD_NOT_ALLOWED, "jp serve is read-only"))

    do_PUT = do_DELETE = do_PATCH = do_POST  # noqa: N815

    def _reply(self) -> Reply:
        if not self.site.allows(self.headers.get("Host", "")):
            return _text(HTTPStatus.MISDIRECTED_REQUEST, "refused: unknown Host header")
        parts = urlsplit(self.path)
        root = self.site.root
        if parts.path != root and not parts.path.startswith(root + "/"):
            return _text(HTTPStatus.FORBIDDEN, "refused: open the URL `jp serve` printed")
        path = parts.path[len(root) :] or "/"
        query = parse_qs(parts.query, keep_blank_values=True)
        given = query.pop("token", [None])[0]
        if given is not None and hmac.compare_digest(given.encode(), self.site.token.encode()):
            return _login(self.site, path, query)
        if not self._has_cookie():
            return _text(HTTPStatus.FORBIDDEN, "refused: open the URL `jp serve` printed")
        if not is_loopback(str(self.client_address[0])):
            query.pop(SHOW_SECRETS, None)  # findings stay masked for another machine
        try:
            return _rooted(route(self.site, path, query), root)
        except NotFound as exc:
            return _text(HTTPStatus.NOT_FOUND, f"not found: {exc}")
        except BadRequest as exc:
            return _text(HTTPStatus.BAD_REQUEST, f"bad request: {exc}")
        except Exception as exc:  # a page that failed must not stop the server
            sys.stderr.write(f"jp serve: {self.path[:200]!r} failed: {type(exc).__name__}\n")
            return _text(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error (see the server's log)")

    def _has_cookie(self) -> bool:
        try:
            jar = SimpleCookie(self.headers.get("Cookie", ""))
        except CookieError:
            return False
        morsel = jar.get(self.site.cookie)
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


def _login(site: Site, path: str, query: dict[str, list[str]]) -> Reply:
    """The token was in the URL: keep it as a cookie for this run's root only, and
    show the page without it."""
    rest = urlencode(query, doseq=True)
    cookie = f"{site.cookie}={site.token}; HttpOnly; SameSite=Strict; Path={site.root}"
    return Reply(
        int(HTTPStatus.SEE_OTHER),
        "text/plain; charset=utf-8",
        b"",
        {"Location": site.root + path + (f"?{rest}" if rest else ""), "Set-Cookie": cookie},
    )


def _rooted(reply: Reply, root: str) -> Reply:
    """A page's own links (``href="/..."``, ``src``, ``action``, a followed page's
    ``data-live`` and the ``X-Next`` it is told to ask next) under this run's root.

    Text from the store reaches a page only escaped (a quote is ``&quot;``) and
    Markdown links only to http, https or mailto, so ``="/`` is always jp's markup.
    """
    if not reply.content_type.startswith("text/html"):
        return reply
    body = LINKS.sub(rb"\1" + root.encode() + b"/", reply.body)
    headers = dict(reply.headers)
    follow = headers.get(FOLLOW)
    if follow is not None and follow.startswith("/") and not follow.startswith("//"):
        headers[FOLLOW] = root + follow
    return Reply(reply.status, reply.content_type, body, headers)


class Server(ThreadingHTTPServer):
    """A threading server with bounds: ``MAX_CONNECTIONS`` at once and
    ``PER_CLIENT`` of them from one address (so one client cannot hold every
    slot: another is still answered), each one's
    headers within ``HEADER_SECONDS`` and the whole request within
    ``REQUEST_SECONDS`` (a reaper shuts a socket that overstays, which ends its
    blocked read), and a client that goes away costs no traceback."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[Handler]) -> None:
        super().__init__(address, handler)
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.lock = threading.Lock()
        self.live: dict[socket.socket, tuple[float, float]] = {}  # socket -> (start, limit)
        self.clients: dict[socket.socket, str] = {}  # socket -> the address it came from
        self.per_client: dict[str, int] = {}  # address -> connections open now
        self.closing = threading.Event()
        threading.Thread(target=self._reap, name="jp-serve-reaper", daemon=True).start()

    def get_request(self) -> tuple[socket.socket, Any]:
        try:
            return super().get_request()
        except OSError as exc:  # out of descriptors: wait a little rather than spin on accept
            if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                time.sleep(0.1)
            raise

    def process_request(self, request: Any, client_address: Any) -> None:
        client = str(client_address[0]) if isinstance(client_address, tuple) else ""
        with self.lock:
            crowded = self.per_client.get(client, 0) >= PER_CLIENT
            if not crowded:
                self.per_client[client] = self.per_client.get(client, 0) + 1
        if crowded:
            self._refuse(request, CROWDED)
            return
        if not self.slots.acquire(blocking=False):
            self._leave(client)
            self._refuse(request, BUSY)
            return
        with self.lock:
            self.live[request] = (clock.elapsed(), HEADER_SECONDS)
            self.clients[request] = client
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done(request)
            raise

    def _refuse(self, request: Any, answer: bytes) -> None:
        """Say why in one short answer, without waiting on the client, and close."""
        try:
            request.settimeout(0.5)
            request.sendall(answer)
        except OSError:
            pass
        self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done(request)

    def _leave(self, client: str) -> None:
        with self.lock:
            left = self.per_client.get(client, 0) - 1
            if left > 0:
                self.per_client[client] = left
            else:
                self.per_client.pop(client, None)

    def _done(self, request: Any) -> None:
        with self.lock:
            if request not in self.clients:
                return  # already released (an error after the thread ended)
            self.live.pop(request, None)
            client = self.clients.pop(request)
        self._leave(client)
        self.slots.release()

    def parsed(self, request: Any) -> None:
        with self.lock:
            if request in self.live:
                self.live[request] = (self.live[request][0], REQUEST_SECONDS)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, never a traceback; a client that reset or timed out, nothing."""
        failed = sys.exc_info()[1]
        if isinstance(failed, OSError):
            return
        sys.stderr.write(f"jp serve: a request failed: {type(failed).__name__}\n")

    def _reap(self) -> None:
        while not self.closing.wait(0.5):
            now = clock.elapsed()
            with self.lock:
                late = [sock for sock, (start, limit) in self.live.items() if now - start > limit]
            for sock in late:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def server_close(self) -> None:
        self.closing.set()
        super().server_close()


def make_server(site: Site) -> Server:
    """Bind ``site.host:site.port`` (port 0: any free one, written back to ``site``)."""
    handler = type("SiteHandler", (Handler,), {"site": site})
    family_host = site.host.strip("[]")
    server_class: type[Server] = Server
    if ":" in family_host:
        server_class = type("V6Server", (Server,), {"address_family": socket.AF_INET6})
    server = server_class((family_host, site.port), handler)
    site.port = server.server_address[1]
    if is_wildcard(family_host):
        machine_names()  # looked up once, before the first request waits on it
    return server
