"""The rules of what jp takes in (gitstore/boundary.py), without git."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from gitstore import boundary, values
from gitstore.boundary import Limits, MetaLine
from gitstore.errors import Refused
from gitstore.events import canonical_json
from gitstore.store.notes import compact_meta, last_stamp, meta_values
from gitstore.sync.plan import archived_by_meta

T = "2026-01-05T09:00:00.000000Z"


def event_bytes(event: Any) -> bytes:
    return json.dumps(event).encode()


# -- JSON -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ('{"type": "turn_start"}'.encode("utf-16"), r"not UTF-8 text \(byte 0\)"),
        (b'\xef\xbb\xbf{"type": "turn_start"}', "byte-order mark"),
        (b'{"type": "turn_start", "timestamp": \n', "invalid JSON at line 2"),
        (b'{"a": NaN}', "NaN is not a JSON value"),
        (b'{"a": Infinity}', "Infinity is not a JSON value"),
        (b'{"a": 1e400}', "too large"),
        (b'{"a": "\\udcff"}', "lone surrogate"),
        (b'{"\\ud800": 1}', "lone surrogate"),
        (b"[" * 300 + b"]" * 300, "nested more than"),
        (b"[" * 100_000 + b"]" * 100_000, "nested"),
    ],
)
def test_json_that_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        values.load_json(data)


def test_json_that_is_taken() -> None:
    text = '{"emoji": "\\ud83d\\ude00", "n": 1.5, "deep": [[[[1]]]], "big": 12345678901234567890}'
    value = values.load_json(text.encode())
    assert value["emoji"] == "\U0001f600" and value["big"] == 12345678901234567890


# -- events ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"type": "chat_request", "timestamp": T, "content": 5}, "content"),
        ({"type": "tool_call_request", "timestamp": T, "id": "x", "name": "n", "arguments": "x"}, "arguments"),
        ({"type": "compaction", "timestamp": T, "from_turn": "a", "to_turn": 1}, "from_turn"),
        ({"type": "chat_request", "timestamp": 5, "content": "x"}, "timestamp"),
        ({"type": "chat_request", "timestamp": "yesterday", "content": "x"}, "timestamp"),
        ({"timestamp": T, "content": "x"}, "type"),
        (["not", "an", "object"], "object"),
    ],
)  # fmt: skip
def test_events_of_the_wrong_shape_are_refused(event: Any, reason: str) -> None:
    with pytest.raises(Refused, match=reason):
        boundary.event_from_bytes(event_bytes(event), Limits())


def test_an_unknown_type_is_kept_as_it_is() -> None:
    event = {"type": "future_event", "timestamp": T, "anything": {"goes": [1, 2]}}
    assert boundary.event_from_bytes(event_bytes(event), Limits()) == event


def test_an_event_over_the_limit_is_refused_with_its_size() -> None:
    event = {"type": "chat_request", "timestamp": T, "content": "x" * 5000}
    with pytest.raises(Refused, match=r"KiB, over the limit of 1000 bytes per event"):
        boundary.event_from_bytes(event_bytes(event), Limits(max_event_bytes=1000))


def test_stored_events_get_cheap_checks_only() -> None:
    assert boundary.stored_event(b'{"type": "x", "timestamp": "t"}') == {"type": "x", "timestamp": "t"}
    utf16 = '{"type": "turn_start"}'.encode("utf-16")
    for data, why in ((utf16, "not UTF-8"), (b"{", "not JSON"), (b"[1]", "not an event"),
                      (b'{"type": "x", "v": "\\udcff"}', "surrogate")):  # fmt: skip
        with pytest.raises(ValueError, match=why):
            boundary.stored_event(data)


# -- cutting a tool result -------------------------------------------------------------------


def test_a_tool_result_over_the_limit_is_cut_with_a_marker() -> None:
    limits = Limits(max_event_bytes=4000)
    content = "é" * 3000 + "\n" + '"' * 2000  # multi-byte characters and escapes
    event = {"type": "tool_call_response", "timestamp": T, "id": "t", "content": content}
    cut = boundary.fit(event, limits)
    stored = canonical_json(cut)
    assert len(stored) <= 4000
    kept, marker = cut["content"].split("\n\n[jp: ", 1)
    assert content.startswith(kept) and len(kept) > 1000
    dropped = len(content.encode()) - len(kept.encode())
    assert marker.startswith(f"{dropped} bytes of this tool result were dropped")
    assert boundary.fit(cut, limits) == cut, "a cut result fits as it is"


def test_a_small_event_is_left_alone_and_a_large_other_event_refused() -> None:
    small = {"type": "tool_call_response", "timestamp": T, "id": "t", "content": "ok"}
    assert boundary.fit(small, Limits()) is small
    big = {"type": "chat_request", "timestamp": T, "content": "x" * 5000}
    with pytest.raises(Refused, match="chat_request"):
        boundary.fit(big, Limits(max_event_bytes=1000))


# -- files -------------------------------------------------------------------------------------


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "events.json"
    os.mkfifo(fifo)
    done: list[str] = []

    def read() -> None:
        try:
            boundary.read_file(fifo, 1000)
        except Refused as exc:
            done.append(exc.reason)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(30)
    assert done and "FIFO" in done[0], "reading a FIFO blocked or was not refused"


def test_devices_huge_files_and_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="device"):
        boundary.read_file(Path("/dev/zero"), 1000)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:
        f.truncate(10**9)  # sparse: no disk used, and never read
    with pytest.raises(Refused, match="over the limit"):
        boundary.read_file(huge, 1000)
    with pytest.raises(Refused, match="folder"):
        boundary.read_file(tmp_path, 1000)
    small = tmp_path / "ok.json"
    small.write_bytes(b"[]")
    assert boundary.read_file(small, 1000) == b"[]"


# -- names ----------------------------------------------------------------------------------------


def test_ref_names_jp_holds() -> None:
    assert boundary.conversation_name("conversations/jp-c1") == ("jp-c1", False)
    assert boundary.conversation_name("archive/conversations/jp-c1") == ("jp-c1", True)
    assert boundary.conversation_name("conversations/not-an-id") == "not a conversation id"
    deep = "conversations/" + "/".join(["d"] * 100)
    assert boundary.conversation_name(deep) == "not a conversation id"
    assert isinstance(boundary.conversation_name("archive/other/x"), str)
    assert boundary.notes_name("notes/meta") is None
    assert boundary.notes_name("notes/commits") is None
    assert boundary.notes_name("notes/meta/x") is not None, "a folder clashes with notes/meta"
    assert boundary.notes_name("notes/") is not None


# -- metadata lines ----------------------------------------------------------------------------------

GOOD = '{"k": "title", "m": "m1", "t": 10, "v": "kept"}'
BAD_LINES = [
    '{"k": ["x"], "m": "attacker", "t": 1, "v": 1}',
    '{"k": "title", "m": "attacker", "t": 1e400, "v": "evil"}',
    '{"k": ["x"], "v": 1, "t": 1e400}',
    '{"k": "title", "m": "attacker", "t": Infinity, "v": "evil"}',
    '{"k": "title", "m": "attacker", "t": 99, "v": "ab\\udcffcd"}',
    '{"k": "title", "m": "attacker", "t": 99, "v": ["not", "text"]}',
    '{"k": "labels", "m": "attacker", "t": 99, "v": "not a table"}',
    '{"k": "title", "m": "attacker", "t": true, "v": "x"}',
    '{"k": "title", "m": 5, "t": 99, "v": "x"}',
    '["not", "an", "object"]',
    "not json at all",
    "Infinity",
]


@pytest.mark.parametrize("line", BAD_LINES)
def test_bad_metadata_lines_are_skipped(line: str) -> None:
    assert boundary.meta_item(line) is None
    note = GOOD + "\n" + line + "\n"
    assert meta_values(note) == {"title": "kept"}
    assert last_stamp(note, "attacker") == 0
    assert archived_by_meta(note.replace('"title"', '"archived_at"')) is True


def test_good_metadata_lines() -> None:
    assert boundary.meta_item(GOOD) == MetaLine("title", "kept", 10, "m1")
    assert boundary.meta_item('{"k": "labels", "m": "m", "t": 1.0, "v": {"a": "b"}}') == MetaLine(
        "labels", {"a": "b"}, 1, "m"
    )
    assert boundary.meta_item('{"k": "title", "m": "m", "t": 1, "v": null}') is not None


def test_a_note_with_bad_lines_keeps_the_good_ones() -> None:
    note = "\n".join([GOOD, *BAD_LINES]) + "\n"
    cleaned, dropped = boundary.clean_meta(note.encode() + b"\xff bad\n")
    assert cleaned == GOOD + "\n" and dropped == len(BAD_LINES) + 1  # + the line not UTF-8
    many = note * 3  # past the compaction threshold: bad lines never crash it
    assert compact_meta(many) == GOOD + "\n"
