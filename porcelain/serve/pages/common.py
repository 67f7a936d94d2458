"""What several pages share: finding a conversation, its tabs, a pager."""

from __future__ import annotations

from typing import Any

from gitstore import Conversation, Store, is_valid_id
from porcelain.serve.html import Markup, join, link, tag
from porcelain.serve.routes import NotFound

TABS = (
    ("", "Transcript"),
    ("/tree", "Tree"),
    ("/review", "Compactions and reviews"),
    ("/size", "Size"),
)


def load(store: Store, cid: str) -> Conversation:
    """The conversation ``cid`` names (a whole id, as links carry), else a 404."""
    if not is_valid_id(cid) or store.refs.locate(cid) is None:
        raise NotFound(f"no conversation {cid}")
    return store.log.load(cid)


def title(store: Store, cid: str) -> str:
    return str(store.notes.meta(cid).get("title") or "(untitled)")


def tabs(cid: str, current: str) -> Markup:
    items = (
        tag("li", name, class_="current")
        if path == current
        else tag("li", link(f"/c/{cid}{path}", name))
        for path, name in TABS
    )
    return tag("ul", join(items), class_="tabs")


def pager(path: str, query: dict[str, Any], page: int, pages: int) -> Markup:
    """``« previous  page 2 of 9  next »`` (nothing for one page)."""
    if pages <= 1:
        return Markup("")
    parts = []
    if page > 1:
        parts.append(link(path, "« previous", {**query, "page": page - 1}, rel="prev"))
    parts.append(tag("span", f"page {page} of {pages}"))
    if page < pages:
        parts.append(link(path, "next »", {**query, "page": page + 1}, rel="next"))
    return tag("nav", join(parts, " "), class_="pager")


def pages_of(total: int, size: int) -> int:
    return max(1, -(-total // size))


def short(cid: str | None) -> str:
    return (cid or "")[:12]
