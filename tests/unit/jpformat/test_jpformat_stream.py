"""events.json read as a stream: the same events, progress as it goes, and a fault
named as the whole-file read names it (a JSON error first, wherever it is)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitstore import Limits
from porcelain.errors import UserError
from porcelain.jpformat import read_conversation, read_events
from porcelain.jpformat.reader import _checked, _load_json

TS = "2026-01-05 09:00:01.25"


def _turns(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        out.append({"timestamp": TS, "type": "turn_start"})
        out.append({"timestamp": TS, "type": "chat_request", "content": f"question {i}"})
    return out


def test_the_stream_reads_what_the_whole_file_read_does(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    path.write_text(json.dumps(_turns(1500), indent=2))
    whole = _checked(path, _load_json(path, Limits()), Limits())
    assert read_events(path) == whole


def test_progress_counts_the_entries_and_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    path.write_text(json.dumps(_turns(1500)))
    seen: list[tuple[int, int, int]] = []
    read_events(path, progress=lambda n, done, total: seen.append((n, done, total)))
    size = path.stat().st_size
    assert seen[-1] == (3000, size, size)
    assert [n for n, _, _ in seen] == [1000, 2000, 3000, 3000]
    assert all(total == size and done <= size for _, done, total in seen)


def test_a_json_error_after_a_bad_entry_is_the_one_named(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    path.write_text('[{"type": "chat_request"},\n' + json.dumps(_turns(3))[1:-1] + ",]")
    with pytest.raises(UserError) as caught:
        read_events(path)
    assert caught.value.message.startswith(f"{path}: invalid JSON at line 2 column ")


def test_a_bad_entry_in_well_formed_json_is_named_by_its_index(tmp_path: Path) -> None:
    folder = tmp_path / "17800000001-x"
    folder.mkdir()
    entries = [*_turns(2), {"type": "chat_request", "timestamp": TS, "content": 5}]
    (folder / "events.json").write_text(json.dumps(entries))
    with pytest.raises(UserError) as caught:
        read_conversation(folder)
    assert caught.value.message.startswith(f"{folder / 'events.json'}: entry 4")
