"""Small parts of sync: git's push report, remote config, stale lock files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pygit2
import pytest

from gitstore.errors import SyncError
from gitstore.git.command import RefResult, parse_porcelain
from gitstore.sync import lock as synclock
from gitstore.sync import remotes

PORCELAIN = """To /tmp/remote.git
*\tabc123:refs/conversations/jp-c1\t[new reference]
 \trefs/jp-push/o/conversations/jp-c2:refs/conversations/jp-c2\t1111111..2222222
-\t:refs/conversations/jp-c3\t[deleted]
=\trefs/notes/meta:refs/notes/meta\t[up to date]
!\tdef456:refs/conversations/jp-c4\t[rejected] (fetch first)
!\t:refs/conversations/jp-c5\t[rejected] (stale info)
!\tdef456:refs/conversations/jp-c6\t[remote rejected] (hook declined)
Done
"""


def test_parse_porcelain() -> None:
    results = {r.ref: r for r in parse_porcelain(PORCELAIN)}
    assert set(results) == {f"refs/conversations/jp-c{n}" for n in range(1, 7)} | {
        "refs/notes/meta"
    }
    assert [n for n in range(1, 7) if results[f"refs/conversations/jp-c{n}"].ok] == [1, 2, 3]
    assert results["refs/notes/meta"].ok
    assert results["refs/conversations/jp-c4"].lost_race
    assert results["refs/conversations/jp-c5"].lost_race
    assert not results["refs/conversations/jp-c6"].lost_race
    assert not RefResult("x", True, "[new reference]").lost_race


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "store.git"), bare=True)


def test_remote_add_writes_jp_refspecs(repo: pygit2.Repository) -> None:
    assert remotes.add(repo, "origin", "/srv/x.git") == "created"
    info = remotes.find(repo, "origin")
    assert info is not None and info.configured and not info.foreign
    assert set(info.push) == set(remotes.PUSH_REFSPECS)
    assert "+refs/notes/meta*:refs/jp-remotes/origin/notes/meta*" in info.fetch
    assert "+refs/notes/source*:refs/jp-remotes/origin/notes/source*" in info.fetch
    assert not [s for s in info.fetch + info.push if s.startswith(("refs/notes/*", "+refs/notes/*"))]
    assert remotes.add(repo, "origin", "/srv/x.git") == "unchanged"
    with pytest.raises(SyncError, match="already exists"):
        remotes.add(repo, "origin", "/srv/other.git")


def test_existing_remote_gets_fetch_refspecs_only_and_keeps_its_own(
    repo: pygit2.Repository,
) -> None:
    repo.remotes.create("origin", "/srv/code.git")  # git's default fetch refspec
    assert remotes.add(repo, "origin", "/srv/code.git") == "configured"
    info = remotes.find(repo, "origin")
    assert info is not None and info.configured and info.foreign and info.push == ()
    tree = repo.TreeBuilder().write()
    sig = pygit2.Signature("t", "t@example.invalid")
    commit = repo.create_commit(None, sig, sig, "m", tree, [])
    repo.create_reference_direct("refs/jp-remotes/origin/conversations/jp-c1", commit, False)
    assert remotes.remove(repo, "origin") == "unconfigured"
    info = remotes.find(repo, "origin")
    assert info is not None and info.fetch == ("+refs/heads/*:refs/remotes/origin/*",)
    assert not [r for r in repo.listall_references() if r.startswith("refs/jp-remotes/")]


def test_remove_a_remote_jp_made(repo: pygit2.Repository) -> None:
    remotes.add(repo, "backup", "/srv/b.git")
    assert remotes.remove(repo, "backup") == "removed"
    assert remotes.find(repo, "backup") is None
    with pytest.raises(SyncError, match="no such remote"):
        remotes.remove(repo, "backup")


@pytest.mark.parametrize("name", ["", "../x", "a/b", "x.lock", "a..b", "-x", "a b"])
def test_remote_names_are_checked(name: str) -> None:
    with pytest.raises(SyncError):
        remotes.check_name(name)


def test_clear_stale_respects_age(tmp_path: Path) -> None:
    space = tmp_path / "refs" / "jp-remotes" / "o" / "conversations"
    space.mkdir(parents=True)
    old, new, ref = space / "jp-c1.lock", space / "jp-c2.lock", space / "jp-c3"
    for path in (old, new, ref):
        path.write_text("")
    past = time.time() - 120
    os.utime(old, (past, past))
    assert synclock.clear_stale(tmp_path, "refs/jp-remotes/o", 60) == 1
    assert not old.exists() and new.exists() and ref.exists()
    assert synclock.clear_stale(tmp_path, "refs/jp-remotes/o") == 1
    assert synclock.clear_stale(tmp_path, "refs/jp-remotes/none") == 0


def test_one_sync_at_a_time(tmp_path: Path) -> None:
    with synclock.exclusive(tmp_path, "o"):
        pid = os.fork()
        if pid == 0:  # a second process gives up with a clear error
            try:
                with synclock.exclusive(tmp_path, "o", wait=0.2):
                    os._exit(1)
            except SyncError:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
