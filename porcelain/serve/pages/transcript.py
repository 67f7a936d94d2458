"""``/c/ID``: a conversation's turns, 50 to a page.

Raw (the default), a compacted range is one block showing its summary that
unfolds to the raw turns it stands for; ``?compacted=1`` shows what the model
is sent instead (`jp conversation print --compacted`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitstore import Event, Kind, Store, turn_indices
from porcelain.serve.html import Markup, esc, join, link, tag
from porcelain.serve.html import page as layout
from porcelain.serve.markdown import render
from porcelain.serve.pages.common import load, pager, pages_of, tabs, title
from porcelain.serve.pages.events import event_html, tool_names
from porcelain.serve.routes import Query, flag, number

PER_PAGE = 50  # turns


@dataclass(frozen=True)
class Summary:
    from_turn: int  # 0-based, inclusive
    to_turn: int
    text: str


def _masked(cid: str, events: Sequence[Event], query: Query) -> tuple[list[Event], int]:
    """The events with every secret found masked, unless ``?secrets=1`` (which the
    server keeps only for a request from loopback); how many were masked."""
    if flag(query, "secrets"):
        return list(events), 0
    from porcelain.app.redaction import redacted_copy  # lazy: the scanner, for this page

    shown, found = redacted_copy(cid, list(events))
    return shown, sum(found.values())


def api(store: Store, query: Query, cid: str) -> dict[str, Any]:
    """`jp conversation print -F json` (``--compacted`` as ``?compacted=1``), secrets
    masked unless ``?secrets=1``."""
    conv = load(store, cid)
    compacted = flag(query, "compacted")
    raw = _masked(cid, conv.events, query)[0]
    events = _projected(raw)[0] if compacted else raw
    return {"id": conv.cid, "compacted": compacted, "events": events}


def _projected(events: Sequence[Event]) -> tuple[list[Event], list[str]]:
    # lazy: the view modules load only for a compacted view
    from porcelain.domain.view import projected_with_headers

    return projected_with_headers(events)


def summaries(events: Sequence[Event]) -> list[Summary]:
    """The standing compactions with a summary, first come first kept where they overlap."""
    if not any(e.get("type") == Kind.COMPACTION for e in events):
        return []
    # lazy: the compaction modules load only for a conversation that has compactions
    from porcelain.domain.compaction.overlays import standing_overlays
    from porcelain.domain.review.markers import review_view

    out: list[Summary] = []
    for o in sorted(standing_overlays(review_view(events)), key=lambda o: o.from_turn):
        if o.summary is not None and all(o.from_turn > s.to_turn for s in out):
            out.append(Summary(o.from_turn, o.to_turn, o.summary))
    return out


def _turns(events: Sequence[Event], commits: Sequence[str]) -> list[list[tuple[Event, str]]]:
    turns: list[list[tuple[Event, str]]] = []
    shown = list(commits) if len(commits) == len(events) else [""] * len(events)
    for event, turn, commit in zip(events, turn_indices(events), shown, strict=True):
        while len(turns) <= turn:
            turns.append([])
        turns[turn].append((event, commit))
    return turns


def _turn(n: int, header: str, items: list[tuple[Event, str]], names: dict[str, str]) -> Markup:
    parts = []
    when = str(items[0][0].get("timestamp", ""))[:16].replace("T", " ") if items else ""
    for event, commit in items:
        body = event_html(event, names)
        if body:
            parts.append(tag("div", body, class_="event", id=f"e-{commit}" if commit else None))
    head = tag("h2", Markup(esc(header) + tag("span", f" {when}", class_="when")))
    return tag("section", Markup(head + join(parts)), class_="turn", id=f"t-{n + 1}")


def _body(
    events: Sequence[Event], commits: Sequence[str], headers: Sequence[str] | None, lo: int, hi: int
) -> Markup:
    turns = _turns(events, commits)
    names = tool_names(events)
    blocks = [] if headers is not None else summaries(events)
    out = []
    t = lo
    while t < min(hi, len(turns)):
        block = next((b for b in blocks if b.from_turn <= t <= b.to_turn), None)
        if block is None:
            header = headers[t] if headers and t < len(headers) else f"turn {t + 1}"
            out.append(_turn(t, header, turns[t], names))
            t += 1
            continue
        end = min(block.to_turn + 1, hi, len(turns))
        raw = join(_turn(i, f"turn {i + 1}", turns[i], names) for i in range(t, end))
        span = f"turns {block.from_turn + 1}-{block.to_turn + 1}"
        fold = tag("details", Markup(tag("summary", f"show the raw {span}") + raw), class_="raw")
        head = tag("h2", f"{span}, compacted")
        out.append(
            tag(
                "section",
                Markup(head + tag("div", render(block.text), class_="summary") + fold),
                class_="compaction",
            )
        )
        t = end
    return join(out)


def page(store: Store, query: Query, cid: str) -> Markup:
    conv = load(store, cid)
    compacted = flag(query, "compacted")
    headers: list[str] | None = None
    raw, masked = _masked(cid, conv.events, query)
    events: Sequence[Event] = raw
    commits: Sequence[str] = conv.commits
    if compacted:
        events, headers = _projected(raw)
        commits = []
    count = len(set(turn_indices(events))) if events else 0
    pages = pages_of(count, PER_PAGE)
    at = min(max(number(query, "page", 1), 1), pages)
    lo, hi = (at - 1) * PER_PAGE, at * PER_PAGE
    toggle = link(
        f"/c/{cid}",
        "show the raw history" if compacted else "show what the model is sent",
        {"compacted": not compacted and "1"},
        class_="toggle",
    )
    if masked or flag(query, "secrets"):
        secrets = link(
            f"/c/{cid}",
            f"show the {masked} secret(s) found (this machine only)" if masked else "mask secrets",
            {"compacted": compacted and "1", "secrets": "" if flag(query, "secrets") else "1"},
            class_="toggle",
        )
        toggle = Markup(toggle + " · " + secrets)
    nav = pager(f"/c/{cid}", {"compacted": compacted and "1"}, at, pages)
    body = Markup(
        tabs(cid, "") + tag("p", toggle) + nav + _body(events, commits, headers, lo, hi) + nav
    )
    return layout(title(store, cid), body, [("/", "Conversations")])


def whole(events: Sequence[Event]) -> Markup:
    """Every turn of ``events`` on one page, as ``/c/ID`` shows them (``jp conversation share``)."""
    return _body(events, [], None, 0, len(events) + 1)
