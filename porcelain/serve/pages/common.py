"""What several pages share: finding a conversation, its title, its tabs, a pager,
and the masking of secrets in what a page shows of stored text."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from gitstore import Conversation, Store, ids
from porcelain.app.describe import summaries
from porcelain.domain.titles import shown_title
from porcelain.serve.html import Markup, join, link, tag
from porcelain.serve.routes import NotFound, Query, flag

T = TypeVar("T")

TABS = (
    ("", "Transcript"),
    ("/tree", "Tree"),
    ("/review", "Compactions and reviews"),
    ("/size", "Size"),
)


def load(store: Store, cid: str) -> Conversation:
    """The conversation ``cid`` names (a whole id, as links carry), else a 404."""
    if not ids.is_valid(cid) or store.refs.locate(cid) is None:
        raise NotFound(f"no conversation {cid}")
    return store.log.load(cid)


def title(store: Store, cid: str, query: Query) -> str:
    """The conversation's title by the one rule `ls`, `show` and `use` follow
    (``porcelain/domain/titles.py``), its facts read from the cache's summary;
    secrets masked unless ``?secrets=1``."""
    loc = store.refs.locate(cid)
    facts = summaries(store, [loc])[loc.tip] if loc is not None else {}
    meta = store.notes.meta(cid)
    found = shown_title(meta.get("title"), facts.get("tool_title"), facts.get("first_request"))
    return masked(found, query)[0]


SECRETS = "secrets"  # ?secrets=1: the page shows what the scanner found (the server keeps it for loopback only)


def masked(value: T, query: Query) -> tuple[T, int]:
    """``value`` (a page's JSON, a title) with every secret the scanner finds in its
    strings replaced by ``[redacted: KIND]``, and how many; as it is with
    ``?secrets=1``, which the server keeps only for a request from loopback."""
    if flag(query, SECRETS):
        return value, 0
    from porcelain.domain.secretevents import redact_value  # lazy: the scanner, for a page

    shown, found = redact_value(value)
    return cast(T, shown), sum(found.values())


def secrets_toggle(path: str, query: Query, count: int) -> Markup:
    """The link that shows the ``count`` secrets masked on this page (from this
    machine only), or masks them again; nothing when there is nothing to toggle."""
    showing = flag(query, SECRETS)
    if not count and not showing:
        return Markup("")
    kept = {k: v for k, v in query.items() if k != SECRETS}
    text = "mask secrets" if showing else f"show the {count} secret(s) found (this machine only)"
    return tag("p", link(path, text, {**kept, SECRETS: "" if showing else "1"}, class_="toggle"))


def relation(row: dict[str, Any]) -> tuple[str | None, str, str]:
    """(the conversation a row descends from, its kind as a CSS class, its label):
    a review, a subagent stream (with its agent type), a rewind branch, a fork,
    a divergence; (None, "root", "") for none."""
    origin = row.get("imported_from") or {}
    if row.get("source_id"):
        return str(row["source_id"]), "review", "review"
    if row.get("forked_from"):
        parent = str(row["forked_from"])
        if origin.get("agent"):
            kind = origin.get("agent_type")
            return parent, "subagent", f"subagent ({kind})" if kind else "subagent"
        if origin.get("branch"):
            return parent, "rewind", "rewind"
        return parent, "fork", "fork"
    if row.get("diverged_from"):
        return str(row["diverged_from"]), "diverged", "diverged"
    return None, "root", ""


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


def short_commit(commit: str | None) -> str:
    """A commit id as git abbreviates it by default (ids of conversations are
    shown whole)."""
    return (commit or "")[:12]
