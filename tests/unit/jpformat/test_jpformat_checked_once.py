"""A JP folder's events are checked once, as ``events.json`` is parsed and as each entry
is read (its shape), and the store's writer takes them as checked: nothing the whole
check refuses gets through, and an event made anywhere else is checked at the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gitstore import Limits
from gitstore.errors import InvalidEvent
from gitstore.events import Valid, validate
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.values import MAX_DEPTH
from porcelain.errors import UserError
from porcelain.jpformat import scan_conversation
from porcelain.jpformat.eventfile import WHOLE_BYTES
from porcelain.jpformat.reader import read_events

T = "2026-01-05 09:00:00.5"


def folder(root: Path, text: str, pad: int = 0) -> Path:
    """A folder whose ``events.json`` is ``text``, with ``pad`` bytes of spaces first
    (past ``WHOLE_BYTES``: the file is streamed)."""
    where = root / "17800000001-test"
    where.mkdir()
    (where / "events.json").write_text(" " * pad + text)
    (where / "metadata.json").write_text('{"title": "t"}')
    return where


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("pad", [0, WHOLE_BYTES + 1])
@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (f'{{"type": "chat_request", "timestamp": "{T}", "content": "a \\ud800 b"}}', "surrogate"),
        (f'{{"type": "turn_start", "timestamp": "{T}", "metadata": {{"k": "\\udfff"}}}}', "surrogate"),
        (f'{{"type": "turn_start", "timestamp": "{T}", "metadata": {{"k": {nested(MAX_DEPTH)}}}}}', "nested"),
    ],
)
def test_what_the_whole_check_refuses_a_folder_is_refused_for(
    tmp_path: Path, entry: str, reason: str, pad: int
) -> None:
    where = folder(tmp_path, f"[{entry}]", pad)
    with pytest.raises(UserError, match=reason):
        scan_conversation(where, Limits())
    with pytest.raises(UserError, match=reason):
        read_events(where / "events.json")


@pytest.mark.parametrize("pad", [0, WHOLE_BYTES + 1])
def test_every_event_read_passes_the_whole_check(tmp_path: Path, pad: int) -> None:
    """Events at the deepest the file allows (a legacy flattened config delta, nested
    one level deeper as it is read, included): the whole check takes each of them."""
    deep: Any = json.loads(nested(MAX_DEPTH - 2))
    entries = [
        {"type": "config_delta", "timestamp": T, "delta": {"a": deep}},
        {"type": "config_delta", "timestamp": T, "model": {"b": deep}},
        {"type": "chat_request", "timestamp": T, "content": "caf\u00e9 \U0001f600"},
        {"type": "tool_call_request", "timestamp": T, "id": "1", "name": "n", "arguments": {}},
    ]
    where = folder(tmp_path, json.dumps(entries), pad)
    read = scan_conversation(where, Limits())  # the first entry: its base config
    assert len(read.events) == 3
    for event in (*read.events, *read_events(where / "events.json")):
        assert validate(dict(event)) == event


def test_an_event_made_outside_the_reader_is_checked_by_the_store(tmp_path: Path) -> None:
    init_bare(tmp_path / "s.git")
    store = Store(tmp_path / "s.git")
    start = validate({"type": "conversation_start", "timestamp": T, "conversation_id": "jp-c1"})
    bad = {"type": "chat_request", "timestamp": T, "content": "\ud800"}
    with pytest.raises(TypeError):
        Valid(bad, object())  # only the check makes a Valid
    with pytest.raises(InvalidEvent, match="surrogate"):
        store.log.create("jp-c1", [start, bad], None, "test", packed=True)
    with store.log.batch(), pytest.raises(InvalidEvent, match="surrogate"):
        store.log.create("jp-c1", [start, bad], None, "test", packed=True)
    assert not store.refs.exists("jp-c1")
