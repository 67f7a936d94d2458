"""One constructor per event kind, so an event is spelled in one place.

Each shape is a ``TypedDict`` that mypy checks where the event is built;
the constructors return plain ``Event`` dicts, the form every reader and
the store take (docs/data-model.md lists the fields).  ``timestamp`` is
given by the caller, who reads its own clock.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from gitstore.events.kinds import Event, Kind


class TurnStartEvent(TypedDict):
    type: str
    timestamp: str


class ChatRequestEvent(TypedDict):
    type: str
    timestamp: str
    content: str
    author: NotRequired[str]


class ChatResponseEvent(TypedDict):
    type: str
    timestamp: str
    message: NotRequired[str]
    reasoning: NotRequired[str]


class ToolCallRequestEvent(TypedDict):
    type: str
    timestamp: str
    id: str
    name: str
    arguments: dict[str, Any]


class ToolCallResponseEvent(TypedDict):
    type: str
    timestamp: str
    id: str
    content: str
    is_error: bool


class ConfigDeltaEvent(TypedDict):
    type: str
    timestamp: str
    delta: dict[str, Any]


class CompactionResetEvent(TypedDict):
    type: str
    timestamp: str
    withdraw: NotRequired[list[int]]


class ConversationStartEvent(TypedDict):
    type: str
    timestamp: str
    conversation_id: str
    forked_from: NotRequired[dict[str, Any]]
    review: NotRequired[dict[str, Any]]
    imported: NotRequired[dict[str, Any]]


def turn_start(timestamp: str) -> Event:
    return dict(TurnStartEvent(type=Kind.TURN_START.value, timestamp=timestamp))


def chat_request(timestamp: str, content: str, author: str | None = None) -> Event:
    event = ChatRequestEvent(type=Kind.CHAT_REQUEST.value, timestamp=timestamp, content=content)
    if author is not None:
        event["author"] = author
    return dict(event)


def chat_message(timestamp: str, message: str) -> Event:
    """An answer's text."""
    return dict(
        ChatResponseEvent(type=Kind.CHAT_RESPONSE.value, timestamp=timestamp, message=message)
    )


def chat_reasoning(timestamp: str, reasoning: str) -> Event:
    """An answer's reasoning, kept apart from its text."""
    return dict(
        ChatResponseEvent(type=Kind.CHAT_RESPONSE.value, timestamp=timestamp, reasoning=reasoning)
    )


def tool_call_request(timestamp: str, call_id: str, name: str, arguments: dict[str, Any]) -> Event:
    return dict(
        ToolCallRequestEvent(
            type=Kind.TOOL_CALL_REQUEST.value,
            timestamp=timestamp,
            id=call_id,
            name=name,
            arguments=arguments,
        )
    )


def tool_call_response(timestamp: str, call_id: str, content: str, is_error: bool) -> Event:
    return dict(
        ToolCallResponseEvent(
            type=Kind.TOOL_CALL_RESPONSE.value,
            timestamp=timestamp,
            id=call_id,
            content=content,
            is_error=is_error,
        )
    )


def config_delta(timestamp: str, delta: dict[str, Any]) -> Event:
    return dict(ConfigDeltaEvent(type=Kind.CONFIG_DELTA.value, timestamp=timestamp, delta=delta))


def compaction_reset(timestamp: str, withdraw: list[int] | None = None) -> Event:
    event = CompactionResetEvent(type=Kind.COMPACTION_RESET.value, timestamp=timestamp)
    if withdraw is not None:
        event["withdraw"] = withdraw
    return dict(event)


def conversation_start(
    timestamp: str,
    conversation_id: str,
    *,
    forked_from: dict[str, Any] | None = None,
    review: dict[str, Any] | None = None,
    imported: dict[str, Any] | None = None,
) -> Event:
    event = ConversationStartEvent(
        type=Kind.CONVERSATION_START.value, timestamp=timestamp, conversation_id=conversation_id
    )
    if forked_from is not None:
        event["forked_from"] = forked_from
    if review is not None:
        event["review"] = review
    if imported is not None:
        event["imported"] = imported
    return dict(event)


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
