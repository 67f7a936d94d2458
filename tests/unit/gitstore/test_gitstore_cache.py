"""The event cache: a disposable copy of what git holds, never a second truth."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitstore.cache import db as cache_module
from gitstore.errors import CorruptEvent
from gitstore.events.turns import turn_count, turn_indices
from gitstore.store.core import Store
from tests.unit.gitstore.builders import answer, at, request, start, turn


def from_git(path: Path, cid: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The chain read with pygit2 alone, root first."""
    repo = pygit2.Repository(str(path))
    commit = repo.lookup_reference(f"refs/conversations/{cid}").peel(pygit2.Commit)
    events, ids = [], []
    while True:
        events.append(json.loads(repo[commit.tree["event.json"].id].peel(pygit2.Blob).data))
        ids.append(str(commit.id))
        if not commit.parents:
            break
        commit = commit.parents[0]
    return events[::-1], ids[::-1]


def long_conversation(store: Store, cid: str, turns: int) -> None:
    events = [start(cid)]
    for n in range(turns):
        events += turn(n, n * 3)
    store.log.create(cid, events, None, "create")


def cache_files(path: Path) -> list[Path]:
    return sorted((path / "jp").glob("cache.sqlite*"))


def test_load_from_the_cache_equals_load_from_git(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 40)
    first = store.log.load("jp-c1")
    again = Store(path).log.load("jp-c1")
    assert (first.events, first.commits) == from_git(path, "jp-c1")
    assert (again.events, again.commits) == from_git(path, "jp-c1")


def test_segments_of_long_chains_read_back_the_same(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "SEGMENT", 7)
    long_conversation(store, "jp-c1", 10)
    tip = store.refs.require("jp-c1").tip
    for _ in range(3):  # cuts segments, then reads from them
        conv = Store(path).log.load("jp-c1")
        assert (conv.events, conv.commits) == from_git(path, "jp-c1")
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    counts = [r[0] for r in db.execute("SELECT n FROM segments ORDER BY start")]
    db.close()
    assert counts and set(counts) == {7}, "whole segments of 7 events from the root"
    store.log.append("jp-c1", [request("after the segments", 200), answer("ok", 201)], tip, "more")
    conv = Store(path).log.load("jp-c1")
    assert (conv.events, conv.commits) == from_git(path, "jp-c1")
    # a fork shares the cached segments and reads its own tail
    store.log.create("jp-c2", [start("jp-c2")], tip, "fork")
    fork = Store(path).log.load("jp-c2")
    assert (fork.events, fork.commits) == from_git(path, "jp-c2")


def test_a_view_reads_only_the_segments_asked_for(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "SEGMENT", 5)
    long_conversation(store, "jp-c1", 12)
    events, ids = from_git(path, "jp-c1")
    store.log.load("jp-c1")  # fills the cache and cuts the segments
    _, view = Store(path).log.view("jp-c1")
    assert len(view) == len(events)
    assert view.facts.turn_count() == turn_count(events)
    assert list(view.facts.indices()) == turn_indices(events)
    assert view.pages_read() == 0, "the facts come without reading events"
    assert view[7] == events[7] and view.commit(7) == ids[7]
    assert view[-1] == events[-1]
    assert view.pages_read() == 1
    assert list(view) == events
    assert view[3:9] == events[3:9]


def test_a_damaged_or_missing_segment_is_rebuilt_from_the_rows(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "SEGMENT", 5)
    long_conversation(store, "jp-c1", 12)
    truth = from_git(path, "jp-c1")
    store.log.load("jp-c1")
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    db.execute("UPDATE segments SET json = '[broken' WHERE start = 10")
    db.commit()
    conv = Store(path).log.load("jp-c1")
    assert (conv.events, conv.commits) == truth
    db.execute("DELETE FROM segments WHERE start = 5")  # the run above it loses its link
    db.commit()
    conv = Store(path).log.load("jp-c1")
    assert (conv.events, conv.commits) == truth
    _, view = Store(path).log.view("jp-c1")
    assert list(view) == truth[0]
    assert db.execute("SELECT count(*) FROM segments WHERE start = 5").fetchone()[0] == 1
    db.close()


def test_deleting_the_cache_loses_nothing(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 12)
    before = store.log.load("jp-c1")
    store.close()
    files = cache_files(path)
    assert files, "the cache lives inside the git directory"
    for file in files:
        file.unlink()
    fresh = Store(path)
    after = fresh.log.load("jp-c1")
    assert (after.events, after.commits) == (before.events, before.commits)
    assert cache_files(path), "the cache is rebuilt"


def test_only_the_main_cache_file_deleted(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 12)
    before = store.log.load("jp-c1")
    (path / "jp" / "cache.sqlite").unlink()  # the WAL and index files stay behind
    after = Store(path).log.load("jp-c1")
    assert (after.events, after.commits) == (before.events, before.commits)


def test_a_damaged_cache_degrades_to_reading_git(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 5)
    truth = from_git(path, "jp-c1")
    store.log.load("jp-c1")
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    db.execute("UPDATE events SET json = '{broken' WHERE json LIKE '%Q3%'")
    db.commit()
    db.close()
    conv = Store(path).log.load("jp-c1")
    assert (conv.events, conv.commits) == truth
    store.close()
    for file in cache_files(path):
        file.unlink()
    (path / "jp" / "cache.sqlite").write_text("this is not a database")
    conv = Store(path).log.load("jp-c1")
    assert (conv.events, conv.commits) == truth


def test_commits_made_with_plain_git_are_seen(store: Store, path: Path) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1"), *turn(1)], None, "create")
    store.log.load("jp-c1")
    event = {"type": "chat_request", "timestamp": at(30), "content": "written by plain git"}
    env = {"GIT_AUTHOR_NAME": "g", "GIT_AUTHOR_EMAIL": "g@x", "GIT_COMMITTER_NAME": "g",
           "GIT_COMMITTER_EMAIL": "g@x", "PATH": "/usr/bin:/bin"}

    def run(*args: str, input: str | None = None) -> str:
        return subprocess.run(["git", "--git-dir", str(path), *args], input=input, env=env,
                              capture_output=True, text=True, check=True).stdout.strip()

    blob = run("hash-object", "-w", "--stdin", input=json.dumps(event))
    tree = run("mktree", input=f"100644 blob {blob}\tevent.json\n")
    commit = run("commit-tree", tree, "-p", tip, "-m", "user: written by plain git")
    run("update-ref", "refs/conversations/jp-c1", commit, tip)
    conv = store.log.load("jp-c1")
    assert conv.tip == commit and conv.events[-1] == event
    assert (conv.events, conv.commits) == from_git(path, "jp-c1")


def test_summaries_are_cached_per_tip(store: Store) -> None:
    store.local.keep_summaries({"a" * 40: {"turns": 3}})
    assert store.local.summaries(["a" * 40, "b" * 40]) == {"a" * 40: {"turns": 3}}
    assert store.local.summaries([]) == {}


def cached_commits(path: Path) -> set[str]:
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    try:
        return {r[0] for r in db.execute("SELECT commit_id FROM events")}
    finally:
        db.close()


def test_prefetch_caches_many_chains_in_one_pass(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 6)
    base = store.refs.require("jp-c1").tip
    for n in range(2, 6):  # forks share jp-c1's history
        store.log.create(f"jp-c{n}", [start(f"jp-c{n}"), *turn(n, 100 + n)], base, "fork")
    store.close()
    for file in cache_files(path):
        file.unlink()
    fresh = Store(path)
    tips = [fresh.refs.require(f"jp-c{n}").tip for n in range(1, 6)]
    fresh.log.prefetch(tips)
    every = {c for n in range(1, 6) for c in from_git(path, f"jp-c{n}")[1]}
    assert cached_commits(path) == every
    for n in range(1, 6):
        conv = fresh.log.load(f"jp-c{n}")
        assert (conv.events, conv.commits) == from_git(path, f"jp-c{n}")


def test_prefetch_leaves_a_damaged_chain_to_read_chain(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 3)
    good = store.refs.require("jp-c1").tip
    repo = pygit2.Repository(str(path))
    sig = pygit2.Signature("x", "x@example.invalid")
    empty = repo.TreeBuilder().write()  # a commit whose tree has no event.json
    bad = repo.create_commit(None, sig, sig, "not an event", empty, [pygit2.Oid(hex=good)])
    store.close()
    for file in cache_files(path):
        file.unlink()
    fresh = Store(path)
    fresh.log.prefetch([str(bad), good])
    assert str(bad) not in cached_commits(path)
    assert set(from_git(path, "jp-c1")[1]) <= cached_commits(path)
    with pytest.raises(CorruptEvent):
        fresh.log.read_chain(str(bad))


def test_a_view_without_a_usable_cache_reads_git_once(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long_conversation(store, "jp-c1", 6)
    events, _ = from_git(path, "jp-c1")
    fresh = Store(path)
    monkeypatch.setattr(cache_module.Cache, "_conn", lambda _: None)  # as when SQLite cannot
    walks: list[str] = []
    real = fresh.log.read_run
    monkeypatch.setattr(fresh.log, "read_run", lambda *a: walks.append("walk") or real(*a))
    _, view = fresh.log.view("jp-c1")
    assert list(view) == events and view.facts.turn_count() == turn_count(events)
    assert walks == ["walk"]


def _reads(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commits ``store`` reads an event of from git, in order, as they are read."""
    read: list[str] = []
    real = store._ground.event_bytes
    monkeypatch.setattr(store._ground, "event_bytes", lambda c: read.append(str(c.id)) or real(c))
    return read


def _plain_git_events(path: Path, tip: str, count: int) -> str:
    """``count`` events committed on ``tip`` with git alone; the last commit."""
    env = {"GIT_AUTHOR_NAME": "g", "GIT_AUTHOR_EMAIL": "g@x", "GIT_COMMITTER_NAME": "g",
           "GIT_COMMITTER_EMAIL": "g@x", "PATH": "/usr/bin:/bin"}

    def run(*args: str, input: str | None = None) -> str:
        return subprocess.run(["git", "--git-dir", str(path), *args], input=input, env=env,
                              capture_output=True, text=True, check=True).stdout.strip()

    for n in range(count):
        event = {"type": "chat_request", "timestamp": at(40 + n), "content": f"plain {n}"}
        blob = run("hash-object", "-w", "--stdin", input=json.dumps(event))
        tree = run("mktree", input=f"100644 blob {blob}\tevent.json\n")
        tip = run("commit-tree", tree, "-p", tip, "-m", f"user: plain {n}")
    return tip


@pytest.mark.parametrize("above", [1, 3, 30])
def test_a_chain_the_cache_holds_below_is_read_from_git_only_above_it(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch, above: int
) -> None:
    long_conversation(store, "jp-c1", 40)
    store.log.load("jp-c1")  # the whole chain is in the cache
    old = store.refs.require("jp-c1").tip
    new = _plain_git_events(path, old, above)
    subprocess.run(["git", "--git-dir", str(path), "update-ref", "refs/conversations/jp-c1",
                    new, old], check=True)
    fresh = Store(path)
    read = _reads(fresh, monkeypatch)
    conv = fresh.log.load("jp-c1")
    assert (conv.events, conv.commits) == from_git(path, "jp-c1")
    assert sorted(read) == sorted(conv.commits[-above:])  # each new commit once, none below


def test_a_cold_load_reads_each_commit_once(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long_conversation(store, "jp-c1", 400)  # 1,201 commits: batches of 1, 4 ... 1,024
    for file in cache_files(path):
        file.unlink()
    fresh = Store(path)
    read = _reads(fresh, monkeypatch)
    conv = fresh.log.load("jp-c1")
    assert (conv.events, conv.commits) == from_git(path, "jp-c1")
    assert sorted(read) == sorted(conv.commits)


def test_a_new_commit_on_a_cached_chain_stops_at_its_parent_without_json_each(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An SQLite without ``json_each`` answers ``known`` with nothing: the parent is
    still asked directly, so one new event does not read the whole chain again."""
    long_conversation(store, "jp-c1", 40)
    store.log.load("jp-c1")
    old = store.refs.require("jp-c1").tip
    new = _plain_git_events(path, old, 1)
    subprocess.run(["git", "--git-dir", str(path), "update-ref", "refs/conversations/jp-c1",
                    new, old], check=True)
    monkeypatch.setattr(cache_module.Cache, "known", lambda self, commits: set())
    fresh = Store(path)
    read = _reads(fresh, monkeypatch)
    conv = fresh.log.load("jp-c1")
    assert (conv.events, conv.commits) == from_git(path, "jp-c1")
    assert read == [new]


def test_a_batch_writes_its_cache_rows_together_and_reads_see_them_before(
    store: Store, path: Path
) -> None:
    """Inside ``Log.batch`` the rows of every creation (and the values kept) wait for one
    transaction at the end; a read of the cache meanwhile finds them all the same."""
    assert store.local.value("a value", "v1") is None  # the cache file made
    with store.log.batch():
        for n in (1, 2):
            events = [start(f"jp-c{n}"), *turn(0, 0)]
            store.log.create(f"jp-c{n}", events, None, "c", packed=True)
        store.local.keep_value("a value", "v1", {"kept": True})
        other = sqlite3.connect(path / "jp" / "cache.sqlite")
        assert other.execute("SELECT count(*) FROM events").fetchone()[0] == 0  # not yet
        assert store.local.value("a value", "v1") == {"kept": True}  # read back all the same
        assert other.execute("SELECT count(*) FROM events").fetchone()[0] > 0  # the read wrote
    rows = other.execute("SELECT count(*) FROM events").fetchone()[0]
    assert rows == sum(len(from_git(path, f"jp-c{n}")[1]) for n in (1, 2))
    for n in (1, 2):
        loaded = Store(path).log.load(f"jp-c{n}")
        assert (loaded.events, loaded.commits) == from_git(path, f"jp-c{n}")
    other.close()
