"""The event kinds are named once, and each constructor builds an event the store accepts."""

from __future__ import annotations

import pytest

from gitstore import CONVERSATION_TYPES, Event, Kind, errors, make, validate_event
from gitstore.events import INTERNAL_TYPES, KNOWN_TYPES, schema
from gitstore.events.make import compaction as compaction_event
from gitstore.events.make import compaction_reset as compaction_reset_event

T = "2026-01-05T09:00:07.000000Z"

BUILT: list[Event] = [
    make.turn_start(T),
    make.chat_request(T, "hello"),
    make.chat_request(T, "hello", author="ada"),
    make.chat_message(T, "hi"),
    make.chat_reasoning(T, "thinking"),
    make.tool_call_request(T, "call_1", "read", {"path": "a.txt"}),
    make.tool_call_response(T, "call_1", "contents", False),
    make.config_delta(T, {"assistant": {"model": {"id": "offline/echo"}}}),
    compaction_event(T, 1, 3, summary="what happened"),
    compaction_event(T, 0, 0, reasoning="strip", tool_calls={"policy": "strip"}),
    compaction_reset_event(T),
    compaction_reset_event(T, withdraw=[2]),
    make.conversation_start(T, "jp-c17800000401", forked_from={"conversation": "x"}),
]


@pytest.mark.parametrize("event", BUILT, ids=lambda e: str(e["type"]))
def test_every_constructor_builds_an_event_the_store_accepts(event: Event) -> None:
    assert validate_event(event) == event


def test_the_kinds_are_the_types_the_schema_knows() -> None:
    assert {k.value for k in Kind} == set(schema.SHAPES) == KNOWN_TYPES
    assert CONVERSATION_TYPES | INTERNAL_TYPES == KNOWN_TYPES
    assert not CONVERSATION_TYPES & INTERNAL_TYPES


def test_a_kind_is_its_string() -> None:
    assert Kind.TURN_START == "turn_start"
    assert {"type": "compaction"}["type"] in {Kind.COMPACTION}
    assert all(isinstance(t, str) and not isinstance(t, Kind) for t in KNOWN_TYPES)


def test_a_constructor_misused_is_refused_by_the_store() -> None:
    with pytest.raises(errors.InvalidEvent):
        validate_event(compaction_event("not a time", 1, 2))
