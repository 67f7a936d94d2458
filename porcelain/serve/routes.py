"""Which page answers a path, and a reply as bytes.

Every page has its JSON twin under ``/api``: ``/c/ID/tree`` and
``/api/c/ID/tree`` come from one module, the page drawing what the JSON holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

from porcelain.serve.html import Markup

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gitstore import Conversation, Store
    from porcelain.domain.prices import Price

Query = dict[str, list[str]]


class Source(Protocol):
    """Where pages read from: a store opened for this request, a model's window."""

    @property
    def open_store(self) -> Callable[[], Store]: ...

    @property
    def window(self) -> Callable[[Store, Conversation], tuple[str, int]]: ...

    @property
    def prices(self) -> Callable[[], Mapping[str, Price]]: ...


class NotFound(Exception):
    """No such page or conversation (a 404)."""


class BadRequest(Exception):
    """A query a page cannot read, such as a date that is not one (a 400)."""


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


# path pattern -> the module (under porcelain.serve.pages) whose page() and api() answer
PAGES = (
    (re.compile(r"/"), "listing"),
    (re.compile(r"/c/(?P<cid>[^/]+)"), "transcript"),
    (re.compile(r"/c/(?P<cid>[^/]+)/tree"), "tree"),
    (re.compile(r"/c/(?P<cid>[^/]+)/review"), "review"),
    (re.compile(r"/c/(?P<cid>[^/]+)/size"), "size"),
    (re.compile(r"/ops"), "oplog"),
    (re.compile(r"/usage"), "usage"),
)
STATIC = {
    "/static/style.css": "text/css; charset=utf-8",
    "/favicon.ico": "image/svg+xml",
    "/static/live.js": "text/javascript; charset=utf-8",
}
# what a page that follows its conversation may run: jp's one script, from here
LIVE_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
LIVE = (
    (re.compile(r"/live/c/(?P<cid>[^/]+)"), "conversation"),
    (re.compile(r"/live/ls"), "listing"),
)


def route(source: Source, path: str, query: Query) -> Reply:
    if path in STATIC:
        return Reply(200, STATIC[path], _static(path))
    for pattern, kind in LIVE:
        found = pattern.fullmatch(path)
        if found is not None:
            from porcelain.serve import live  # lazy: only a following page asks

            return live.answer(source.open_store(), kind, query, **found.groupdict())
    api = path.startswith("/api/")
    wanted = path[4:] if api else path
    if api and wanted == "/ls":
        wanted = "/"
    for pattern, name in PAGES:
        found = pattern.fullmatch(wanted)
        if found is None:
            continue
        module = import_module(f"porcelain.serve.pages.{name}")
        store = source.open_store()
        params: dict[str, Any] = found.groupdict()
        if getattr(module, "WANTS_WINDOW", False):
            params["window"] = source.window
        if getattr(module, "WANTS_PRICES", False):
            params["prices"] = source.prices()
        if api:
            value = module.api(store, query, **params)
            body = json.dumps(value, ensure_ascii=False, indent=1, default=str).encode()
            return Reply(200, "application/json; charset=utf-8", body)
        page: Markup = module.page(store, query, **params)
        follows = {"Content-Security-Policy": LIVE_CSP} if getattr(module, "FOLLOWS", False) else {}
        return Reply(200, "text/html; charset=utf-8", page.encode(), follows)
    raise NotFound(path)


_CSS: list[bytes] = []


def _stylesheet() -> bytes:
    """The site's CSS and the highlighter's, read and built once."""
    if not _CSS:
        from importlib.resources import files  # lazy: read once, on the first page

        from porcelain.serve.markdown import code_style  # lazy: pygments, on the first page

        own = files("porcelain.serve").joinpath("static/style.css").read_text()
        _CSS.append((own + "\n" + code_style()).encode())
    return _CSS[0]


def _static(path: str) -> bytes:
    if path.endswith(".css"):
        return _stylesheet()
    from importlib.resources import files  # lazy: read on the browser's first visit

    name = "static/icon.svg" if path == "/favicon.ico" else path.lstrip("/")
    return files("porcelain.serve").joinpath(name).read_bytes()


def one(query: Query, name: str, default: str = "") -> str:
    return (query.get(name) or [default])[0]


def number(query: Query, name: str, default: int) -> int:
    raw = one(query, name)
    return int(raw) if raw.isdigit() and len(raw) < 10 else default


def flag(query: Query, name: str) -> bool:
    return one(query, name) in ("1", "on", "yes", "true")
