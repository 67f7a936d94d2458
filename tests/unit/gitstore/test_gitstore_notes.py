"""Notes on anchors: compare-and-swap writes, fan-out reading, metadata LWW and union."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pygit2
import pytest

from gitstore import notes, refs
from gitstore.repo import init_bare
from gitstore.store import Store
from tests.unit.gitstore.builders import start


def git(path: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(path), *args], capture_output=True, text=True, check=True
    ).stdout


def signature() -> pygit2.Signature:
    return pygit2.Signature("t", "t@example.invalid")


def test_a_note_is_readable_with_plain_git(store: Store, path: Path) -> None:
    store.create("jp-c2", [start("jp-c2")], None, "create")
    store.set_note(refs.NOTES_SOURCE, "jp-c2", "jp-c1\n", "jp: review jp-c2 of jp-c1")
    shown = git(path, "notes", "--ref=source", "show", store.anchor("jp-c2"))
    assert shown == "jp-c1\n"
    assert store.note(refs.NOTES_SOURCE, "jp-c2") == "jp-c1\n"
    assert store.source_of("jp-c2") == "jp-c1"
    assert store.sources() == {store.anchor("jp-c2"): "jp-c1"}
    assert store.source_of("jp-c1") is None
    store.set_note(refs.NOTES_SOURCE, "jp-c2", None, "remove")
    assert store.note(refs.NOTES_SOURCE, "jp-c2") is None
    assert store.sources() == {}


def test_sources_ignore_notes_that_are_not_ids(store: Store) -> None:
    store.set_note(refs.NOTES_SOURCE, "jp-c3", "../../HEAD\n", "bad")
    store.set_note(refs.NOTES_SOURCE, "jp-c4", "\n", "empty")
    assert store.source_of("jp-c3") is None and store.source_of("jp-c4") is None
    assert store.sources() == {}


def test_update_retries_when_another_writer_moves_the_notes_ref(store: Store, path: Path) -> None:
    other = Store(path)
    calls: list[int] = []
    target = store.anchor("jp-c1")

    def change(current: dict[str, str]) -> dict[str, str | None]:
        calls.append(len(current))
        if len(calls) == 1:  # another process writes its note right now
            other.set_note(refs.NOTES_SOURCE, "jp-c9", "jp-c8\n", "other")
        return {target: "jp-c7\n"}

    notes.update(store.repo, refs.NOTES_SOURCE, change, signature(), "mine")
    assert calls == [0, 1], "the change was computed again on the moved ref"
    assert store.source_of("jp-c1") == "jp-c7"
    assert store.source_of("jp-c9") == "jp-c8", "the other writer's note survived"
    log = git(path, "log", "--format=%s", refs.NOTES_SOURCE).split("\n")
    assert log[:2] == ["mine", "other"]


def test_fan_out_trees_written_by_git_are_read_and_kept(store: Store) -> None:
    repo = store.repo
    anchor = store.anchor("jp-c5")
    blob = repo.create_blob(b"jp-c4\n")
    inner = repo.TreeBuilder()
    inner.insert(anchor[2:], blob, pygit2.GIT_FILEMODE_BLOB)
    outer = repo.TreeBuilder()
    outer.insert(anchor[:2], inner.write(), pygit2.GIT_FILEMODE_TREE)
    repo.create_commit(refs.NOTES_SOURCE, signature(), signature(), "fan-out", outer.write(), [])
    assert store.source_of("jp-c5") == "jp-c4"
    assert store.sources() == {anchor: "jp-c4"}
    store.set_note(refs.NOTES_SOURCE, "jp-c6", "jp-c4\n", "flat one")
    assert store.source_of("jp-c5") == "jp-c4" and store.source_of("jp-c6") == "jp-c4"


def test_metadata_newest_value_wins_and_none_unsets(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([1000.0, 1001.0, 1002.0])
    monkeypatch.setattr("gitstore.store.time.time", lambda: next(clock))
    store.set_meta("jp-c1", {"title": "First", "pinned_at": "2026-01-01T00:00:00.000000Z"}, "a")
    store.set_meta("jp-c1", {"title": "Second"}, "b")
    store.set_meta("jp-c1", {"pinned_at": None}, "c")
    assert store.meta("jp-c1") == {"title": "Second"}
    lines = [json.loads(line) for line in (store.note(refs.NOTES_META, "jp-c1") or "").splitlines()]
    assert [(x["k"], x["t"]) for x in lines] == [
        ("title", 1000000),
        ("pinned_at", 1000000),
        ("title", 1001000),
        ("pinned_at", 1002000),
    ]
    assert {x["m"] for x in lines} == {store.machine}
    assert store.meta("jp-c2") == {}


def test_the_later_of_two_writes_in_one_millisecond_wins(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gitstore.store.time.time", lambda: 1000.0)
    store.set_meta("jp-c1", {"title": "Older"}, "a")
    store.set_meta("jp-c1", {"title": "Newer"}, "b")
    assert store.meta("jp-c1")["title"] == "Newer"


def test_metadata_from_two_machines_merges_by_union(tmp_path: Path) -> None:
    here = "\n".join(
        [
            notes.meta_line("title", "Laptop title", 2000, "aaaa"),
            notes.meta_line("pinned_at", "2026-01-02T00:00:00.000000Z", 1000, "aaaa"),
        ]
    )
    there = "\n".join(
        [
            notes.meta_line("title", "Desktop title", 1500, "bbbb"),
            notes.meta_line("labels", {"area": "cli"}, 1700, "bbbb"),
            notes.meta_line("pinned_at", None, 3000, "bbbb"),
        ]
    )
    merged = notes.union(here, there)
    assert merged == notes.union(there, here), "the union does not depend on the order"
    assert merged.endswith("\n") and len(merged.splitlines()) == 5
    assert notes.union(merged, here) == merged, "idempotent"
    assert notes.meta_values(merged) == {"title": "Laptop title", "labels": {"area": "cli"}}
    tie = notes.union(
        notes.meta_line("title", "from aaaa", 5000, "aaaa"),
        notes.meta_line("title", "from bbbb", 5000, "bbbb"),
    )
    assert notes.meta_values(tie)["title"] == "from bbbb", "ties go to the larger machine id"
    assert notes.meta_values("garbage\n{}\n" + notes.meta_line("k", 1, 1, "m")) == {"k": 1}
    assert notes.meta_values(None) == {}


def test_git_merges_metadata_notes_by_union(tmp_path: Path) -> None:
    path = tmp_path / "s.git"
    init_bare(path)
    assert git(path, "config", "notes.meta.mergeStrategy").strip() == "cat_sort_uniq"
    machine = git(path, "config", "jp.machine").strip()
    assert machine and Store(path).machine == machine


def test_long_metadata_notes_are_compacted_to_the_newest_line_per_key(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = iter(float(1000 + i) for i in range(100))
    monkeypatch.setattr("gitstore.store.time.time", lambda: next(ticks))
    for n in range(30):
        store.set_meta("jp-c1", {"title": f"title {n}"}, "edit")
    store.set_meta("jp-c1", {"pinned_at": "2026-01-01T00:00:00.000000Z"}, "pin")
    lines = (store.note(refs.NOTES_META, "jp-c1") or "").splitlines()
    assert len(lines) <= 21
    assert store.meta("jp-c1") == {"title": "title 29", "pinned_at": "2026-01-01T00:00:00.000000Z"}
    text = "".join(notes.meta_line("k", n, n, "m") + "\n" for n in range(25))
    assert notes.compact_meta(text) == notes.meta_line("k", 24, 24, "m") + "\n"
    assert notes.compact_meta("short\n") == "short\n"


def test_the_first_note_logs_its_reason(store: Store, path: Path) -> None:
    store.set_meta("jp-c1", {"title": "T"}, "jp conversation edit jp-c1")
    assert git(path, "reflog", "show", "--format=%gs", refs.NOTES_META).splitlines() == [
        "jp conversation edit jp-c1"
    ]


def test_every_notes_reflog_entry_starts_with_the_command(store: Store, path: Path) -> None:
    store.set_meta("jp-c1", {"title": "T"}, "jp conversation edit jp-c1")
    store.set_meta("jp-c1", {"title": "U"}, "jp conversation edit jp-c1 again")
    log = git(path, "reflog", "show", "--format=%gs", refs.NOTES_META).splitlines()
    assert log == ["jp conversation edit jp-c1 again", "jp conversation edit jp-c1"]
