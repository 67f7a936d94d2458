"""The common events (what a query writes before its request leaves, what an import
of another tool's session maps) and events of unknown types are checked without
pydantic; that check and the schema's agree on every shape."""

from __future__ import annotations

from typing import Any

import pytest

from gitstore.errors import InvalidEvent
from gitstore.events import validate
from gitstore.events.kinds import quick as _quick
from gitstore.events.schema import validate_event

T = "2026-01-05 09:00:00.123"
CASES: list[Any] = [
    {"type": "turn_start", "timestamp": T},
    {"type": "turn_start", "timestamp": T, "metadata": {}},
    {"type": "turn_start", "timestamp": T, "metadata": {"k": [1, {"x": "y"}]}},
    {"type": "turn_start", "timestamp": "2026-01-05T09:00:00Z", "extra": 1},
    {"type": "turn_start", "timestamp": "not a date"},
    {"type": "turn_start"},
    {"type": "turn_start", "timestamp": 3},
    {"type": "chat_request", "timestamp": T, "content": "hello"},
    {"type": "chat_request", "timestamp": T, "content": "hi", "author": "Tess", "schema": {}},
    {"type": "chat_request", "timestamp": T, "content": 5},
    {"type": "chat_request", "timestamp": T},
    {"type": "chat_request", "timestamp": T, "content": "x", "author": 3},
    {"type": "chat_request", "timestamp": T, "content": "lone \ud800 surrogate"},
    {"type": "chat_request", "timestamp": T, "content": "x", "metadata": "no"},
    {"type": "chat_request", "timestamp": T, "content": "x", "author": None, "schema": None},
    {"type": "chat_request", "timestamp": T, "content": "x", "schema": {"type": "object"}},
    {"type": "turn_start", "timestamp": T, "metadata": None},
    {"type": "turn_start", "timestamp": "2026-01-05T09:00:00+02:00"},
    {"type": "chat_response", "timestamp": T, "message": "m", "metadata": {"source_record": {}}},
    {"type": "chat_response", "timestamp": T, "message": "m", "reasoning": "r"},
    {"type": "chat_response", "timestamp": T},
    {"type": "tool_call_response", "timestamp": T, "id": "t1", "content": "", "is_error": False},
    {"type": "tool_call_response", "timestamp": T, "id": "t1", "content": "", "is_error": "no"},
    {"type": "tool_call_request", "timestamp": T, "id": "t1", "name": "n", "arguments": []},
    {"type": "source_record", "timestamp": T, "record": {"type": "summary"}},
    {"type": "source_record", "timestamp": "yesterday", "record": {}},
    {"type": "source_record", "timestamp": T, "record": "lone \ud800"},
    {"type": "", "timestamp": T},
]


def outcome(check: Any, event: Any) -> Any:
    try:
        return check(event)
    except InvalidEvent:
        return "refused"


@pytest.mark.parametrize("event", CASES)
def test_the_plain_check_agrees_with_the_schema(event: Any) -> None:
    assert outcome(validate, event) == outcome(validate_event, event)


def test_the_usual_shapes_take_the_plain_path() -> None:
    assert _quick(CASES[0]) is not None and _quick(CASES[7]) is not None
    assert _quick({"type": "chat_response", "timestamp": T, "message": "m"}) is not None
    assert _quick({"type": "source_record", "timestamp": T, "record": {}}) is not None
    # an unusual shape is the models' to judge
    assert _quick({"type": "chat_request", "timestamp": T, "content": "x", "attachments": []}) is None
