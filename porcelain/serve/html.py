"""A tiny HTML writer: every text is escaped unless it is `Markup` jp built.

Pages are lists of `Markup` pieces joined at the end; `esc` is the only way a
string becomes markup, so text from the store can never open a tag.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from urllib.parse import quote, urlencode


class Markup(str):
    """A string of HTML that jp wrote (never text from the store)."""

    __slots__ = ()


def esc(value: object) -> Markup:
    """``value`` as HTML text: markup stays, everything else is escaped."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Markup:
    return Markup(sep.join(esc(p) for p in parts))


def _attrs(attrs: Mapping[str, object]) -> str:
    return "".join(
        f' {k.rstrip("_").replace("_", "-")}="{esc(v)}"' for k, v in attrs.items() if v is not None
    )


def tag(element: str, body: object = "", /, **attrs: object) -> Markup:
    """``<element attrs>body</element>``; ``class_`` is ``class``, ``data_x`` is
    ``data-x``; an attribute whose value is None is left out."""
    return Markup(f"<{element}{_attrs(attrs)}>{esc(body)}</{element}>")


def void(element: str, /, **attrs: object) -> Markup:
    """An element without content (``<input ...>``)."""
    return Markup(f"<{element}{_attrs(attrs)}>")


def href(path: str, query: Mapping[str, object] | None = None) -> str:
    """A link inside the server: ``path`` quoted, ``query`` without empty values."""
    kept = {k: v for k, v in (query or {}).items() if v not in (None, "", False)}
    return quote(path) + ("?" + urlencode(kept, doseq=True) if kept else "")


def link(
    path: str, text: object, query: Mapping[str, object] | None = None, **attrs: object
) -> Markup:
    return tag("a", text, href=href(path, query), **attrs)


def table(head: Iterable[object], rows: Iterable[Iterable[object]], **attrs: object) -> Markup:
    top = tag("tr", join(tag("th", h) for h in head))
    body = join(tag("tr", join(tag("td", cell) for cell in row)) for row in rows)
    return tag("table", Markup(tag("thead", top) + tag("tbody", body)), **attrs)


def svg(body: object, width: float, height: float, class_: str) -> Markup:
    """A drawing jp made, sized ``width`` x ``height``."""
    box = f"0 0 {width} {height}"
    xmlns = "http://www.w3.org/2000/svg"
    return tag(
        "svg", body, xmlns=xmlns, width=width, height=height, viewBox=box, role="img", class_=class_
    )


NAV = (("/", "Conversations"), ("/usage", "Usage"), ("/ops", "Operation log"))


LIVE_SCRIPT = Markup('<script src="/static/live.js" defer></script>')


def page(
    title: object, body: object, crumbs: Iterable[tuple[str, object]] = (), live: bool = False
) -> Markup:
    """A whole page: the stylesheet (a file: no inline style or script), a header, ``body``;
    ``live``: with jp's script that follows the page's ``data-live`` element (a file too)."""
    nav = join(link(path, text) for path, text in NAV)
    trail = join((link(path, text) for path, text in crumbs), " / ")
    head = Markup(
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        '<meta name="referrer" content="no-referrer">'
        '<link rel="stylesheet" href="/static/style.css">'
        '<link rel="icon" href="/favicon.ico" type="image/svg+xml">'
    ) + (LIVE_SCRIPT if live else "")
    header = tag(
        "header", Markup(tag("nav", nav) + (tag("div", trail, class_="crumbs") if trail else ""))
    )
    doc = tag(
        "html",
        Markup(
            tag("head", Markup(head + tag("title", f"{title} · jp")))
            + tag("body", Markup(header + tag("main", Markup(tag("h1", title) + esc(body)))))
        ),
        lang="en",
    )
    return Markup("<!doctype html>\n" + doc)
