"""What a model reads of events, and a rough count of its tokens (pure)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from gitstore import ChainView, Event, Kind
from porcelain.domain.attachments import request_text

__all__ = ["PROVIDER_VISIBLE", "estimate_tokens", "event_text", "visible_chars"]

# the name a view's segments keep their visible_chars under: a new one when
# event_text (or what is visible) changes what is counted
_SEGMENT_CHARS = "visible-chars/1"

# the kinds a provider is sent (turn starts, inquiries and internal events are jp's own)
PROVIDER_VISIBLE = frozenset(
    k.value
    for k in (
        Kind.CHAT_REQUEST,
        Kind.CHAT_RESPONSE,
        Kind.TOOL_CALL_REQUEST,
        Kind.TOOL_CALL_RESPONSE,
    )
)


def event_text(event: Event) -> str:
    """The text a model would read from one event (content, arguments, results)."""
    kind = event.get("type")
    if kind == Kind.CHAT_REQUEST:
        return request_text(event)
    if kind == Kind.CHAT_RESPONSE:
        for key in ("message", "reasoning"):
            if isinstance(event.get(key), str):
                return str(event[key])
        if "data" in event:
            return json.dumps(event["data"], ensure_ascii=False)
        return ""
    if kind == Kind.TOOL_CALL_REQUEST:
        args = json.dumps(event.get("arguments") or {}, ensure_ascii=False)
        return f"{event.get('name', '')} {args}"
    if kind == Kind.TOOL_CALL_RESPONSE:
        return str(event.get("content") or "")
    return ""


def estimate_tokens(events: Iterable[Event]) -> int:
    """A rough token count: characters / 4 over every text a model would read."""
    return sum(len(event_text(e)) for e in events) // 4


def visible_chars(events: Sequence[Event]) -> int:
    """The characters of every text a model would read (``estimate_tokens`` is them // 4).

    A view's segments are counted once and kept (``ChainView.per_segment``), so
    a long conversation is not read again at every count.
    """
    if isinstance(events, ChainView):
        return sum(events.per_segment(_SEGMENT_CHARS, _chars))
    return _chars(events)


def _chars(events: Iterable[Event]) -> int:
    visible = PROVIDER_VISIBLE
    return sum(len(event_text(e)) for e in events if e.get("type") in visible)
