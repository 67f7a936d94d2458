"""``canonical.dumps`` writes exactly what ``json.dumps(sort_keys, ensure_ascii=False,
indent=1)`` writes (event.json's bytes, hence every object id), for any value."""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitstore.events import canonical, canonical_json
from gitstore.events.kinds import Kind


def reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=1)


leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_any_json_value_is_written_as_the_library_writes_it(value: Any) -> None:
    assert canonical.dumps(value) == reference(value)


class Level(IntEnum):
    ONE = 1


def test_the_odd_values_the_library_accepts_are_its_own_text() -> None:
    odd: list[Any] = [
        {"type": Kind.CHAT_REQUEST, "n": Level.ONE, "t": (1, "a"), "e": [], "o": {}},
        {"b": {2: "x", 3.5: "y", True: "z"}},
        {"nan": float("nan"), "inf": [float("-inf")]},
        {"surrogate": "\ud800", "ctl": "\x00\x1f\u2028", "emoji": "✓ größer"},
        [[[[]]], {"": ""}],
        1.0e300,
        "top",
    ]
    for value in odd:
        assert canonical.dumps(value) == reference(value)


def test_a_value_json_refuses_is_refused_the_same_way() -> None:
    for bad in ({"k": object()}, {"a": 1, 2: 3}):
        try:
            reference(bad)
        except TypeError as exc:
            expected = type(exc)
        try:
            canonical.dumps(bad)
        except TypeError as exc:
            assert type(exc) is expected
        else:
            raise AssertionError("accepted what json refuses")


def test_event_json_bytes_are_unchanged() -> None:
    event = {"type": "chat_request", "timestamp": "2026-01-01T00:00:00.000000Z", "content": "hé"}
    assert canonical_json(event) == (reference(event) + "\n").encode()


@settings(max_examples=200, deadline=None)
@given(values, st.booleans(), st.booleans(), st.booleans())
def test_an_encoder_made_once_writes_what_the_library_writes(
    value: Any, ascii_only: bool, sort_keys: bool, compact: bool
) -> None:
    encode = canonical.encoder(ensure_ascii=ascii_only, sort_keys=sort_keys, compact=compact)
    library = json.JSONEncoder(
        ensure_ascii=ascii_only,
        sort_keys=sort_keys,
        separators=(",", ":") if compact else (", ", ": "),
    )
    assert encode(value) == library.encode(value)
    assert encode(value) == encode(value)  # nothing kept from one call to the next


def test_an_encoder_made_once_refuses_what_the_library_refuses() -> None:
    encode = canonical.encoder()
    for bad in ({"k": object()}, {(1, 2): "a tuple key"}, [b"bytes"]):
        with pytest.raises(TypeError) as expected:
            json.dumps(bad)
        with pytest.raises(TypeError) as got:
            encode(bad)
        assert str(got.value) == str(expected.value)
