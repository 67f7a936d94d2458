"""Round trips on the sixteen real JP conversations in ../shared (skipped without it)."""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from porcelain.jpformat import (
    folder_name,
    read_conversation,
    render_conversation,
    write_conversation,
)

SHARED = Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "jp-conversations"
FOLDERS = sorted(p for p in SHARED.glob("*/") if p.is_dir()) if SHARED.is_dir() else []

pytestmark = pytest.mark.skipif(not FOLDERS, reason="../shared/fixtures is not here")


def _ids(folder: Path) -> str:
    return folder.name.split("-", 1)[0]


def _is_jp_base64(text: str) -> bool:
    try:
        raw = base64.b64decode(text, validate=True)
        raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return base64.b64encode(raw).decode() == text


def _events_without_legacy_head(folder: Path) -> bytes:
    """The original events.json bytes, minus the leading config_delta JP would split off."""
    data = (folder / "events.json").read_bytes()
    if (folder / "base_config.json").exists():
        return data
    end = data.index(b"\n  },\n") + len(b"\n  },\n")
    return b"[\n" + data[end:]


def _encoded_fields(entry: dict[str, Any]) -> list[str]:
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(entry.get("metadata"))
    if entry.get("type") == "tool_call_request":
        walk(entry.get("arguments"))
    if entry.get("type") == "tool_call_response":
        walk(entry.get("content"))
    return out


@pytest.mark.parametrize("folder", FOLDERS, ids=_ids)
def test_read_write_read_keeps_everything(folder: Path, tmp_path: Path) -> None:
    first = read_conversation(folder)
    out = tmp_path / folder.name
    write_conversation(out, first)
    again = read_conversation(out)
    assert again.jp_id == first.jp_id == f"jp-c{_ids(folder)}"
    assert again.title == first.title
    assert again.metadata == first.metadata
    assert again.base_config == first.base_config
    assert Counter(e["type"] for e in again.events) == Counter(e["type"] for e in first.events)
    assert again.events == first.events


@pytest.mark.parametrize("folder", FOLDERS, ids=_ids)
def test_written_bytes_are_what_jp_writes(folder: Path) -> None:
    files = render_conversation(read_conversation(folder))
    assert files["metadata.json"] == (folder / "metadata.json").read_bytes()
    if (folder / "base_config.json").exists():
        assert files["base_config.json"] == (folder / "base_config.json").read_bytes()
    original = _events_without_legacy_head(folder)
    entries = json.loads(original)
    if all(_is_jp_base64(s) for e in entries for s in _encoded_fields(e)):
        assert files["events.json"] == original
    else:
        # A string JP could not decode stays as it is and is encoded again on save.
        ours = json.loads(files["events.json"])
        assert [e["type"] for e in ours] == [e["type"] for e in entries]
        for mine, theirs in zip(ours, entries, strict=True):
            for a, b in zip(_encoded_fields(mine), _encoded_fields(theirs), strict=True):
                assert a == b or (
                    not _is_jp_base64(b) and a == base64.b64encode(b.encode()).decode()
                )


@pytest.mark.parametrize("folder", FOLDERS, ids=_ids)
def test_folder_name_matches_jp(folder: Path) -> None:
    conv = read_conversation(folder)
    assert conv.jp_id is not None
    assert folder_name(conv.jp_id, conv.title) == folder.name


def test_base64_is_decoded_in_memory() -> None:
    version = SHARED / "17758406187-missing-date-in-version-string"
    raw = json.loads((version / "events.json").read_text())
    conv = read_conversation(version)
    assert len(raw) == len(conv.events)
    for stored, event in zip(raw, conv.events, strict=True):
        if "metadata" in stored:
            for key, value in stored["metadata"].items():
                assert base64.b64encode(event["metadata"][key].encode()).decode() == value
    requests = [e for e in conv.events if e["type"] == "tool_call_request"]
    assert requests[0]["arguments"]["path"] == "crates/jp_cli/build.rs"
    responses = [e for e in conv.events if e["type"] == "tool_call_response"]
    assert responses[0]["content"].startswith("```rs\nuse std::process::Command;")
    requests_text = [e["content"] for e in conv.events if e["type"] == "chat_request"]
    assert requests_text == [e["content"] for e in raw if e["type"] == "chat_request"]


def test_worktrees_counts_like_jp() -> None:
    conv = read_conversation(SHARED / "17727391057-managing-jp-conversations-in-git-worktrees")
    kinds = Counter(e["type"] for e in conv.events)
    assert conv.base_config is not None and "assistant" in conv.base_config
    assert kinds["config_delta"] == 1  # the second one; the first became base_config
    conversation = sum(n for k, n in kinds.items() if k != "config_delta")
    assert conversation == 116


def test_flattened_legacy_config_becomes_base_config() -> None:
    conv = read_conversation(SHARED / "17648402467-flexible-llm-provider-architecture-design")
    assert conv.base_config is not None
    assert conv.base_config["inherit"] is True
    assert "type" not in conv.base_config and "timestamp" not in conv.base_config
    assert all(e["type"] != "config_delta" for e in conv.events)
