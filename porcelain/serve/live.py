"""``/live/...``: what a page that follows its store asks every few seconds.

A followed page (a conversation's, the list) names in its ``data-live``
attribute what it shows now: the conversation's tip commit, or the refs'
fingerprint (``refs.state`` and the metadata notes' tip, so a title edited
elsewhere shows too).  While that is still the store's, the answer is
``204 No Content`` after one refs check: an idle page costs no event read.
Otherwise the answer is the part that changed, as HTML jp escaped (the turns
from the last one shown, or the list's body), with ``X-Next`` naming what to
ask next; ``X-Reload`` when only a reload can show it (a new compaction, the
other view).  ``porcelain/serve/static/live.js`` asks and moves it in.
"""

from __future__ import annotations

import hashlib

from gitstore import Kind, Store, ids
from porcelain.serve.html import Markup, href, link, tag
from porcelain.serve.routes import Query, Reply, flag, number, one

HTML = "text/html; charset=utf-8"


def _empty(status: int, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, "text/plain; charset=utf-8", b"", headers or {})


def answer(store: Store, kind: str, query: Query, cid: str = "") -> Reply:
    if kind == "listing":
        return _listing(store, query)
    return _conversation(store, query, cid)


def follow_url(
    cid: str, tip: str, last: int, compactions: int, page: int, compacted: bool, secrets: bool
) -> str:
    """What a page of ``cid`` showing turns up to ``last`` (0-based) at ``tip`` asks
    (``secrets``: the page shows them, and so do the turns it is sent)."""
    wanted = {
        "tip": tip,
        "from": last,
        "c": compactions,
        "page": page,
        "compacted": compacted and "1",
        "secrets": secrets and "1",
    }
    return href(f"/live/c/{cid}", wanted)


def _conversation(store: Store, query: Query, cid: str) -> Reply:
    # lazy: the transcript's parts load only once the conversation moved
    from porcelain.serve.pages import transcript

    if not ids.is_valid(cid):
        return _empty(404)
    loc = store.refs.locate(cid)
    if loc is None:
        return _empty(404)
    if loc.tip == one(query, "tip"):
        return _empty(204)  # nothing moved: one refs check, no event read
    if one(query, "compacted"):
        return _empty(200, {"X-Reload": "1"})
    conv = store.log.load(cid)
    events = transcript.masked_events(cid, conv.events, query)[0]  # as the page masks them
    compactions = sum(1 for e in events if e.get("type") == Kind.COMPACTION)
    if compactions != number(query, "c", 0):
        return _empty(200, {"X-Reload": "1"})  # the page's blocks are not those now
    count = transcript.turn_count(events)
    page = max(number(query, "page", 1), 1)
    lo, hi = number(query, "from", 0), page * transcript.PER_PAGE
    standing = transcript.summaries(events)[0]
    body = transcript.turns_html(events, conv.commits, standing, range(lo, min(count, hi)))
    if count > hi:
        more = link(f"/c/{cid}", "newer turns are on the next page", {"page": page + 1})
        body = Markup(body + tag("p", more, class_="more", id="more"))
    last = max(min(count, hi) - 1, 0)
    nxt = follow_url(cid, loc.tip, last, compactions, page, False, flag(query, "secrets"))
    return Reply(200, HTML, body.encode(), {"X-Next": nxt})


def refs_state(store: Store) -> str:
    """A fingerprint of every conversation ref and of the metadata notes' ref (a
    title, a pin or a label set by ``jp conversation edit`` moves only that one):
    the store's own (``refs.state``), else one made from the refs themselves (a
    layout without one); never the events, never a note read."""
    meta = store.refs.target(store.notes.refs.meta) or "-"
    found = store.refs.state()
    if found is None:
        tips = sorted(
            f"{loc.cid} {loc.tip} {loc.archived}" for loc in store.refs.list(archived=None)
        )
        found = hashlib.sha1("\n".join(tips).encode(), usedforsecurity=False).hexdigest()
    return f"{found}.{meta}"


def _listing(store: Store, query: Query) -> Reply:
    # lazy: the list's parts load only once a ref moved
    from porcelain.serve.pages import listing

    state = refs_state(store)
    if state == one(query, "state"):
        return _empty(204)
    asked = {k: v for k, v in query.items() if k != "state"}
    body = listing.listed(store, asked)
    return Reply(200, HTML, body.encode(), {"X-Next": listing.follow_url(state, asked)})
