"""One event as HTML: requests as text, answers from Markdown, reasoning and tool
calls folded, tool output bounded (the rest behind "show all")."""

from __future__ import annotations

import json
from collections.abc import Sequence

from gitstore import PROPOSE_COMPACTION, Event, Kind
from porcelain.domain.attachments import attachments_of
from porcelain.domain.interrupted import is_interrupted
from porcelain.serve.html import Markup, esc, tag
from porcelain.serve.markdown import render

BOUND = 2000  # characters of a tool's output shown before "show all"


def tool_names(events: Sequence[Event]) -> dict[str, str]:
    return {
        str(e.get("id")): str(e.get("name"))
        for e in events
        if e.get("type") == Kind.TOOL_CALL_REQUEST
    }


def folded(label: object, body: object, class_: str) -> Markup:
    return tag("details", Markup(tag("summary", label) + esc(body)), class_=class_)


def bounded(text: str) -> Markup:
    """``text`` in a <pre>, cut at ``BOUND`` characters with the whole behind "show all"."""
    if len(text) <= BOUND:
        return tag("pre", text)
    head = tag("pre", text[:BOUND] + " …")
    rest = folded(f"show all ({len(text):,} characters)", tag("pre", text), "all")
    return Markup(head + rest)


def _request(event: Event) -> Markup:
    body = tag("div", str(event.get("content", "")), class_="text")
    for item in attachments_of(event):
        body = Markup(
            body
            + tag(
                "div",
                f"attached: {item.get('kind', 'file')} {item.get('source')}",
                class_="attached",
            )
        )
    return tag("div", body, class_="request")


def _response(event: Event) -> Markup:
    if "message" in event:
        cut = (
            tag("p", "[interrupted: the answer was cut off here]", class_="cut")
            if is_interrupted(event)
            else ""
        )
        return tag("div", Markup(render(str(event["message"])) + cut), class_="answer")
    if "reasoning" in event:
        return folded("reasoning", tag("div", str(event["reasoning"]), class_="text"), "reasoning")
    if "data" in event:
        return tag("pre", json.dumps(event["data"], indent=2, ensure_ascii=False), class_="data")
    return Markup("")


def event_html(event: Event, names: dict[str, str]) -> Markup:
    """An event's HTML (empty for jp's own bookkeeping events)."""
    kind = event.get("type")
    if kind == Kind.CHAT_REQUEST:
        return _request(event)
    if kind == Kind.CHAT_RESPONSE:
        return _response(event)
    if kind == Kind.TOOL_CALL_REQUEST:
        name = str(event.get("name"))
        args = json.dumps(event.get("arguments") or {}, indent=1, ensure_ascii=False)
        label = (
            "proposal (propose_compaction)" if name == PROPOSE_COMPACTION else f"tool call: {name}"
        )
        return folded(label, bounded(args), "tool")
    if kind == Kind.TOOL_CALL_RESPONSE:
        name = names.get(str(event.get("id")), "tool")
        what = "error" if event.get("is_error") else "result"
        text = str(event.get("content", ""))
        return folded(f"{what} of {name} ({len(text):,} characters)", bounded(text), "tool-result")
    if kind == Kind.INQUIRY_REQUEST:
        question = (event.get("question") or {}).get("text", "")
        return tag("div", f"inquiry: {question}", class_="inquiry")
    return Markup("")
