"""The quick paths of the event checks give the answers of the full ones."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest

from gitstore.events.kinds import parse_time, plainly_valid
from gitstore.values import MAX_DEPTH, load_json


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_json_just_within_the_depth_is_taken_and_one_more_is_refused() -> None:
    # the outermost container is level 0: its members are one level below it
    assert load_json(nested(MAX_DEPTH)) is not None
    assert load_json(nested(MAX_DEPTH + 1)) is not None
    with pytest.raises(ValueError, match="nested more than"):
        load_json(nested(MAX_DEPTH + 2))


def test_brackets_inside_strings_never_hide_a_deep_value() -> None:
    # many brackets in a string send it the long way; the depth is still measured
    shallow = json.dumps({"text": "{[" * MAX_DEPTH})
    assert load_json(shallow) == {"text": "{[" * MAX_DEPTH}
    deep = "[" + json.dumps("{" * 10) + "," + nested(MAX_DEPTH + 1) + "]"
    with pytest.raises(ValueError, match="nested more than"):
        load_json(deep)


def test_a_lone_surrogate_is_refused_in_a_small_value() -> None:
    with pytest.raises(ValueError):
        load_json('{"a": "\\ud800"}')


@pytest.mark.parametrize(
    "text",
    ["2026-01-05T09:30:00Z", "2026-01-05T09:30:00.123456Z", "0001-01-01T00:00:00Z"],
)
def test_the_stored_form_parses_as_the_general_reader_does(text: str) -> None:
    general = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    assert parse_time(text) == general and parse_time(text).tzinfo is UTC


@pytest.mark.parametrize(
    "text", ["2026-13-05T09:30:00Z", "2026-02-30T09:30:00.000000Z", "2026-01-05T24:00:00Z"]
)
def test_an_impossible_date_in_the_stored_form_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)


KINDS = ["turn_start", "chat_request", "chat_response", "conversation_start",
         "tool_call_request", "tool_call_response", "config_delta"]  # fmt: skip
KEYS = ["content", "schema", "author", "message", "reasoning", "data", "conversation_id",
        "forked_from", "review", "imported", "id", "name", "arguments", "is_error", "delta",
        "metadata", "attachments", "other"]  # fmt: skip
VALUES: list[object] = [None, "s", 1, 1.5, True, {}, {"a": 1}, [], ["x"]]
STAMPS: list[object] = ["2026-01-05T09:30:00Z", "2026-01-05T09:30:00.5Z", "soon", 5]


def test_the_quick_event_check_never_accepts_what_the_models_refuse() -> None:
    from gitstore.errors import InvalidEvent  # lazy: only this test loads pydantic
    from gitstore.events.schema import check_event

    chance = random.Random(7)
    accepted = 0
    for _ in range(20_000):
        event: dict[str, object] = {
            "type": chance.choice(KINDS),
            "timestamp": chance.choice(STAMPS),
        }
        for key in chance.sample(KEYS, chance.randint(0, 4)):
            event[key] = chance.choice(VALUES)
        if not plainly_valid(event):
            continue
        accepted += 1
        try:
            check_event(event, walked=True)
        except InvalidEvent as exc:
            pytest.fail(f"quick check accepted {event}, the models refuse it: {exc}")
    assert accepted > 100, "the quick check takes the common shapes"


def test_an_attachment_or_an_unknown_kind_is_left_to_the_models() -> None:
    stamp = "2026-01-05T09:30:00Z"
    assert plainly_valid({"type": "chat_request", "timestamp": stamp, "content": "hi"})
    attached = {"type": "chat_request", "timestamp": stamp, "content": "hi", "attachments": []}
    assert not plainly_valid(attached)
    assert not plainly_valid({"type": "from_the_future", "timestamp": stamp})
    assert not plainly_valid(
        {"type": "chat_response", "timestamp": stamp, "message": "a", "data": 1}
    )
