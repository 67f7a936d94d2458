"""Local-state JSON files: read as an object or nothing, written whole by rename."""

from __future__ import annotations

from pathlib import Path

from gitstore.fs import atomic


def test_a_missing_broken_or_non_object_file_reads_as_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    assert atomic.read_json(path) == {}
    path.write_text("[1, 2]")
    assert atomic.read_json(path) == {}
    path.write_text('{"pulls": 3')
    assert atomic.read_json(path) == {}


def test_a_write_replaces_the_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "origin.json"
    atomic.write_json(path, {"pulls": 1, "refs": 2})
    assert path.read_text() == '{"pulls": 1, "refs": 2}'
    atomic.write_json(path, {"b": 1, "a": "é"}, pretty=True)
    assert path.read_text() == '{\n "a": "é",\n "b": 1\n}\n'
    assert atomic.read_json(path) == {"a": "é", "b": 1}
    assert sorted(p.name for p in path.parent.iterdir()) == ["origin.json"]
