"""One constructor per event kind, so an event is spelled in one place.

The constructors return plain ``Event`` dicts, the form every reader and the
store take; their shapes are ``schema.py``'s models (docs/data-model.md lists
the fields), which check every event a write takes, so a constructor that
misspelt one would fail its first write.  ``timestamp`` is given by the caller,
who reads its own clock.
"""

from __future__ import annotations

from typing import Any

from gitstore.events.kinds import Event, Kind


def turn_start(timestamp: str) -> Event:
    return {"type": Kind.TURN_START.value, "timestamp": timestamp}


def chat_request(timestamp: str, content: str, author: str | None = None) -> Event:
    event: Event = {"type": Kind.CHAT_REQUEST.value, "timestamp": timestamp, "content": content}
    if author is not None:
        event["author"] = author
    return event


def chat_message(timestamp: str, message: str) -> Event:
    """An answer's text."""
    return {"type": Kind.CHAT_RESPONSE.value, "timestamp": timestamp, "message": message}


def chat_reasoning(timestamp: str, reasoning: str) -> Event:
    """An answer's reasoning, kept apart from its text."""
    return {"type": Kind.CHAT_RESPONSE.value, "timestamp": timestamp, "reasoning": reasoning}


def tool_call_request(timestamp: str, call_id: str, name: str, arguments: dict[str, Any]) -> Event:
    return {
        "type": Kind.TOOL_CALL_REQUEST.value,
        "timestamp": timestamp,
        "id": call_id,
        "name": name,
        "arguments": arguments,
    }


def tool_call_response(timestamp: str, call_id: str, content: str, is_error: bool) -> Event:
    return {
        "type": Kind.TOOL_CALL_RESPONSE.value,
        "timestamp": timestamp,
        "id": call_id,
        "content": content,
        "is_error": is_error,
    }


def config_delta(timestamp: str, delta: dict[str, Any]) -> Event:
    return {"type": Kind.CONFIG_DELTA.value, "timestamp": timestamp, "delta": delta}


def compaction_reset(timestamp: str, withdraw: list[int] | None = None) -> Event:
    event: Event = {"type": Kind.COMPACTION_RESET.value, "timestamp": timestamp}
    if withdraw is not None:
        event["withdraw"] = withdraw
    return event


def conversation_start(
    timestamp: str,
    conversation_id: str,
    *,
    forked_from: dict[str, Any] | None = None,
    review: dict[str, Any] | None = None,
    imported: dict[str, Any] | None = None,
) -> Event:
    event: Event = {
        "type": Kind.CONVERSATION_START.value,
        "timestamp": timestamp,
        "conversation_id": conversation_id,
    }
    for key, value in (("forked_from", forked_from), ("review", review), ("imported", imported)):
        if value is not None:
            event[key] = value
    return event


def compaction(
    timestamp: str,
    from_turn: int,
    to_turn: int,
    *,
    summary: str | None = None,
    reasoning: str | None = None,
    tool_calls: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Event:
    """A compaction over turns ``from_turn``..``to_turn`` (0-based, inclusive)."""
    event: Event = {
        "type": Kind.COMPACTION.value,
        "timestamp": timestamp,
        "from_turn": from_turn,
        "to_turn": to_turn,
    }
    if summary is not None:
        event["summary"] = {"summary": summary}
    if reasoning is not None:
        event["reasoning"] = reasoning
    if tool_calls is not None:
        event["tool_calls"] = tool_calls
    if metadata:
        event["metadata"] = metadata
    return event
