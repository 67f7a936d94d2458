"""The JSON array streamer: one element at a time, a bounded read ahead, and every
fault left to ``load_json`` (``NotStreamable``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gitstore.jsonstream import NotStreamable, iter_array
from gitstore.values import MAX_DEPTH, load_json


class Reader:
    """Serves ``data`` at most ``most`` bytes a read, and counts what it served."""

    def __init__(self, data: bytes, most: int) -> None:
        self.data, self.most, self.served = data, most, 0

    def __call__(self, n: int) -> bytes:
        piece = self.data[self.served : self.served + min(n, self.most)]
        self.served += len(piece)
        return piece


def _all(data: bytes, chunk: int = 7) -> list[Any]:
    return list(iter_array(Reader(data, chunk), chunk))


ENTRIES: list[Any] = [
    {"type": "chat_request", "content": "héllo ☃ \U0001f600", "n": 123456789, "f": -1.5e3},
    {"a": [1, 2, {"b": None, "c": True, "d": False}], "s": '\\u00e9 "quoted"'},
    [],
    12345678901234567890,
    "plain",
]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_same_values_as_a_whole_parse_whatever_the_chunk(chunk: int, indent: int | None) -> None:
    data = json.dumps(ENTRIES, indent=indent, ensure_ascii=False).encode()
    assert _all(data, chunk) == load_json(data)


@pytest.mark.parametrize("text", ["[]", " [ ] \n", "[\n]"])
def test_an_empty_array(text: str) -> None:
    assert _all(text.encode()) == []


def test_yields_each_element_before_reading_far_past_it() -> None:
    entry = json.dumps({"content": "x" * 50})
    data = ("[" + ",".join([entry] * 200) + "]").encode()
    reader = Reader(data, 16)
    stream = iter_array(reader, 16)
    for i in range(200):
        assert next(stream) == {"content": "x" * 50}
        end = 1 + (i + 1) * (len(entry) + 1)  # through this element and its comma
        assert reader.served <= end + 2 * len(entry) + 16  # a bound, not the file
    assert list(stream) == []
    assert reader.served == len(data)


FAULTS: list[bytes] = [
    b"",
    b"   ",
    b"\xef\xbb\xbf[]",
    b"[1, 2",
    b"[1 2]",
    b"[1,]",
    b"[,1]",
    b"[1] x",
    b"[1][2]",
    b"[NaN]",
    b"[1e999]",
    b'["\xff"]',
    b'["\xe2\x98"]',
    b'["\\ud800"]',
    b"[" + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"]",
    b"[" + b"[" * 100_000 + b"]" * 100_000 + b"]",
]


@pytest.mark.parametrize("data", FAULTS, ids=range(len(FAULTS)))
def test_every_fault_is_left_to_the_whole_parse(data: bytes) -> None:
    with pytest.raises(ValueError):
        load_json(data)  # the whole parse refuses it (and names why)
    with pytest.raises(NotStreamable):
        _all(data, 3)


@pytest.mark.parametrize("data", [b"{}", b'"text"', b"1", b"null"])
def test_another_value_than_an_array_is_left_to_the_whole_parse(data: bytes) -> None:
    with pytest.raises(NotStreamable):
        _all(data, 3)


def test_the_deepest_nesting_load_json_takes_streams() -> None:
    depth = MAX_DEPTH  # with the array around it: the limit exactly
    data = b"[" + b"[" * depth + b"]" * depth + b"]"
    assert _all(data, 5) == load_json(data)


def test_a_number_cut_by_a_read_is_read_whole() -> None:
    assert _all(b"[1234567, 89]", 3) == [1234567, 89]
