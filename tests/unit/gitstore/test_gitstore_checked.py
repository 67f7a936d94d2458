"""Records an import vouches for (``Checked``, made by ``load_record`` alone): an event
that carries one is not walked into it again, and is refused exactly as it would be
with the same record as a plain dict (depth, Unicode, size)."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import pytest

from gitstore import load_json, load_record
from gitstore.boundary import Checked, Limits
from gitstore.errors import InvalidEvent, Refused
from gitstore.events import validate
from gitstore.store.core import Store
from gitstore.values import MAX_DEPTH, check_value
from porcelain.jpformat import claude_code
from porcelain.jpformat.sessionlines import parse_lines
from tests.unit.gitstore.builders import at, start

HOSTILE = [
    b'{"a": "\\udcff"}',
    b'{"\\ud800": 1}',
    b"{" + b'"a":[' * 300 + b"]" * 300 + b"}",
    b'{"a": NaN}',
    b'{"a": 1e999}',
    b"\xef\xbb\xbf{}",
    b'{"a": "\xff"}',
    b'{"a": 1',
]


def nested(levels: int) -> bytes:
    """A record whose deepest value is ``levels`` below it."""
    return b'{"a":' + b"[" * (levels - 1) + b"1" + b"]" * (levels - 1) + b"}"


def carrier(record: Any) -> dict[str, Any]:
    """A mapped event as an import makes it: the record whole in its metadata."""
    return {
        "type": "chat_request",
        "timestamp": at(1),
        "content": "q",
        "metadata": {"source_record": record},
    }


def reason(event: dict[str, Any]) -> str:
    with pytest.raises(InvalidEvent) as caught:
        validate(event)
    return caught.value.reason


@pytest.mark.parametrize("data", HOSTILE)
def test_a_record_is_refused_as_strict_json_refuses_it(data: bytes) -> None:
    with pytest.raises(ValueError) as plain:
        load_json(data)
    with pytest.raises(ValueError) as vouched:
        load_record(data)
    assert str(vouched.value) == str(plain.value)


@pytest.mark.parametrize("data", [b"[1]", b'"text"', b"3", b"null"])
def test_only_an_object_is_a_record(data: bytes) -> None:
    with pytest.raises(ValueError, match="not a JSON object"):
        load_record(data)
    lines = parse_lines(data + b"\n", 1 << 20)
    assert not lines.records and lines.skipped[0].reason == "not a JSON object"


def test_nothing_but_load_record_makes_one_and_none_is_changed() -> None:
    with pytest.raises(TypeError, match="load_record"):
        Checked({"a": 1}, 1, object())
    record = load_record(b'{"a": {"b": 1}}')
    assert record.depth == 2 and record == {"a": {"b": 1}}
    for change in (
        lambda: record.__setitem__("x", 1),
        lambda: record.update(x=1),
        lambda: record.pop("a"),
        lambda: record.setdefault("x", 1),
        lambda: record.clear(),
    ):
        with pytest.raises(TypeError, match="cannot be changed"):
            change()
    assert record == {"a": {"b": 1}}
    for made in (
        dict(record),
        copy.copy(record),
        copy.deepcopy(record),
        pickle.loads(pickle.dumps(record)),
    ):
        assert type(made) is dict and made == record  # a copy carries no vouch


def test_a_carried_record_is_held_to_the_depth_limit_where_it_sits() -> None:
    # a record read at the limit is within it alone, but two levels down in its event it is not
    fits, over = load_record(nested(MAX_DEPTH - 2)), load_record(nested(MAX_DEPTH - 1))
    assert (fits.depth, over.depth) == (MAX_DEPTH - 2, MAX_DEPTH - 1)
    validate(carrier(fits))
    plain = reason(carrier(load_json(nested(MAX_DEPTH - 1))))
    assert reason(carrier(over)) == plain == f"nested more than {MAX_DEPTH} levels deep"
    check_value(load_record(nested(MAX_DEPTH)))  # alone, at the top: fits
    with pytest.raises(ValueError, match="nested more than"):
        check_value([load_record(nested(MAX_DEPTH))])


def test_what_an_event_adds_beside_the_record_is_still_walked() -> None:
    record = load_record(b'{"type": "user"}')
    event = carrier(record)
    event["metadata"]["note"] = "\udcff"
    assert "lone surrogate" in reason(event)
    event = carrier(record)
    event["content"] = "\ud800"
    assert "lone surrogate" in reason(event)


def test_a_carried_record_over_the_size_limit_is_refused_and_nothing_moves(path: Path) -> None:
    store = Store(path, limits=Limits(max_event_bytes=5000))
    tip = store.log.create("jp-c1", [start("jp-c1")], None, "test")
    record = load_record(b'{"text": "' + b"Q" * 20_000 + b'"}')
    with pytest.raises(Refused, match="chat_request"):
        store.log.append("jp-c1", [carrier(record)], tip, "test")
    assert store.refs.require("jp-c1").tip == tip


def test_a_hostile_session_record_is_refused_through_the_import_path(path: Path) -> None:
    """A line nested just within what reading allows becomes an event the store refuses,
    as the same event made of plain dicts is refused."""
    data = b'{"type": "user", "message": {"role": "user", "content": "hi"}}\n'
    data += b'{"type": "progress", "deep": ' + nested(MAX_DEPTH - 1) + b"}\n"
    lines = parse_lines(data, 1 << 20)
    assert not lines.skipped and all(type(r) is Checked for r in lines.records)
    events = [e for g in claude_code.map_records(lines.records).groups for e in g]
    store = Store(path)
    with pytest.raises(InvalidEvent, match=f"nested more than {MAX_DEPTH}") as vouched:
        store.log.create("jp-c1", [start("jp-c1"), *events], None, "test", packed=True)
    plain = [load_json(line) for line in data.splitlines()]
    events = [e for g in claude_code.map_records(plain).groups for e in g]
    with pytest.raises(InvalidEvent) as unvouched:
        store.log.create("jp-c1", [start("jp-c1"), *events], None, "test", packed=True)
    assert vouched.value.reason == unvouched.value.reason
    assert not store.refs.exists("jp-c1")
