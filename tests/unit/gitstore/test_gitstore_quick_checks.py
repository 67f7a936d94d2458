"""The quick paths of the JSON and time checks give the answers of the general ones."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gitstore.events.kinds import parse_time
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
