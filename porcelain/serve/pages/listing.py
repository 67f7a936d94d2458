"""``/``: every conversation, as `jp conversation ls` lists them, with its filters,
a full-text search with grep's semantics, and pages of 100."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gitstore import Store, errors
from porcelain import clock
from porcelain.app.describe import listing
from porcelain.app.listed import AGENT, newest, shortest
from porcelain.app.search import SCOPES, candidates, chain_hits, compile_pattern, searched
from porcelain.app.targets import active_id
from porcelain.domain.idprefix import handles, suffix, unique_lengths
from porcelain.render import lsview
from porcelain.serve.html import Markup, esc, href, join, link, tag, void
from porcelain.serve.html import page as layout
from porcelain.serve.live import refs_state
from porcelain.serve.pages.common import SECRETS, masked, pager, pages_of, relation
from porcelain.serve.routes import Query, flag, number, one

PER_PAGE = 100
FOLLOWS = True  # the list follows the store's refs (``porcelain/serve/live.py``)
SORTS = ("activity", "created", "id", "turns", "title")
# the fields of the query that, set, filter the list (else it is read a page at a time)
TEXTS = ("q", "title", "since", "imported", "project", "group")
NO_PROJECT = "(none)"  # the project filter's value for conversations without one


def rows_for(store: Store, query: Query) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The rows the filters keep, in ls's order (newest activity first on a page),
    and for a search the first matching line of each; secrets masked unless
    ``?secrets=1``."""
    now = clock.now()
    archived, everything = flag(query, "archived"), flag(query, "all")
    every = store.refs.list(archived=None)
    located = [loc for loc in every if everything or loc.archived == archived]
    hits: dict[str, str] = {}
    pattern = one(query, "q")
    if pattern:
        hits = _search(store, pattern, flag(query, "regex"), everything or archived, query)
        located = [loc for loc in located if loc.cid in hits]
    # titles and labels as the page shows them (masked unless ?secrets=1), so that
    # the title filter and the sort see what the reader sees
    rows = masked(listing(store, located, active_id(store)), query)[0]
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
    place = store_project(store)
    for r in rows:
        r["project"] = r.get("project") or place
    if one(query, "project"):
        wanted_project = one(query, "project")
        rows = [r for r in rows if (r["project"] or NO_PROJECT) == wanted_project]
    unique = unique_lengths(loc.cid for loc in every)
    marks = handles(loc.cid for loc in every) if any(suffix(r["id"]) for r in rows) else {}
    for r in rows:
        r["short_id"] = r["id"][: unique.get(r["id"], len(r["id"]))]
        r["handle"] = marks.get(r["id"])  # an imported session's, as `ls -F json` gives it
    sort = one(query, "sort", "activity")
    rows = lsview.order(rows, sort if sort in SORTS else "activity", not flag(query, "reverse"))
    if one(query, "group") == "project":  # stable: each project's rows keep their order
        rows.sort(key=lambda r: (r["project"] is None, r["project"] or ""))
    return rows, hits


def store_project(store: Store) -> str | None:
    """The project a store made by `jp init --here` belongs to (the folder holding its
    ``.git``); None for a store of its own."""
    path = store.path
    return str(path.parent) if path.name == ".git" else None


def tool_of(row: dict[str, Any]) -> str:
    """The tool that wrote the conversation: claude-code, codex, or jp."""
    origin = row.get("imported_from")
    return str(origin.get("tool")) if isinstance(origin, dict) and origin.get("tool") else "jp"


def _search(
    store: Store, pattern: str, regex: bool, archived: bool, query: Query
) -> dict[str, str]:
    """id -> its first line that matches (grep's smart case, over every scope); over
    the events as the transcript shows them, so a masked secret's own text matches
    nothing unless ``?secrets=1`` (no search probes it)."""
    try:
        matcher = compile_pattern(pattern, regex)
    except re.error:
        return {}
    located = candidates(store, searched(store, archived, reviews=False), matcher)
    found: dict[str, str] = {}
    for loc in located:
        try:
            events, commits = store.log.read_chain(loc.tip)
        except errors.CorruptEvent:
            continue
        hit = _first_hit(loc.cid, events, commits, matcher, not flag(query, SECRETS))
        if hit is not None:
            found[loc.cid] = f"turn {hit['turn']}, {hit['scope']}: {hit['text']}"
    return found


def _first_hit(
    cid: str, events: list[Any], commits: list[str], matcher: re.Pattern[str], mask: bool
) -> dict[str, object] | None:
    """The chain's first hit; with ``mask``, the first that still matches once its
    event's secrets are masked (only the events holding a hit are scanned, each once)."""
    at = {c: i for i, c in enumerate(commits)}
    checked: set[int] = set()
    for commit, hit in chain_hits(events, commits, tuple(SCOPES), matcher):
        if not mask:
            return hit
        i = at[commit]
        if i in checked:
            continue  # its masked text matched nothing
        checked.add(i)
        from porcelain.app.redaction import redacted_copy  # lazy: the scanner, for a search

        shown = redacted_copy(cid, [events[i]])[0]
        for _commit, masked_hit in chain_hits(shown, [commit], tuple(SCOPES), matcher):
            return {**masked_hit, "turn": hit["turn"]}
    return None


@dataclass
class Shown:
    """One page of the list: its rows, how many rows every page holds together,
    the first matching line of each row (a search), the page and how many pages."""

    rows: list[dict[str, Any]]
    total: int
    hits: dict[str, str]
    page: int
    pages: int


def _size(query: Query) -> int:
    return min(max(number(query, "per_page", PER_PAGE), 1), 1000)


def shown(store: Store, query: Query) -> Shown:
    """The page asked for: in the default order with no search or filter, read
    from the cache's kept rows (only the page's rows, `ls --limit`'s way); else
    every row the filters keep is made, then the page is cut from them."""
    if _plain(query):
        found = _newest(store, query)
        if found is not None:
            return found
    rows, hits = rows_for(store, query)
    size = _size(query)
    pages = pages_of(len(rows), size)
    page = min(max(number(query, "page", 1), 1), pages)
    return Shown(rows[(page - 1) * size : page * size], len(rows), hits, page, pages)


def _plain(query: Query) -> bool:
    """Whether the list asked for is every row of one kind in the default order (as
    ``rows_for`` reads the query: a flag that is not set filters nothing)."""
    if any(one(query, name) for name in TEXTS) or any(query.get("label", [])):
        return False
    sort = one(query, "sort", "activity")
    return (sort if sort in SORTS else "activity") == "activity" and not any(
        flag(query, name) for name in ("pinned", "reverse")
    )


def _newest(store: Store, query: Query) -> Shown | None:
    everything = flag(query, "all")
    which = (
        (False, True) if everything else (flag(query, "archived"),),
        0 if everything else AGENT,
    )
    size, page, active = _size(query), max(number(query, "page", 1), 1), active_id(store)
    found = newest(store, lsview.rank, which, (size, (page - 1) * size), active)
    if found is not None and page > pages_of(found[1], size):  # past the end: the last page
        page = pages_of(found[1], size)
        found = newest(store, lsview.rank, which, (size, (page - 1) * size), active)
    if found is None:
        return None
    rows, total = found
    unique, place = shortest(store, rows), store_project(store)
    marks = {}
    if any(suffix(r["id"]) for r in rows):  # every id, only for a page with imported rows
        marks = handles(loc.cid for loc in store.refs.list(archived=None))
    for r in rows:
        r["short_id"] = r["id"][: unique.get(r["id"], len(r["id"]))]
        r["handle"] = marks.get(r["id"])
        r["project"] = r.get("project") or place
    return Shown(masked(rows, query)[0], total, {}, page, pages_of(total, size))


def api(store: Store, query: Query) -> list[dict[str, Any]]:
    """`ls -F json`'s rows, of one page (``?page=N&per_page=M``)."""
    return shown(store, query).rows


def markers(row: dict[str, Any]) -> Markup:
    tags = []
    if row.get("unreadable"):
        tags.append(("unreadable", "unreadable"))
    if row.get("archived"):
        tags.append(("archived", "archived"))
    if row.get("pinned"):
        tags.append(("pinned", "pinned"))
    parent, kind, label = relation(row)
    if parent is not None and kind != "diverged":
        tags.append((kind, f"{label} of {parent}"))
    if row.get("diverged_from"):
        tags.append(("diverged", f"diverged from {row['diverged_from']}"))
    origin = row.get("imported_from")
    if isinstance(origin, dict) and origin.get("tool"):
        tags.append(("imported", f"imported from {origin['tool']}"))
    for key, value in (row.get("labels") or {}).items():
        tags.append(("label", f"{key}={value}" if value else key))
    return join(tag("span", text, class_=f"tag {kind}") for kind, text in tags)


def ident(row: dict[str, Any]) -> Markup:
    """The whole id, its shortest unique prefix (what `use` accepts) in bold."""
    cid = str(row["id"])
    cut = len(str(row.get("short_id") or cid))
    return tag("code", Markup(tag("b", cid[:cut]) + esc(cid[cut:])), class_="id")


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
        + void(
            "input",
            type="text",
            name="project",
            value=one(query, "project"),
            placeholder="project folder",
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
    group = tag(
        "label",
        Markup(
            void(
                "input",
                type="checkbox",
                name="group",
                value="project",
                checked="checked" if one(query, "group") == "project" else None,
            )
            + esc(" group by project")
        ),
    )
    return tag(
        "form",
        Markup(fields + checks + group + tag("button", "Filter", type="submit")),
        method="get",
        action="/",
        class_="filters",
    )


def _origin(row: dict[str, Any], query: Query) -> Markup:
    """The tool that wrote it, and its project (a link that filters the list by it)."""
    tool = tag("span", tool_of(row), class_=f"tool {tool_of(row)}")
    project = row.get("project")
    if not project:
        return tool
    kept = {k: v for k, v in query.items() if k not in ("page", "project")}
    return Markup(
        tool + tag("div", link("/", project, {**kept, "project": project}), class_="project")
    )


def _rows(rows: list[dict[str, Any]], hits: dict[str, str], query: Query) -> Markup:
    now = clock.now()
    grouped = one(query, "group") == "project"
    head = tag("tr", join(tag("th", h) for h in ("Title", "Tool · project", "Age", "Turns", "Id")))
    body, group = [], object()
    for row in rows:
        if grouped and row.get("project") != group:
            group = row.get("project")
            name = str(group) if group else NO_PROJECT
            body.append(tag("tr", tag("th", f"project {name}", colspan=5), class_="group"))
        title = link(f"/c/{row['id']}", lsview.title_of(row), class_="title")
        hit = tag("div", hits[row["id"]], class_="hit") if row["id"] in hits else ""
        cells = (
            Markup(title + tag("div", markers(row), class_="tags") + hit),
            _origin(row, query),
            lsview.age(row, now),
            str(row["turns"]),
            ident(row),
        )
        body.append(tag("tr", join(tag("td", c) for c in cells), id=f"r-{row['id']}"))
    return tag("table", Markup(tag("thead", head) + tag("tbody", join(body))), class_="list")


def listed(store: Store, query: Query) -> Markup:
    """The list's body: the count, the rows, the pager (what a followed list receives)."""
    found = shown(store, query)
    kept = {k: v for k, v in query.items() if k != "page"}
    total = found.total
    count = tag("p", f"{total} conversation{'s' if total != 1 else ''}", class_="count")
    if one(query, "project"):
        count = Markup(count + tag("p", f"in project {one(query, 'project')}", class_="count"))
    rows = found.rows
    table = _rows(rows, found.hits, query) if rows else tag("p", "No conversations match.")
    return Markup(count + table + pager("/", kept, found.page, found.pages))


def follow_url(state: str, query: Query) -> str:
    return href("/live/ls", {**query, "state": state})


def page(store: Store, query: Query) -> Markup:
    state = refs_state(store)
    body = tag(
        "div",
        listed(store, query),
        id="listing",
        data_live=follow_url(state, query),
        data_live_mode="replace",
    )
    return layout("Conversations", Markup(_form(query) + body), live=True)
