"""The common events (what a query writes before its request leaves, what an import
of another tool's session maps) and events of unknown types: each taken, normalised,
or refused by the one check of its shape (``gitstore.events.schema``).  A flag is a
boolean, not a word that could mean one."""

from __future__ import annotations

from typing import Any

import pytest

from gitstore.errors import InvalidEvent
from gitstore.events import validate
from gitstore.events.kinds import normalised

T = "2026-01-05 09:00:00.123"
ACCEPTED: list[Any] = [
    {"type": "turn_start", "timestamp": T},
    {"type": "turn_start", "timestamp": T, "metadata": {}},
    {"type": "turn_start", "timestamp": T, "metadata": {"k": [1, {"x": "y"}]}},
    {"type": "chat_request", "timestamp": T, "content": "hello"},
    {"type": "chat_request", "timestamp": T, "content": "hi", "author": "Tess", "schema": {}},
    {"type": "chat_request", "timestamp": T, "content": "x", "author": None, "schema": None},
    {"type": "chat_request", "timestamp": T, "content": "x", "schema": {"type": "object"}},
    {"type": "turn_start", "timestamp": T, "metadata": None},
    {"type": "turn_start", "timestamp": "2026-01-05T09:00:00+02:00"},
    {"type": "chat_response", "timestamp": T, "message": "m", "metadata": {"source_record": {}}},
    {"type": "tool_call_response", "timestamp": T, "id": "t1", "content": "", "is_error": False},
    {"type": "source_record", "timestamp": T, "record": {"type": "summary"}},
]
REFUSED: list[Any] = [
    {"type": "turn_start", "timestamp": "2026-01-05T09:00:00Z", "extra": 1},
    {"type": "turn_start", "timestamp": "not a date"},
    {"type": "turn_start"},
    {"type": "turn_start", "timestamp": 3},
    {"type": "chat_request", "timestamp": T, "content": 5},
    {"type": "chat_request", "timestamp": T},
    {"type": "chat_request", "timestamp": T, "content": "x", "author": 3},
    {"type": "chat_request", "timestamp": T, "content": "lone \ud800 surrogate"},
    {"type": "chat_request", "timestamp": T, "content": "x", "metadata": "no"},
    {"type": "chat_response", "timestamp": T, "message": "m", "reasoning": "r"},
    {"type": "chat_response", "timestamp": T},
    {"type": "tool_call_response", "timestamp": T, "id": "t1", "content": "", "is_error": "no"},
    {"type": "tool_call_request", "timestamp": T, "id": "t1", "name": "n", "arguments": []},
    {"type": "compaction", "timestamp": T, "from_turn": True, "to_turn": 2},
    {"type": "compaction", "timestamp": T, "from_turn": "1", "to_turn": 2},
    {"type": "compaction_reset", "timestamp": T, "withdraw": [1.0]},
    {"type": "source_record", "timestamp": "yesterday", "record": {}},
    {"type": "source_record", "timestamp": T, "record": "lone \ud800"},
    {"type": "", "timestamp": T},
]


@pytest.mark.parametrize("event", ACCEPTED)
def test_an_event_of_its_shape_is_taken_normalised(event: Any) -> None:
    assert validate(event) == normalised(event)


@pytest.mark.parametrize("event", REFUSED)
def test_an_event_out_of_its_shape_is_refused(event: Any) -> None:
    with pytest.raises(InvalidEvent):
        validate(event)
