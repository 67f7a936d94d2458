"""The commits an import writes are the same, byte for byte, as the ones the first
session importer wrote: the same events give the same commit ids, one at a time and
in packs (a faster writer must not change a single written byte)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from gitstore import Store
from gitstore.store.repo import init_bare
from porcelain.jpformat import claude_code, codex
from porcelain.jpformat.sessionlines import read_lines

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"
START = {
    "type": "conversation_start",
    "timestamp": "2026-01-01T00:00:00.000000Z",
    "conversation_id": "jp-c17000000000",
    "imported": {"format": "claude-code", "session": "s", "agent": None, "path": "p/s.jsonl"},
}
# sha1 of the commit ids, one a line, written by the writer these tests were made with
LOOSE = "d047030d67966991479bd6c5e4558a475778f206"
PACKED = "89315bab0b01d5207e96618e2b994ea0b64e908d"


def mapped_events() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [START]
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        records = read_lines(path, 10 << 20).records
        module = codex if path.relative_to(FIXTURES).parts[0] == "codex" else claude_code
        out += [e for g in module.map_records(records).groups for e in g]
    return out


def digest(ids: list[str]) -> str:
    return hashlib.sha1("".join(f"{i}\n" for i in ids).encode()).hexdigest()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    init_bare(tmp_path / "s.git")
    return Store(tmp_path / "s.git")


def test_one_at_a_time_the_commit_ids_are_as_before(store: Store) -> None:
    events = mapped_events()
    assert len(events) < 1000
    assert digest(store.log.write_commits(events, None)) == LOOSE


def test_in_packs_the_commit_ids_are_as_before(store: Store) -> None:
    events = mapped_events() * 15  # past PACK_AT: one write into packs
    assert len(events) >= 1000
    assert digest(store.log.write_commits(events, None)) == PACKED
