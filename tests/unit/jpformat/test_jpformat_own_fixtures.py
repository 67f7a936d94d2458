"""The project's own JP-format fixtures (fixtures/conversations) read as documented."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gitstore.events.turns import event_count, turn_count
from porcelain.jpformat import folder_name, read_conversation, render_conversation

OWN = Path(__file__).resolve().parents[3] / "fixtures" / "conversations"


def _folder(name: str) -> Path:
    return OWN / name


@pytest.mark.parametrize(
    ("name", "turns", "events"),
    [
        ("17800000101-setting-up-a-rust-cli", 8, 66),
        ("17800000102-no-turn-markers", 1, 6),
        ("17800000103-with-compaction", 12, 75),
    ],
)
def test_counts(name: str, turns: int, events: int) -> None:
    conv = read_conversation(_folder(name))
    assert conv.jp_id == "jp-c" + name.split("-", 1)[0]
    assert conv.title is not None and folder_name(conv.jp_id, conv.title) == name
    assert turn_count(conv.events) == turns
    assert event_count(conv.events) == events
    assert conv.base_config is not None


def test_rust_cli_has_signatures_base64_and_one_error() -> None:
    conv = read_conversation(_folder("17800000101-setting-up-a-rust-cli"))
    reasoning = [e for e in conv.events if "reasoning" in e]
    assert reasoning and all(e["metadata"]["anthropic_thinking_signature"] for e in reasoning)
    errors = [e for e in conv.events if e["type"] == "tool_call_response" and e["is_error"]]
    assert len(errors) == 1 and "E0432" in errors[0]["content"]
    raw = (_folder("17800000101-setting-up-a-rust-cli") / "events.json").read_text()
    assert "src/main.rs" not in raw.split('"arguments"')[1].split("}")[0]  # encoded at rest


def test_old_style_has_no_turn_markers_and_a_legacy_base_config() -> None:
    folder = _folder("17800000102-no-turn-markers")
    assert not (folder / "base_config.json").exists()
    conv = read_conversation(folder)
    assert "turn_start" not in {e["type"] for e in conv.events}
    assert conv.base_config is not None and "assistant" in conv.base_config


def test_compaction_fixture_holds_the_extra_entries() -> None:
    conv = read_conversation(_folder("17800000103-with-compaction"))
    kinds = Counter(e["type"] for e in conv.events)
    assert kinds["compaction"] == 1 and kinds["config_delta"] == 1 and kinds["turn_rating"] == 1
    (comp,) = [e for e in conv.events if e["type"] == "compaction"]
    assert (comp["from_turn"], comp["to_turn"]) == (1, 7)
    assert comp["summary"]["summary"]


@pytest.mark.parametrize(
    "name", ["17800000101-setting-up-a-rust-cli", "17800000103-with-compaction"]
)
def test_committed_bytes_are_what_the_writer_writes(name: str) -> None:
    folder = _folder(name)
    files = render_conversation(read_conversation(folder))
    for file_name, data in files.items():
        assert (folder / file_name).read_bytes() == data, file_name
