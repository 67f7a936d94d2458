"""gitstore.events: validation of every kind, time forms, canonical JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from gitstore.errors import InvalidEvent
from gitstore.events import (
    CONVERSATION_TYPES,
    INTERNAL_TYPES,
    canonical_json,
    format_time,
    is_conversation_event,
    parse_time,
    validate,
)
from gitstore.events.kinds import stored_time

T = "2026-01-05T09:00:00.000000Z"

VALID: list[dict[str, Any]] = [
    {"type": "turn_start", "timestamp": T},
    {"type": "chat_request", "timestamp": T, "content": "hello", "author": "tess"},
    {"type": "chat_request", "timestamp": T, "content": "", "schema": {"type": "object"}},
    {"type": "chat_response", "timestamp": T, "message": "hi"},
    {"type": "chat_response", "timestamp": T, "reasoning": "hmm", "metadata": {"sig": "x"}},
    {"type": "chat_response", "timestamp": T, "data": {"answer": [1, 2]}},
    {"type": "chat_response", "timestamp": T, "data": None},
    {"type": "tool_call_request", "timestamp": T, "id": "t1", "name": "fs", "arguments": {"p": 1}},
    {"type": "tool_call_response", "timestamp": T, "id": "t1", "content": "ok", "is_error": True},
    {"type": "inquiry_request", "timestamp": T, "id": "q", "source": {}, "question": {"text": "?"}},
    {"type": "inquiry_response", "timestamp": T, "id": "q", "answer": True},
    {"type": "config_delta", "timestamp": T, "delta": {"assistant": {"model": {"id": "a/b"}}}},
    {"type": "compaction", "timestamp": T, "from_turn": 0, "to_turn": 5},
    {
        "type": "compaction",
        "timestamp": T,
        "from_turn": 1,
        "to_turn": 7,
        "summary": {"summary": "S"},
        "reasoning": "strip",
        "tool_calls": {"policy": "strip", "request": True, "response": False},
    },
    {"type": "compaction", "timestamp": T, "from_turn": 2, "to_turn": 2, "tool_calls": {"policy": "omit"}},
    {"type": "compaction_reset", "timestamp": T},
    {"type": "compaction_reset", "timestamp": T, "withdraw": [0, 2]},
    {"type": "conversation_start", "timestamp": T, "conversation_id": "jp-c1"},
    {
        "type": "conversation_start",
        "timestamp": T,
        "conversation_id": "jp-c2",
        "forked_from": {"conversation_id": "jp-c1", "commit": "ab" * 20},
        "review": {"source_id": "jp-c1"},
    },
]


@pytest.mark.parametrize("event", VALID, ids=lambda e: str(e["type"]))
def test_every_kind_validates_and_round_trips(event: dict[str, Any]) -> None:
    out = validate(event)
    assert out == event
    assert json.loads(canonical_json(out)) == out


def test_known_and_internal_kinds_are_disjoint() -> None:
    assert not CONVERSATION_TYPES & INTERNAL_TYPES
    assert {e["type"] for e in VALID} <= CONVERSATION_TYPES | INTERNAL_TYPES
    assert is_conversation_event({"type": "turn_start"})
    assert not is_conversation_event({"type": "compaction"})
    assert not is_conversation_event({"type": "turn_rating"})


@pytest.mark.parametrize(
    ("event", "words"),
    [
        ({"type": "chat_request", "timestamp": T, "content": 5}, ["chat_request", "content"]),
        ({"type": "chat_request", "timestamp": T}, ["content"]),
        ({"type": "chat_request", "timestamp": T, "content": "x", "colour": 1}, ["colour"]),
        ({"type": "chat_response", "timestamp": T}, ["exactly one"]),
        ({"type": "chat_response", "timestamp": T, "message": "a", "reasoning": "b"}, ["exactly one"]),
        ({"type": "tool_call_request", "timestamp": T, "name": "x"}, ["id"]),
        ({"type": "tool_call_response", "timestamp": T, "id": "t", "content": 3}, ["content"]),
        ({"type": "compaction", "timestamp": T, "from_turn": -1, "to_turn": 2}, ["from_turn"]),
        ({"type": "compaction", "timestamp": T, "from_turn": 0, "to_turn": 2, "reasoning": "keep"}, ["reasoning"]),
        (
            {"type": "compaction", "timestamp": T, "from_turn": 0, "to_turn": 2, "tool_calls": {"policy": "shred"}},
            ["tool_calls"],
        ),
        ({"type": "compaction", "timestamp": T, "from_turn": 0, "to_turn": 1, "summary": "S"}, ["summary"]),
        ({"type": "compaction_reset", "timestamp": T, "withdraw": "all"}, ["withdraw"]),
        ({"type": "conversation_start", "timestamp": T}, ["conversation_id"]),
        ({"type": "turn_start", "timestamp": "yesterday"}, ["timestamp", "yesterday"]),
        ({"type": "turn_start"}, ["timestamp"]),
        ({"type": "turn_start", "timestamp": 5}, ["timestamp"]),
        ({"timestamp": T}, ["type"]),
        ({"type": "", "timestamp": T}, ["type"]),
        ([], ["object"]),
        ("chat_request", ["object"]),
    ],
)
def test_bad_events_are_refused_with_where_and_why(event: Any, words: list[str]) -> None:
    with pytest.raises(InvalidEvent) as caught:
        validate(event, "events.json: entry 4")
    assert caught.value.where == "events.json: entry 4"
    message = str(caught.value)
    assert message.startswith("events.json: entry 4: ")
    for word in words:
        assert word in message, (word, message)


def test_unknown_kinds_are_kept_verbatim() -> None:
    newer = {"type": "turn_rating", "timestamp": "2026-05-28 20:40:59.293763", "stars": 5}
    assert validate(newer) == newer
    assert validate(newer) is not newer


def test_a_validated_event_is_taken_as_it_is_and_cannot_be_changed() -> None:
    out = validate({"type": "chat_request", "timestamp": T, "content": "hi"})
    assert validate(out) is out, "checked once, not again"
    with pytest.raises(TypeError):
        out["content"] = 5
    with pytest.raises(TypeError):
        out.update(content=5)
    copy = dict(out)
    copy["content"] = 5
    with pytest.raises(InvalidEvent):
        validate(copy)  # a changed copy is a plain dict: checked again


def test_an_event_seen_before_is_normalised_as_its_check_did() -> None:
    for event in [*VALID, {"type": "turn_rating", "timestamp": "2026-05-28 20:40:59.2", "x": 1}]:
        jp_form = {**event, "timestamp": "2026-01-05 09:00:00.5", "metadata": {}}
        assert validate(jp_form, seen=True) == validate(jp_form)
        assert validate(validate(jp_form, seen=True)) == validate(jp_form)


@pytest.mark.parametrize(
    "text",
    [
        "2025-01-06 09:00:00.123456",
        "2025-01-06 09:00:00",
        "2025-01-06T09:00:00.123456Z",
        "2025-01-06T09:00:00Z",
        "2025-01-06 09:00:00.123456Z",
        "2025-01-06T09:00:00.123456",
        "2025-01-06 09:00:00.5",
        "2026-01-05T09:00:07+02:00",
        "0001-01-01 00:00:00.000000",
        "9999-12-31T23:59:59.999999Z",
    ],
)
def test_a_checked_time_is_stored_as_parsing_it_would_store_it(text: str) -> None:
    assert stored_time(text) == format_time(parse_time(text))


def test_validate_normalises_time_and_drops_empty_metadata() -> None:
    event = {"type": "turn_start", "timestamp": "2026-01-05 09:00:07.5", "metadata": {}}
    out = validate(event)
    assert out == {"type": "turn_start", "timestamp": "2026-01-05T09:00:07.500000Z"}
    assert event["timestamp"] == "2026-01-05 09:00:07.5", "the input is not modified"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-05 09:00:00.0", datetime(2026, 1, 5, 9, tzinfo=UTC)),
        ("2026-01-05 09:00:07.123456789", datetime(2026, 1, 5, 9, 0, 7, 123456, tzinfo=UTC)),
        ("2026-01-05T09:00:07Z", datetime(2026, 1, 5, 9, 0, 7, tzinfo=UTC)),
        ("2026-01-05T09:00:07.5z", datetime(2026, 1, 5, 9, 0, 7, 500000, tzinfo=UTC)),
        ("2026-01-05T10:00:07+01:00", datetime(2026, 1, 5, 9, 0, 7, tzinfo=UTC)),
        (" 2026-01-05T09:00:07.25+00:00 ", datetime(2026, 1, 5, 9, 0, 7, 250000, tzinfo=UTC)),
    ],
)
def test_parse_time_accepts_jp_and_rfc3339(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected
    assert parse_time(text).tzinfo is not None


@pytest.mark.parametrize("text", ["", "   ", "yesterday", "2026-13-01 00:00:00.0"])
def test_parse_time_refuses_non_dates(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)


def test_format_time_is_utc_with_microseconds() -> None:
    assert format_time(datetime(2026, 1, 5, 9, 0, 7, tzinfo=UTC)) == "2026-01-05T09:00:07.000000Z"
    plus_two = timezone(timedelta(hours=2))
    assert format_time(datetime(2026, 1, 5, 11, 0, 7, 5, tzinfo=plus_two)) == "2026-01-05T09:00:07.000005Z"
    assert format_time(datetime(2026, 1, 5, 9, 0, 7)) == "2026-01-05T09:00:07.000000Z", "naive is UTC"
    moment = datetime(2026, 3, 1, 12, 30, 1, 999999, tzinfo=UTC)
    assert parse_time(format_time(moment)) == moment


def test_canonical_json_is_sorted_utf8_with_a_newline_and_stable() -> None:
    a = {"type": "chat_request", "timestamp": T, "content": "naïve “quotes” ✓"}
    b = {"content": "naïve “quotes” ✓", "timestamp": T, "type": "chat_request"}
    data = canonical_json(a)
    assert data == canonical_json(b), "key order does not change the bytes (object ids)"
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")
    text = data.decode("utf-8")
    assert "naïve “quotes” ✓" in text, "UTF-8, not \\u escapes"
    assert list(json.loads(text)) == sorted(a)
    nested = canonical_json({"type": "x", "timestamp": T, "z": {"b": 1, "a": 2}})
    assert nested.index(b'"a"') < nested.index(b'"b"'), "nested keys are sorted too"
