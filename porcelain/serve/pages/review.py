"""``/c/ID/review``: the conversation's compactions (who applied each and when, from
the operation log) and its reviews' proposals: the log, each one's diff against
the one before, and its coverage report (what the summary drops)."""

from __future__ import annotations

import re
from typing import Any

from gitstore import Event, Kind, Store, errors
from porcelain.app.describe import details
from porcelain.app.targets import active_id
from porcelain.domain.compaction.proposal import span
from porcelain.render import opshow
from porcelain.serve.html import Markup, esc, join, link, tag
from porcelain.serve.html import page as layout
from porcelain.serve.markdown import render
from porcelain.serve.pages.common import load, masked, secrets_toggle, tabs, title
from porcelain.serve.routes import Query

_MARKS = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.DOTALL)


def _reviews_of(store: Store, cid: str) -> list[str]:
    """The reviews of ``cid`` (live or archived), oldest first."""
    sources = store.notes.sources()  # anchor -> source id
    located = store.refs.list(archived=None)
    return sorted(loc.cid for loc in located if sources.get(store.notes.anchor(loc.cid)) == cid)


def _applied(store: Store, cid: str) -> list[dict[str, Any]]:
    """Each compaction event of ``cid``: its range, when, and the operation that wrote it."""
    conv = load(store, cid)
    by_commit = {m.new: o for o in store.ops.list(None) for m in o.moves if m.new}
    out = []
    for event, commit in zip(conv.events, conv.commits, strict=False):
        if event.get("type") != Kind.COMPACTION:
            continue
        op = by_commit.get(commit)
        origin = (event.get("metadata") or {}).get("proposal")
        out.append(
            {
                "commit": commit,
                "from_turn": int(event.get("from_turn", 0)) + 1,
                "to_turn": int(event.get("to_turn", 0)) + 1,
                "at": event.get("timestamp"),
                "proposal": origin if isinstance(origin, dict) else None,
                "operation": opshow.as_json(op) if op is not None else None,
            }
        )
    return out


def _recorded_coverage(events: list[Event]) -> dict[int, dict[str, Any]]:
    """The coverage report each proposal was answered with when it was made (the
    review tool records it), by the position of its call."""
    # lazy: the review modules load only for this page
    from porcelain.domain.review.state import proposal_calls

    out = {}
    for pos, _request, response in proposal_calls(events):
        found = ((response or {}).get("metadata") or {}).get("coverage")
        if isinstance(found, dict):
            out[pos] = found
    return out


def _source_as_scored(
    store: Store, events: list[Event], source_id: str | None
) -> tuple[list[Event] | None, str]:
    """The source as the review read it (its commit when the review began), so that
    a finished review's figures stay those its proposals were scored with; else the
    source as it is now."""
    # lazy: the review modules load only for this page
    from porcelain.domain.review.markers import review_record

    found = review_record(events)
    commit = found[1].get("source_commit") if found else None
    if isinstance(commit, str) and len(commit) in (40, 64):
        try:
            return store.log.read_chain(commit)[0], "against the source when the review began"
        except (errors.GitStoreError, KeyError, ValueError):
            pass
    if source_id is None or store.refs.locate(source_id) is None:
        return None, ""
    return store.log.load(source_id).events, "against the source now"


def api(store: Store, query: Query, cid: str) -> dict[str, Any]:
    """The compactions and reviews; secrets in their text (summaries, diffs, the
    commands the log recorded) masked unless ``?secrets=1``."""
    return masked(_found(store, cid), query)[0]


def _found(store: Store, cid: str) -> dict[str, Any]:
    # lazy: the review modules load only for this page
    from porcelain.app.review.revisions import diff_json, revisions

    conv = load(store, cid)
    info = details(store, conv, active_id(store))
    reviews = []
    for rid in _reviews_of(store, cid) + ([cid] if info["source_id"] else []):
        if store.refs.locate(rid) is None:
            continue
        source_id = cid if rid != cid else info["source_id"]
        events = store.log.load(rid).events
        source, scored = _source_as_scored(store, events, source_id)
        found = revisions(events, source)
        recorded = _recorded_coverage(events)
        proposals = []
        for r in found:
            shown = r.to_json()
            if r.position in recorded:
                shown["coverage"], shown["scored"] = recorded[r.position], "when proposed"
            elif "coverage" in shown:
                shown["scored"] = scored
            proposals.append(shown)
        diffs = [diff_json(a, b) for a, b in zip(found, found[1:], strict=False)]
        reviews.append({"id": rid, "source_id": source_id, "proposals": proposals, "diffs": diffs})
    return {
        "id": cid,
        "compactions": info["compactions"],
        "applied": _applied(store, cid),
        "reviews": reviews,
    }


def word_diff(marked: str) -> Markup:
    """``[-old-]{+new+}`` marks as <del> and <ins>, the rest as text."""
    out, at = [], 0
    for m in _MARKS.finditer(marked):
        out.append(esc(marked[at : m.start()]))
        out.append(tag("del", m.group(1)) if m.group(1) is not None else tag("ins", m.group(2)))
        at = m.end()
    out.append(esc(marked[at:]))
    return tag("div", join(out), class_="diff")


def _coverage(value: dict[str, Any] | None) -> Markup:
    if not value:
        return Markup("")
    # lazy: the coverage report loads only for a proposal that has one
    from porcelain.domain.compaction.coverage import Coverage

    return tag("pre", "\n".join(Coverage.from_json(value).lines()), class_="coverage")


def _proposal(p: dict[str, Any], diff: dict[str, Any] | None) -> Markup:
    head = tag("h4", f"Proposal {p['number']}: {_span(p)}, by {p['author']}")
    body = [head, tag("div", render(p.get("summary") or "(no summary)"), class_="summary")]
    if diff is not None:
        body.append(
            tag(
                "details",
                Markup(
                    tag("summary", f"diff against proposal {diff['from']['number']}")
                    + word_diff(diff["summary_diff"])
                ),
                class_="proposal-diff",
            )
        )
    if p.get("scored"):
        body.append(tag("p", f"Figures as scored {p['scored']}.", class_="scored"))
    body.append(_coverage(p.get("coverage")))
    return tag("article", join(body), class_="proposal")


def _span(item: dict[str, Any]) -> str:
    """`turn 3` or `turns 2-6`, as everywhere else."""
    return span(item["from_turn"], item["to_turn"])


def _operation(op: dict[str, Any] | None) -> str:
    return (
        ""
        if op is None
        else f" by `{op['command']}` at {op['time']} (pid {op['pid']} on {op['host']})"
    )


def page(store: Store, query: Query, cid: str) -> Markup:
    found, hidden = masked(_found(store, cid), query)
    parts = [tabs(cid, "/review"), secrets_toggle(f"/c/{cid}/review", query, hidden)]
    parts.append(tag("h2", "Compactions"))
    applied = [
        tag("li", f"{_span(a)} at {a['at']}{_operation(a['operation'])}")
        for a in found["applied"]
    ]
    parts.append(tag("ul", join(applied)) if applied else tag("p", "No compaction."))
    parts.append(tag("h2", "Reviews"))
    if not found["reviews"]:
        parts.append(tag("p", "No review. Start one with `jp conversation compact --interactive`."))
    for review in found["reviews"]:
        props = review["proposals"]
        diffs: list[dict[str, Any] | None] = [None, *review["diffs"]]
        head = tag(
            "h3",
            Markup(
                esc("Review ")
                + link(f"/c/{review['id']}", review["id"])
                + esc(f" of {review['source_id']}: {len(props)} proposal(s)")
            ),
        )
        log = tag(
            "ol",
            join(
                tag(
                    "li",
                    f"{_span(p)}, {p['summary_words']} words, by {p['author']}",
                )
                for p in props
            ),
            class_="log",
        )
        parts.append(
            tag(
                "section",
                Markup(
                    head + log + join(_proposal(p, d) for p, d in zip(props, diffs, strict=False))
                ),
                class_="review",
            )
        )
    name = title(store, cid, query)
    crumbs = [("/", "Conversations"), (f"/c/{cid}", name)]
    return layout(f"Compactions and reviews of {name}", join(parts), crumbs)
