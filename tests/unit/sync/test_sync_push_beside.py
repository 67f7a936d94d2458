"""A push of a few refs sent from a repository beside the store
(``gitstore.git.sidegit``): git reads none of the store's refs, the remote gets
the same refs and the same journal entry, a remote's own push settings still
apply, a rejection is still reported, and nothing is left behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gitstore.errors import EnvironmentFault
from gitstore.git import sidegit
from gitstore.sync import beside, journal
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from tests.unit.sync.test_sync_processes import (
    GIT,
    calls,
    counting_git,
    machine,
    packed_big,
    pruning,
    start,
)

pytestmark = pytest.mark.skipif(GIT is None, reason="these run git")


def git(gitdir: Path, *args: str) -> str:
    assert GIT is not None
    done = subprocess.run([GIT, "--git-dir", str(gitdir), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def laptop_of(tmp_path: Path, name: str = "laptop") -> tuple[Syncer, Path, Path]:
    """A store of a few conversations pushed to a bare remote; the log of its gits."""
    assert GIT is not None
    remote = tmp_path / "remote.git"
    subprocess.run([GIT, "init", "--bare", "-q", str(remote)], check=True)
    counting, log = counting_git(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    laptop = machine(tmp_path, name, str(remote), counting, env)
    for n in range(1, 4):
        laptop.here.log.create(f"jp-c{n}", [start(f"jp-c{n}")], None, "test")
    push(laptop)
    return laptop, remote, log


def more(laptop: Syncer, cid: str) -> str:
    tip = laptop.here.refs.require(cid).tip
    event = {"type": "chat_request", "timestamp": "2026-01-05T09:30:00Z", "content": "more"}
    return laptop.here.log.append(cid, [event], tip, "test")


def sides(gitdir: Path) -> list[str]:
    return sorted(p.name for p in (gitdir / "jp").glob("push-*"))


def test_a_push_of_a_few_is_sent_from_beside_the_store(tmp_path: Path) -> None:
    laptop, remote, log = laptop_of(tmp_path)
    gitdir = laptop.here.place.gitdir
    tip = more(laptop, "jp-c2")
    refs_before = git(gitdir, "for-each-ref")
    log.unlink()
    assert [(o.id, o.action) for o in push(laptop) if o.kind == "conversation"] == [
        ("jp-c2", "fast-forwarded")
    ]
    pushes = [c for c in calls(log) if " push " in c]
    assert len(pushes) == 1 and "/jp/push-" in pushes[0], calls(log)
    assert git(remote, "rev-parse", "refs/conversations/jp-c2") == tip
    assert git(remote, "cat-file", "-t", journal.REMOTE_REF) == "commit"
    # the store's refs: the copy of what moved, and nothing git wrote of its own
    after = set(git(gitdir, "for-each-ref").splitlines()) - set(refs_before.splitlines())
    assert {line.split("\t")[1] for line in after} == {
        "refs/jp-remotes/origin/conversations/jp-c2",
        "refs/jp-remotes/origin/jp/journal",
    }
    assert sides(gitdir) == []
    git(remote, "fsck", "--strict", "--no-dangling")


def test_a_remote_with_a_push_url_of_its_own_is_pushed_there_from_beside(
    tmp_path: Path,
) -> None:
    """The side repository reads the store's configuration: ``pushurl`` still wins."""
    laptop, remote, log = laptop_of(tmp_path)
    assert GIT is not None
    other = tmp_path / "other.git"
    subprocess.run([GIT, "clone", "--mirror", "-q", str(remote), str(other)], check=True)
    git(laptop.here.place.gitdir, "config", "remote.origin.pushurl", str(other))
    tip = more(laptop, "jp-c1")
    log.unlink()
    push(laptop)
    assert any("/jp/push-" in c and " push " in c for c in calls(log)), calls(log)
    assert git(other, "rev-parse", "refs/conversations/jp-c1") == tip
    assert git(remote, "rev-parse", "refs/conversations/jp-c1") != tip


def test_a_rejected_push_from_beside_is_reported_with_the_remotes_words(tmp_path: Path) -> None:
    laptop, remote, _ = laptop_of(tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = git(remote, "rev-parse", "refs/conversations/jp-c3")
    more(laptop, "jp-c3")
    outcomes = [o for o in push(laptop) if o.kind == "conversation"]
    assert [o.action for o in outcomes] == ["rejected"]
    assert "no pushes today" in (outcomes[0].detail or "")
    assert git(remote, "rev-parse", "refs/conversations/jp-c3") == before
    assert sides(laptop.here.place.gitdir) == []


def test_what_a_killed_push_left_beside_is_cleared(tmp_path: Path) -> None:
    laptop, remote, _ = laptop_of(tmp_path)
    gitdir = laptop.here.place.gitdir
    side = sidegit.folder(gitdir, "push", "origin")
    (side / "objects" / "pack").mkdir(parents=True)
    (side / "objects" / "pack" / "pack-junk.pack").write_bytes(b"half a pack")
    (side / "refs" / "heads").mkdir(parents=True)
    (side / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    tip = more(laptop, "jp-c1")
    push(laptop)
    assert git(remote, "rev-parse", "refs/conversations/jp-c1") == tip
    assert sides(gitdir) == []


def test_a_store_a_side_repository_cannot_read_is_pushed_from_itself(tmp_path: Path) -> None:
    """A store whose path cannot be written into a configuration: the push runs in
    the store, as before."""
    laptop, remote, log = laptop_of(tmp_path, 'odd"laptop')
    tip = more(laptop, "jp-c1")
    log.unlink()
    push(laptop)
    pushes = [c for c in calls(log) if " push " in c]
    assert pushes and not any("/jp/push-" in c for c in pushes), pushes
    assert git(remote, "rev-parse", "refs/conversations/jp-c1") == tip


def test_gc_beside_pushes_from_beside_loses_nothing(tmp_path: Path) -> None:
    """git's gc pruning beside every push: a push that says it sent a conversation
    did send it, and once gc stops the next push sends whatever is left."""
    laptop, remote, _ = laptop_of(tmp_path)
    gitdir = laptop.here.place.gitdir
    with pruning(gitdir):
        for _ in range(6):
            try:
                tip = more(laptop, "jp-c2")
            except EnvironmentFault:  # the append itself lost to the prune, and said so
                continue
            said = [o for o in push(laptop) if o.id == "jp-c2"]
            if said and said[0].action == "fast-forwarded":
                assert git(remote, "rev-parse", "refs/conversations/jp-c2") == tip
    tip = laptop.here.refs.require("jp-c2").tip
    push(laptop)
    assert git(remote, "rev-parse", "refs/conversations/jp-c2") == tip
    git(remote, "fsck", "--strict", "--no-dangling")
    git(gitdir, "fsck", "--strict", "--no-dangling")


def test_a_push_that_read_only_what_moved_still_counts_the_whole_remote(tmp_path: Path) -> None:
    """The count of the remote's conversations a push records (which tells later
    pulls to trust the journal) is the count kept, moved by what this push made."""
    laptop, remote, _ = laptop_of(tmp_path)
    gitdir = laptop.here.place.gitdir
    push(laptop)  # a pull through the journal, then nothing to send
    assert journal.refs_at_reconcile(gitdir, "origin") == 3
    laptop.here.log.create("jp-c4", [start("jp-c4")], None, "test")
    more(laptop, "jp-c1")
    assert {(o.id, o.action) for o in push(laptop) if o.kind == "conversation"} == {
        ("jp-c4", "created"),
        ("jp-c1", "fast-forwarded"),
    }
    assert laptop.partial, "the push read every copy, not only those of what moved"
    assert journal.refs_at_reconcile(gitdir, "origin") == 4
    assert len(git(remote, "for-each-ref", "refs/conversations/").splitlines()) == 4


def test_a_big_stores_copies_after_a_push_are_written_by_one_git(tmp_path: Path) -> None:
    """libgit2 parses all of packed-refs before it writes a ref (90 ms at 100,000
    conversations and their copies): past ``beside.SMALL`` the copies a push
    records go through one ``git update-ref``, as a pull's do."""
    laptop, remote, log = laptop_of(tmp_path)
    gitdir = laptop.here.place.gitdir
    packed_big(gitdir, git(gitdir, "rev-parse", "refs/conversations/jp-c1"))
    assert (gitdir / "packed-refs").stat().st_size > beside.SMALL
    tips = [more(laptop, cid) for cid in ("jp-c1", "jp-c2")]
    log.unlink()
    said = {o.id: o.action for o in push(laptop)}
    assert said == {"jp-c1": "fast-forwarded", "jp-c2": "fast-forwarded"}, said
    ran = calls(log)
    sent = max(n for n, c in enumerate(ran) if " push " in c)
    writes = [c for c in ran[sent:] if "update-ref --stdin" in c]
    assert len(writes) == 1, ran  # the two copies and the journal's, at once
    copies = "refs/jp-remotes/origin/conversations/"
    assert [git(gitdir, "rev-parse", copies + cid) for cid in ("jp-c1", "jp-c2")] == tips
    assert git(gitdir, "rev-parse", f"refs/jp-remotes/origin/{journal.COPY}") == git(
        remote, "rev-parse", journal.REMOTE_REF
    )
    git(gitdir, "fsck", "--strict", "--no-dangling")
