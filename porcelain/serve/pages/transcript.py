"""``/c/ID``: a conversation's turns, 50 to a page.

Raw (the default), a compacted range is one block showing its summary that
unfolds to the raw turns it stands for; ``?compacted=1`` shows what the model
is sent instead (`jp conversation print --compacted`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitstore import Conversation, Event, Kind, Store
from gitstore import turns as store_turns
from porcelain.app.usage import chain_total
from porcelain.domain.prices import Price
from porcelain.render.usageview import cost
from porcelain.serve.html import Markup, esc, join, link, tag
from porcelain.serve.html import page as layout
from porcelain.serve.live import follow_url
from porcelain.serve.markdown import render
from porcelain.serve.pages.common import load, masked, pager, pages_of, tabs, title
from porcelain.serve.pages.events import folded, tool_names, turn_html
from porcelain.serve.routes import Query, flag, number

PER_PAGE = 50  # turns
FOLLOWS = True  # the page follows its conversation (``porcelain/serve/live.py``)
WANTS_PRICES = True  # routes.py hands this page the user's prices (its total's cost)


@dataclass(frozen=True)
class Summary:
    from_turn: int  # 0-based, inclusive: the turns it stands for now
    to_turn: int
    text: str
    own: tuple[int, int] = (0, 0)  # the turns the compaction was made over
    timestamp: str = ""


def masked_events(cid: str, events: Sequence[Event], query: Query) -> tuple[list[Event], int]:
    """The events with every secret found masked, unless ``?secrets=1`` (which the
    server keeps only for a request from loopback); how many were masked."""
    if flag(query, "secrets"):
        return list(events), 0
    from porcelain.app.redaction import redacted_copy  # lazy: the scanner, for this page

    shown, found = redacted_copy(cid, list(events))
    return shown, sum(found.values())


def api(store: Store, query: Query, cid: str, prices: Mapping[str, Price]) -> dict[str, Any]:
    """`jp conversation print -F json` (``--compacted`` as ``?compacted=1``), secrets
    masked unless ``?secrets=1``; ``prices`` serve the page's total only."""
    conv = load(store, cid)
    compacted = flag(query, "compacted")
    raw = masked_events(cid, conv.events, query)[0]
    events = _projected(raw)[0] if compacted else raw
    return {"id": conv.cid, "compacted": compacted, "events": events}


def _projected(events: Sequence[Event]) -> tuple[list[Event], list[str]]:
    # lazy: the view modules load only for a compacted view
    from porcelain.domain.view import projected_with_headers

    return projected_with_headers(events)


def summaries(events: Sequence[Event]) -> tuple[list[Summary], list[Summary]]:
    """The summaries in force, by the rule the model's view follows (the latest
    compaction covering a turn wins it), in turn order; and the compactions with a
    summary that no turn is shown under any more (superseded), in stream order."""
    if not any(e.get("type") == Kind.COMPACTION for e in events):
        return [], []
    # lazy: the compaction modules load only for a conversation that has compactions
    from porcelain.domain.compaction.projection import summary_runs
    from porcelain.domain.review.markers import review_view
    from porcelain.domain.stream import Stream

    stream = Stream.of(review_view(events))
    overlays = [o for o in stream.overlays if o.summary is not None]
    runs = summary_runs(overlays, stream.count)
    winners = {id(o) for _s, _e, o in runs}
    made = [
        Summary(s, e, o.summary or "", (o.from_turn, o.to_turn), o.timestamp) for s, e, o in runs
    ]
    gone = [
        Summary(o.from_turn, o.to_turn, o.summary or "", (o.from_turn, o.to_turn), o.timestamp)
        for o in overlays
        if id(o) not in winners
    ]
    return made, gone


def _span(first: int, last: int) -> str:
    return f"turn {first + 1}" if first == last else f"turns {first + 1}-{last + 1}"


def superseded(gone: Sequence[Summary], standing: Sequence[Summary]) -> Markup:
    """The compactions a later one replaced, listed (their summary folded), never
    shown as current."""
    if not gone:
        return Markup("")
    items = []
    for old in gone:
        later = [
            _span(*s.own) for s in standing if s.own[0] <= old.to_turn and old.from_turn <= s.own[1]
        ]
        by = f", superseded by the compaction of {', '.join(later)}" if later else ", superseded"
        when = f" ({old.timestamp[:16].replace('T', ' ')})" if old.timestamp else ""
        line = f"{_span(old.from_turn, old.to_turn)}{when}{by}"
        items.append(tag("li", folded(line, tag("div", render(old.text), class_="summary"), "old")))
    head = f"{len(gone)} earlier compaction{'s' if len(gone) != 1 else ''}, superseded"
    return tag(
        "details", Markup(tag("summary", head) + tag("ul", join(items))), class_="superseded"
    )


def _turns(events: Sequence[Event], commits: Sequence[str]) -> list[list[tuple[Event, str]]]:
    turns: list[list[tuple[Event, str]]] = []
    shown = list(commits) if len(commits) == len(events) else [""] * len(events)
    for event, turn, commit in zip(events, store_turns.turn_indices(events), shown, strict=True):
        while len(turns) <= turn:
            turns.append([])
        turns[turn].append((event, commit))
    return turns


def _turn(n: int, header: str, items: list[tuple[Event, str]], names: dict[str, str]) -> Markup:
    parts = turn_html(items, names)
    when = str(items[0][0].get("timestamp", ""))[:16].replace("T", " ") if items else ""
    calls = sum(1 for e, _ in items if e.get("type") == Kind.TOOL_CALL_REQUEST)
    count = f" · {calls} tool call{'s' if calls != 1 else ''}" if calls else ""
    head = tag("h2", Markup(esc(header) + tag("span", f" {when}{count}", class_="when")))
    return tag("section", Markup(head + join(parts)), class_="turn", id=f"t-{n + 1}")


def _body(
    events: Sequence[Event],
    commits: Sequence[str],
    headers: Sequence[str] | None,
    blocks: Sequence[Summary],
    shown: range,
) -> Markup:
    turns = _turns(events, commits)
    names = tool_names(events)
    lo, hi = shown.start, shown.stop
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
        span = _span(block.from_turn, block.to_turn)
        fold = tag("details", Markup(tag("summary", f"show the raw {span}") + raw), class_="raw")
        own = (
            ""
            if block.own == (block.from_turn, block.to_turn)
            else f" (made over {_span(*block.own)})"
        )
        head = tag("h2", f"{span}, compacted{own}")
        out.append(
            tag(
                "section",
                Markup(head + tag("div", render(block.text), class_="summary") + fold),
                class_="compaction",
                id=f"k-{block.from_turn + 1}",
            )
        )
        t = end
    return join(out)


def turn_count(events: Sequence[Event]) -> int:
    return len(set(store_turns.turn_indices(events))) if events else 0


def turns_html(
    events: Sequence[Event], commits: Sequence[str], standing: Sequence[Summary], shown: range
) -> Markup:
    """The raw view's turns ``shown`` (what a followed page receives)."""
    return _body(events, commits, None, standing, shown)


def spent(conv: Conversation, prices: Mapping[str, Price], query: Query) -> Markup:
    """The conversation's total as `jp usage` counts it (``Spent:`` in `show`), or nothing;
    the models' names (stored text) masked unless ``?secrets=1``."""
    total = chain_total(conv, prices)
    if total is None:
        return Markup("")
    counts = (
        f"in {total['input_tokens']:,}, out {total['output_tokens']:,}, "
        f"cache write {total['cache_creation_tokens']:,}, "
        f"cache read {total['cache_read_tokens']:,}"
    )
    price = cost(total["cost_usd"]) if total["cost_usd"] is not None else "no price"
    text = masked(f"Spent: {counts} tokens: {price} ({', '.join(total['models'])})", query)[0]
    return tag("p", Markup(esc(text) + " · " + link("/usage", "all usage")), class_="spent")


def page(store: Store, query: Query, cid: str, prices: Mapping[str, Price]) -> Markup:
    conv = load(store, cid)
    compacted = flag(query, "compacted")
    headers: list[str] | None = None
    raw, masked = masked_events(cid, conv.events, query)
    events: Sequence[Event] = raw
    commits: Sequence[str] = conv.commits
    if compacted:
        events, headers = _projected(raw)
        commits = []
    count = turn_count(events)
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
    standing, gone = ([], []) if compacted else summaries(events)
    made = sum(1 for e in conv.events if e.get("type") == Kind.COMPACTION)
    last = max(min(count, hi) - 1, 0)
    follow = follow_url(cid, conv.tip, last, made, at, compacted, flag(query, "secrets"))
    turns = tag(
        "div",
        _body(events, commits, headers, standing, range(lo, hi)),
        id="turns",
        data_live=follow,
    )
    body = Markup(
        tabs(cid, "")
        + spent(conv, prices, query)
        + tag("p", toggle)
        + superseded(gone, standing)
        + nav
        + turns
        + nav
    )
    return layout(title(store, cid, query), body, [("/", "Conversations")], live=True)


def whole(events: Sequence[Event]) -> Markup:
    """Every turn of ``events`` on one page, as ``/c/ID`` shows them (``jp conversation share``)."""
    standing, gone = summaries(events)
    body = _body(events, [], None, standing, range(turn_count(events)))
    return Markup(superseded(gone, standing) + body)
