"""Reading JP folders: base64, legacy config, unknown entries, and every way a folder is broken."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from porcelain.errors import UserError
from porcelain.jpformat import jp_id_from_folder, read_conversation, write_conversation
from porcelain.jpformat.reader import decode_text


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def make_folder(
    root: Path,
    events: Any,
    metadata: Any = None,
    name: str = "17800000001-test",
    base_config: Any = None,
) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    text = events if isinstance(events, str) else json.dumps(events, indent=2)
    (folder / "events.json").write_text(text)
    meta = {"last_activated_at": "2026-01-05 09:00:00.0"} if metadata is None else metadata
    (folder / "metadata.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
    if base_config is not None:
        (folder / "base_config.json").write_text(json.dumps(base_config))
    return folder


TS = "2026-01-05 09:00:01.25"
TOOL_TURN: list[dict[str, Any]] = [
    {"timestamp": TS, "type": "turn_start"},
    {"timestamp": TS, "type": "chat_request", "content": "read src/main.rs"},
    {
        "timestamp": TS,
        "type": "chat_response",
        "reasoning": "Look at the file.",
        "metadata": {"anthropic_thinking_signature": b64("sig-1"), "nested": {"k": [b64("v")]}},
    },
    {
        "timestamp": TS,
        "type": "tool_call_request",
        "id": "toolu_1",
        "name": "fs_read_file",
        "arguments": {"path": b64("src/main.rs"), "lines": [1, 2], "opts": {"mode": b64("raw")}},
    },
    {
        "timestamp": TS,
        "type": "tool_call_response",
        "id": "toolu_1",
        "content": b64("fn main() {}"),
    },
    {"timestamp": TS, "type": "chat_response", "message": "It is empty."},
]


def test_reads_and_decodes_the_fields_jp_encodes(tmp_path: Path) -> None:
    conv = read_conversation(make_folder(tmp_path, TOOL_TURN, {"title": "T", **_META}))
    assert conv.jp_id == "jp-c17800000001"
    assert conv.title == "T"
    reasoning, request, response = conv.events[2], conv.events[3], conv.events[4]
    assert reasoning["metadata"] == {
        "anthropic_thinking_signature": "sig-1",
        "nested": {"k": ["v"]},
    }
    assert request["arguments"] == {"path": "src/main.rs", "lines": [1, 2], "opts": {"mode": "raw"}}
    assert response["content"] == "fn main() {}"
    assert response["is_error"] is False
    assert conv.events[1]["content"] == "read src/main.rs"  # chat_request is never encoded
    assert conv.events[0]["timestamp"] == "2026-01-05T09:00:01.250000Z"
    assert conv.metadata["last_activated_at"] == "2026-01-05T09:00:00.000000Z"
    assert conv.base_config is None


_META = {"last_activated_at": "2026-01-05 09:00:00.0"}


def test_plain_strings_that_are_not_base64_stay(tmp_path: Path) -> None:
    events = [
        {"timestamp": TS, "type": "chat_request", "content": "x"},
        {"timestamp": TS, "type": "tool_call_request", "id": "a", "name": "n",
         "arguments": {"path": "src/main.rs"}},
        {"timestamp": TS, "type": "tool_call_response", "id": "a", "content": "not base64!"},
    ]  # fmt: skip
    conv = read_conversation(make_folder(tmp_path, events))
    assert conv.events[1]["arguments"] == {"path": "src/main.rs"}
    assert conv.events[2]["content"] == "not base64!"


def test_decode_text_is_strict() -> None:
    assert decode_text(b64("héllo")) == "héllo"
    assert decode_text("aGVsbG8") == "aGVsbG8"  # unpadded: JP leaves it
    assert decode_text("aGVsbG9=") == "aGVsbG9="  # stray bits
    assert decode_text(base64.b64encode(b"\xff\xfe").decode()) == "//4="  # not UTF-8
    assert decode_text("a-b_") == "a-b_"  # URL-safe alphabet


def test_unknown_entries_are_kept_verbatim(tmp_path: Path) -> None:
    odd = {
        "type": "something_new",
        "timestamp": TS,
        "payload": {"x": b64("y")},
        "metadata": {"m": "bg=="},
    }
    conv = read_conversation(make_folder(tmp_path, [*TOOL_TURN[:2], odd, *TOOL_TURN[2:]]))
    assert conv.events[2] == odd
    out = tmp_path / "out"
    write_conversation(out, conv)
    entries = json.loads((out / "events.json").read_text())
    assert entries[2] == odd
    assert list(entries[2]) == list(odd)


def test_legacy_leading_config_delta_becomes_base_config(tmp_path: Path) -> None:
    head = {"type": "config_delta", "timestamp": TS, "delta": {"assistant": {"name": "Dev"}}}
    later = {"type": "config_delta", "timestamp": TS, "delta": {"assistant": {"name": "Other"}}}
    conv = read_conversation(make_folder(tmp_path, [head, *TOOL_TURN, later]))
    assert conv.base_config == {"assistant": {"name": "Dev"}}
    assert [e["type"] for e in conv.events].count("config_delta") == 1


def test_leading_config_delta_stays_when_base_config_exists(tmp_path: Path) -> None:
    head = {"type": "config_delta", "timestamp": TS, "delta": {"x": 1}}
    conv = read_conversation(make_folder(tmp_path, [head, *TOOL_TURN], base_config={"y": 2}))
    assert conv.base_config == {"y": 2}
    assert conv.events[0]["type"] == "config_delta"


def test_flattened_legacy_config_delta(tmp_path: Path) -> None:
    head = {"type": "config_delta", "timestamp": TS, "inherit": True, "assistant": {"name": "A"}}
    conv = read_conversation(make_folder(tmp_path, [head, *TOOL_TURN]))
    assert conv.base_config == {"inherit": True, "assistant": {"name": "A"}}


def test_missing_metadata_json_reads_as_empty_record(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, TOOL_TURN)
    (folder / "metadata.json").unlink()
    conv = read_conversation(folder)
    assert conv.metadata == {} and conv.title is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [("17727391057-title", "jp-c17727391057"), ("17727391057", "jp-c17727391057"),
     ("my-export", None), ("", None), ("١٢٣-arabic-digits", None)],
)  # fmt: skip
def test_jp_id_from_folder(name: str, expected: str | None) -> None:
    assert jp_id_from_folder(name) == expected


# -- broken folders ---------------------------------------------------------------


def _error(folder: Path) -> str:
    with pytest.raises(UserError) as caught:
        read_conversation(folder)
    return caught.value.message


def test_missing_events_json(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, [])
    (folder / "events.json").unlink()
    assert _error(folder) == f"{folder / 'events.json'}: no such file"


def test_missing_folder(tmp_path: Path) -> None:
    assert _error(tmp_path / "nope") == f"{tmp_path / 'nope'}: no such folder"


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    text = '[{"timestamp": "2026-01-01 00:00:00.0", "type": "chat_request", '
    folder = make_folder(tmp_path, text)
    message = _error(folder)
    assert message.startswith(f"{folder / 'events.json'}: invalid JSON at line 1 column 65: ")


def test_nan_is_not_json(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, '[{"timestamp": "x", "type": "a", "v": NaN}]')
    assert "invalid JSON" in _error(folder)


def test_not_utf8(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, [])
    (folder / "events.json").write_bytes(b'["\xff"]')
    assert _error(folder) == f"{folder / 'events.json'}: not UTF-8 text (byte 2)"


def test_events_not_an_array(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, {"events": []})
    assert (
        _error(folder)
        == f"{folder / 'events.json'}: expected a JSON array of events, found an object"
    )


def test_known_event_with_bad_body(tmp_path: Path) -> None:
    events = [dict(e) for e in TOOL_TURN]
    del events[3]["id"]
    folder = make_folder(tmp_path, events)
    assert (
        _error(folder)
        == f"{folder / 'events.json'}: entry 3: tool_call_request: id: Field required"
    )


def test_reasoning_body_under_a_tool_call_tag(tmp_path: Path) -> None:
    events = [dict(e) for e in TOOL_TURN]
    events[2]["type"] = "tool_call_request"
    message = _error(make_folder(tmp_path, events))
    assert "events.json: entry 2: tool_call_request:" in message


@pytest.mark.parametrize(
    ("entry", "reason"),
    [(42, "an event must be a JSON object"),
     ({"timestamp": TS}, "an event needs a string `type`"),
     ({"type": "turn_start"}, "turn_start event has no string `timestamp`"),
     ({"type": "turn_start", "timestamp": "yesterday"}, "turn_start: "),
     ({"type": "chat_response", "timestamp": TS, "message": "a", "reasoning": "b"}, "exactly one")],
)  # fmt: skip
def test_bad_entries_name_their_position(tmp_path: Path, entry: Any, reason: str) -> None:
    folder = make_folder(tmp_path, [TOOL_TURN[0], entry])
    message = _error(folder)
    assert message.startswith(f"{folder / 'events.json'}: entry 1: ")
    assert reason in message


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [("[1, 2]", "expected a JSON object, found an array"),
     ("{", "invalid JSON at line 1 column 2: Expecting property name enclosed in double quotes"),
     ({"title": 5, **_META}, "title: expected a string, found a number"),
     ({"last_activated_at": "soon"}, "last_activated_at: 'soon' is not a timestamp"),
     ({"labels": {"a": 1}, **_META}, "labels: expected an object of strings")],
)  # fmt: skip
def test_bad_metadata_names_the_file(tmp_path: Path, metadata: Any, reason: str) -> None:
    folder = make_folder(tmp_path, TOOL_TURN, metadata)
    assert _error(folder) == f"{folder / 'metadata.json'}: {reason}"


def test_bad_base_config_names_the_file(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, TOOL_TURN, base_config=[1])
    assert (
        _error(folder) == f"{folder / 'base_config.json'}: expected a JSON object, found an array"
    )
