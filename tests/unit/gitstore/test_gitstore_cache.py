"""The event cache: a disposable copy of what git holds, never a second truth."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitstore import cache as cache_module
from gitstore.store import Store
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
    store.create(cid, events, None, "create")


def cache_files(path: Path) -> list[Path]:
    return sorted((path / "jp").glob("cache.sqlite*"))


def test_load_from_the_cache_equals_load_from_git(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 40)
    first = store.load("jp-c1")
    again = Store(path).load("jp-c1")
    assert (first.events, first.commits) == from_git(path, "jp-c1")
    assert (again.events, again.commits) == from_git(path, "jp-c1")


def test_snapshots_of_long_chains_read_back_the_same(
    store: Store, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "SNAPSHOT_EVERY", 7)
    long_conversation(store, "jp-c1", 10)
    tip = store.require("jp-c1").tip
    for _ in range(3):  # grows a snapshot, then reads from it
        conv = Store(path).load("jp-c1")
        assert (conv.events, conv.commits) == from_git(path, "jp-c1")
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    assert db.execute("SELECT count(*) FROM snapshots").fetchone()[0] >= 1
    db.close()
    store.append("jp-c1", [request("after the snapshot", 200), answer("ok", 201)], tip, "more")
    conv = Store(path).load("jp-c1")
    assert (conv.events, conv.commits) == from_git(path, "jp-c1")
    # a fork shares the cached prefix and reads its own tail
    store.create("jp-c2", [start("jp-c2")], tip, "fork")
    fork = Store(path).load("jp-c2")
    assert (fork.events, fork.commits) == from_git(path, "jp-c2")


def test_deleting_the_cache_loses_nothing(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 12)
    before = store.load("jp-c1")
    store.cache.close()
    files = cache_files(path)
    assert files, "the cache lives inside the git directory"
    for file in files:
        file.unlink()
    fresh = Store(path)
    after = fresh.load("jp-c1")
    assert (after.events, after.commits) == (before.events, before.commits)
    assert cache_files(path), "the cache is rebuilt"


def test_only_the_main_cache_file_deleted(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 12)
    before = store.load("jp-c1")
    (path / "jp" / "cache.sqlite").unlink()  # the WAL and index files stay behind
    after = Store(path).load("jp-c1")
    assert (after.events, after.commits) == (before.events, before.commits)


def test_a_damaged_cache_degrades_to_reading_git(store: Store, path: Path) -> None:
    long_conversation(store, "jp-c1", 5)
    truth = from_git(path, "jp-c1")
    store.load("jp-c1")
    db = sqlite3.connect(path / "jp" / "cache.sqlite")
    db.execute("UPDATE events SET json = '{broken' WHERE json LIKE '%Q3%'")
    db.commit()
    db.close()
    conv = Store(path).load("jp-c1")
    assert (conv.events, conv.commits) == truth
    store.cache.close()
    for file in cache_files(path):
        file.unlink()
    (path / "jp" / "cache.sqlite").write_text("this is not a database")
    conv = Store(path).load("jp-c1")
    assert (conv.events, conv.commits) == truth


def test_commits_made_with_plain_git_are_seen(store: Store, path: Path) -> None:
    tip = store.create("jp-c1", [start("jp-c1"), *turn(1)], None, "create")
    store.load("jp-c1")
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
    conv = store.load("jp-c1")
    assert conv.tip == commit and conv.events[-1] == event
    assert (conv.events, conv.commits) == from_git(path, "jp-c1")


def test_summaries_are_cached_per_tip(store: Store) -> None:
    store.cache.put_summaries({"a" * 40: {"turns": 3}})
    assert store.cache.summaries(["a" * 40, "b" * 40]) == {"a" * 40: {"turns": 3}}
    assert store.cache.summaries([]) == {}
