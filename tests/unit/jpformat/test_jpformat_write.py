"""Writing JP folders: timestamps, key order, base64, internal entries, folder names."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from porcelain.errors import UserError
from porcelain.jpformat import (
    JpConversation,
    folder_name,
    jp_time,
    read_conversation,
    render_conversation,
    standing_events,
    write_conversation,
)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


T = "2026-01-05T09:00:07.000000Z"


def conv(events: list[dict[str, Any]], **meta: Any) -> JpConversation:
    return JpConversation(jp_id="jp-c17800000001", title=None, metadata=meta, events=events)


def written(c: JpConversation) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(render_conversation(c)["events.json"])
    return entries


def compaction(a: int, b: int) -> dict[str, Any]:
    return {
        "timestamp": T,
        "type": "compaction",
        "from_turn": a,
        "to_turn": b,
        "reasoning": "strip",
    }


TURN: list[dict[str, Any]] = [
    {"timestamp": T, "type": "turn_start"},
    {"timestamp": T, "type": "chat_request", "content": "set up the project", "author": "Ana"},
    {
        "timestamp": "2026-01-05T09:00:08.120000Z",
        "type": "chat_response",
        "reasoning": "A new crate.",
        "metadata": {"anthropic_thinking_signature": "EqQBCkYIBx"},
    },
    {
        "timestamp": T,
        "type": "tool_call_request",
        "id": "tc1",
        "name": "fs_create_file",
        "arguments": {"path": "src/main.rs", "n": 3, "list": ["a", {"b": "c"}], "flag": None},
    },
    {"timestamp": T, "type": "tool_call_response", "id": "tc1", "content": "file created"},
    {"timestamp": T, "type": "chat_response", "message": "Created src/main.rs"},
]


@pytest.mark.parametrize(
    ("rfc", "jp"),
    [
        ("2023-01-01T00:00:00.000000Z", "2023-01-01 00:00:00.0"),
        ("2026-04-10T17:04:20.531233Z", "2026-04-10 17:04:20.531233"),
        ("2026-04-10T17:04:20.500000Z", "2026-04-10 17:04:20.5"),
        ("2026-04-10T19:04:20.010+02:00", "2026-04-10 17:04:20.01"),
        ("2026-04-10 17:04:20.7", "2026-04-10 17:04:20.7"),
    ],
)
def test_jp_time(rfc: str, jp: str) -> None:
    assert jp_time(rfc) == jp


def test_events_file_layout_and_key_order() -> None:
    data = render_conversation(conv(TURN))["events.json"]
    assert data.startswith(
        b'[\n  {\n    "timestamp": "2026-01-05 09:00:07.0",\n    "type": "turn_start"\n  },'
    )
    assert data.endswith(b"\n  }\n]\n")
    entries = json.loads(data)
    assert [list(e) for e in entries] == [
        ["timestamp", "type"],
        ["timestamp", "type", "content", "author"],
        ["timestamp", "type", "reasoning", "metadata"],
        ["timestamp", "type", "id", "name", "arguments"],
        ["timestamp", "type", "id", "content", "is_error"],
        ["timestamp", "type", "message"],
    ]
    assert entries[2]["timestamp"] == "2026-01-05 09:00:08.12"


def test_base64_applied_to_exactly_the_fields_jp_encodes() -> None:
    entries = written(conv(TURN))
    assert entries[1]["content"] == "set up the project"
    assert entries[2]["reasoning"] == "A new crate."
    assert entries[2]["metadata"] == {"anthropic_thinking_signature": b64("EqQBCkYIBx")}
    assert entries[3]["arguments"] == {
        "path": b64("src/main.rs"),
        "n": 3,
        "list": [b64("a"), {"b": b64("c")}],
        "flag": None,
    }
    assert entries[3]["name"] == "fs_create_file" and entries[3]["id"] == "tc1"
    assert entries[4]["content"] == b64("file created")
    assert entries[4]["is_error"] is False
    assert entries[5]["message"] == "Created src/main.rs"


def test_round_trip_restores_plain_values(tmp_path: Path) -> None:
    write_conversation(tmp_path / "c", conv(TURN, title="Setup"))
    back = read_conversation(tmp_path / "c")
    assert back.events[3]["arguments"] == TURN[3]["arguments"]
    assert back.events[4]["content"] == "file created"
    assert back.events[2]["metadata"] == TURN[2]["metadata"]
    assert back.title == "Setup"


def test_empty_metadata_is_omitted_and_nested_inquiry_in_jp_order() -> None:
    inquiry = {
        "timestamp": T,
        "type": "inquiry_request",
        "question": {"default": True, "answer_type": {"type": "boolean"}, "text": "Apply?"},
        "source": {"name": "fs_modify_file", "source": "tool"},
        "id": "tc1.apply",
        "metadata": {},
    }
    answer = {"answer": True, "id": "tc1.apply", "type": "inquiry_response", "timestamp": T}
    entries = written(conv([*TURN[:4], inquiry, answer, *TURN[4:]]))
    assert list(entries[4]) == ["timestamp", "type", "id", "source", "question"]
    assert list(entries[4]["source"]) == ["source", "name"]
    assert list(entries[4]["question"]) == ["text", "answer_type", "default"]
    assert list(entries[5]) == ["timestamp", "type", "id", "answer"]


def test_config_delta_and_compaction_are_written_tag_first() -> None:
    delta = {"timestamp": T, "type": "config_delta", "delta": {"assistant": {"name": "x"}}}
    comp = {
        "timestamp": T,
        "type": "compaction",
        "tool_calls": {"response": True, "request": True, "policy": "strip"},
        "to_turn": 0,
        "from_turn": 0,
        "summary": None,
        "reasoning": "strip",
    }
    entries = written(conv([*TURN, delta, comp], title="t"))
    assert list(entries[6]) == ["type", "timestamp", "delta"]
    assert list(entries[7]) == [
        "type",
        "timestamp",
        "from_turn",
        "to_turn",
        "reasoning",
        "tool_calls",
    ]
    assert list(entries[7]["tool_calls"]) == ["policy", "request", "response"]


def test_internal_entries_are_dropped() -> None:
    start = {"timestamp": T, "type": "conversation_start", "conversation_id": "jp-c17800000001"}
    entries = written(conv([start, *TURN]))
    assert [e["type"] for e in entries] == [e["type"] for e in TURN]


def test_reset_all_withdraws_every_earlier_compaction() -> None:
    reset = {"timestamp": T, "type": "compaction_reset", "withdraw": None}
    events = [*TURN, compaction(0, 0), compaction(0, 0), reset, compaction(0, 0)]
    kept = standing_events(events)
    assert [e["type"] for e in kept].count("compaction") == 1
    assert kept[-1] is events[-1]


def test_reset_by_ordinal_counts_all_earlier_compactions() -> None:
    first, second, third = compaction(0, 0), compaction(0, 1), compaction(1, 1)
    events = [
        *TURN,
        first,
        second,
        {"timestamp": T, "type": "compaction_reset", "withdraw": [0]},
        third,
        # ordinals count withdrawn ones too: 1 = second, 2 = third, 9 = nothing
        {"timestamp": T, "type": "compaction_reset", "withdraw": [2, 9]},
    ]
    kept = [e for e in standing_events(events) if e["type"] == "compaction"]
    assert kept == [second]
    entries = written(conv(events))
    assert [(e["from_turn"], e["to_turn"]) for e in entries if e["type"] == "compaction"] == [
        (0, 1)
    ]
    assert "compaction_reset" not in {e["type"] for e in entries}


def test_unknown_entries_are_written_untouched() -> None:
    odd = {"type": "from_the_future", "timestamp": "2030-01-01 00:00:00.0", "x": "plain"}
    entries = written(conv([*TURN, odd]))
    assert entries[-1] == odd and list(entries[-1]) == list(odd)


def test_metadata_file_always_has_last_activated_at(tmp_path: Path) -> None:
    write_conversation(tmp_path / "a", conv(TURN))
    meta = json.loads((tmp_path / "a" / "metadata.json").read_text())
    assert meta == {"last_activated_at": "2026-01-05 09:00:08.12"}  # the newest event
    c = conv(
        TURN,
        labels={"k": ""},
        pinned_at="2026-02-01T10:00:00.000000Z",
        last_activated_at="2026-02-02T10:00:00.5Z",
        title="Setup",
    )
    write_conversation(tmp_path / "b", c)
    text = (tmp_path / "b" / "metadata.json").read_text()
    assert list(json.loads(text)) == ["title", "last_activated_at", "pinned_at", "labels"]
    assert '"last_activated_at": "2026-02-02 10:00:00.5"' in text
    assert text.endswith("}\n") and text.startswith('{\n  "title": "Setup",\n')


def test_base_config_file_only_when_there_is_one(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    with_base = JpConversation(jp_id=None, title=None, metadata={}, base_config={"a": 1}, events=list(TURN))
    write_conversation(folder, with_base)
    assert (folder / "base_config.json").read_text() == '{\n  "a": 1\n}\n'
    write_conversation(folder, conv(TURN))
    assert not (folder / "base_config.json").exists()


def test_a_leading_delta_without_base_config_is_not_mistaken_for_one(tmp_path: Path) -> None:
    delta = {"timestamp": T, "type": "config_delta", "delta": {"x": 1}}
    write_conversation(tmp_path / "c", conv([delta, *TURN]))
    back = read_conversation(tmp_path / "c")
    assert back.base_config == {}
    assert back.events[0]["type"] == "config_delta"


def test_unchanged_files_are_not_rewritten(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    write_conversation(folder, conv(TURN))
    before = (folder / "events.json").stat().st_mtime_ns
    (folder / "events.json").touch()
    touched = (folder / "events.json").stat().st_mtime_ns
    write_conversation(folder, conv(TURN))
    assert (folder / "events.json").stat().st_mtime_ns == touched >= before
    assert sorted(p.name for p in folder.iterdir()) == ["events.json", "metadata.json"]


def test_an_invalid_event_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    bad = {"timestamp": T, "type": "tool_call_request", "name": "x"}
    with pytest.raises(UserError, match="event 6: tool_call_request: id: Field required"):
        write_conversation(tmp_path / "c", conv([*TURN, bad]))
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    ("title", "name"),
    [
        (None, "17800000001"),
        ("", "17800000001"),
        ("  Hello, World!  ", "17800000001-hello--world"),
        ("Fix: iter_mut() segfault?", "17800000001-fix--iter-mut---segfault"),
        ("!!!", "17800000001"),
        (
            "A very long title that goes on and on well past the sixty character limit",
            "17800000001-a-very-long-title-that-goes-on-and-on-well-past-the-sixty",
        ),
        ("Überprüfung der Größe", "17800000001-überprüfung-der-größe"),
        ("x" * 61, "17800000001"),  # no dash in the slug: cut back to the id
    ],
)
def test_folder_name(title: str | None, name: str) -> None:
    assert folder_name("jp-c17800000001", title) == name


def test_folder_name_refuses_other_ids() -> None:
    with pytest.raises(UserError):
        folder_name("../etc", "x")
