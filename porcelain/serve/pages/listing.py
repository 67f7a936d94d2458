"""``/``: every conversation, as `jp conversation ls` lists them, with its filters,
a full-text search with grep's semantics, and pages of 100."""

from __future__ import annotations

import re
from typing import Any

from gitstore import CorruptEvent, Store
from porcelain import clock
from porcelain.app.describe import listing
from porcelain.app.search import SCOPES, candidates, chain_hits, compile_pattern, searched
from porcelain.app.targets import active_id
from porcelain.domain.idprefix import unique_lengths
from porcelain.render import lsview
from porcelain.serve.html import Markup, esc, join, link, table, tag, void
from porcelain.serve.html import page as layout
from porcelain.serve.pages.common import pager, pages_of, short
from porcelain.serve.routes import Query, flag, number, one

PER_PAGE = 100
SORTS = ("activity", "created", "id", "turns", "title")


def rows_for(store: Store, query: Query) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The rows the filters keep, in ls's order (newest activity first on a page),
    and for a search the first matching line of each."""
    now = clock.now()
    archived, everything = flag(query, "archived"), flag(query, "all")
    every = store.refs.list(archived=None)
    located = [loc for loc in every if everything or loc.archived == archived]
    hits: dict[str, str] = {}
    pattern = one(query, "q")
    if pattern:
        hits = _search(store, pattern, flag(query, "regex"), everything or archived)
        located = [loc for loc in located if loc.cid in hits]
    rows = listing(store, located, active_id(store))
    rows = lsview.keep_imported(rows, one(query, "imported") or None, agents=everything)
    wanted = [lsview.parse_label(spec) for spec in query.get("label", []) if spec]
    since = one(query, "since")
    rows = lsview.keep(
        rows,
        pinned=flag(query, "pinned"),
        labels=wanted,
        title=one(query, "title") or None,
        since=lsview.parse_since(since, now) if since else None,
    )
    unique = unique_lengths(loc.cid for loc in every)
    for r in rows:
        r["short_id"] = r["id"][: unique.get(r["id"], len(r["id"]))]
    sort = one(query, "sort", "activity")
    rows = lsview.order(rows, sort if sort in SORTS else "activity", not flag(query, "reverse"))
    return rows, hits


def _search(store: Store, pattern: str, regex: bool, archived: bool) -> dict[str, str]:
    """id -> its first line that matches (grep's smart case, over every scope)."""
    try:
        matcher = compile_pattern(pattern, regex)
    except re.error:
        return {}
    located = candidates(store, searched(store, archived, reviews=False), matcher)
    found: dict[str, str] = {}
    for loc in located:
        try:
            events, commits = store.log.read_chain(loc.tip)
        except CorruptEvent:
            continue
        for _commit, hit in chain_hits(events, commits, tuple(SCOPES), matcher):
            found[loc.cid] = f"turn {hit['turn']}, {hit['scope']}: {hit['text']}"
            break
    return found


def _window(query: Query, rows: list[dict[str, Any]]) -> tuple[int, int, list[dict[str, Any]]]:
    size = min(max(number(query, "per_page", PER_PAGE), 1), 1000)
    pages = pages_of(len(rows), size)
    page = min(max(number(query, "page", 1), 1), pages)
    return page, pages, rows[(page - 1) * size : page * size]


def api(store: Store, query: Query) -> list[dict[str, Any]]:
    """`ls -F json`'s rows, of one page (``?page=N&per_page=M``)."""
    rows, _ = rows_for(store, query)
    return _window(query, rows)[2]


def markers(row: dict[str, Any]) -> Markup:
    tags = []
    if row.get("unreadable"):
        tags.append(("unreadable", "unreadable"))
    if row.get("archived"):
        tags.append(("archived", "archived"))
    if row.get("pinned"):
        tags.append(("pinned", "pinned"))
    if row.get("source_id"):
        tags.append(("review", f"review of {short(row['source_id'])}"))
    elif row.get("forked_from"):
        tags.append(("fork", f"fork of {short(row['forked_from'])}"))
    if row.get("diverged_from"):
        tags.append(("diverged", f"diverged from {short(row['diverged_from'])}"))
    origin = row.get("imported_from")
    if isinstance(origin, dict) and origin.get("tool"):
        tags.append(("imported", f"imported from {origin['tool']}"))
    for key, value in (row.get("labels") or {}).items():
        tags.append(("label", f"{key}={value}" if value else key))
    return join(tag("span", text, class_=f"tag {kind}") for kind, text in tags)


def _form(query: Query) -> Markup:
    fields = Markup(
        void(
            "input",
            type="search",
            name="q",
            value=one(query, "q"),
            placeholder="search every event",
        )
        + void(
            "input", type="text", name="title", value=one(query, "title"), placeholder="title holds"
        )
        + void(
            "input", type="text", name="label", value=one(query, "label"), placeholder="label k=v"
        )
    )
    checks = join(
        tag(
            "label",
            Markup(
                void(
                    "input",
                    type="checkbox",
                    name=name,
                    value="1",
                    checked="checked" if flag(query, name) else None,
                )
                + esc(" " + name)
            ),
        )
        for name in ("pinned", "archived", "all", "regex")
    )
    return tag(
        "form",
        Markup(fields + checks + tag("button", "Filter", type="submit")),
        method="get",
        action="/",
        class_="filters",
    )


def page(store: Store, query: Query) -> Markup:
    now = clock.now()
    rows, hits = rows_for(store, query)
    at, pages, shown = _window(query, rows)
    body = []
    for row in shown:
        title = link(
            f"/c/{row['id']}", row["title"] or row["preview"] or "(untitled)", class_="title"
        )
        hit = tag("div", hits[row["id"]], class_="hit") if row["id"] in hits else ""
        body.append(
            (
                Markup(title + tag("div", markers(row), class_="tags") + hit),
                lsview.age(row, now),
                str(row["turns"]),
                tag("code", short(row["id"])),
            )
        )
    kept = {k: v for k, v in query.items() if k != "page"}
    found = tag("p", f"{len(rows)} conversation{'s' if len(rows) != 1 else ''}", class_="count")
    listed = (
        table(("Title", "Age", "Turns", "Id"), body, class_="list")
        if body
        else tag("p", "No conversations match.")
    )
    return layout(
        "Conversations", Markup(_form(query) + found + listed + pager("/", kept, at, pages))
    )
