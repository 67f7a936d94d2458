"""The journal and the refs it names fetched in a repository beside the store
(``gitstore.sync.beside``): the same copies as a fetch into the store, the same
refusals, nothing left behind, and nothing lost to git's gc beside it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gitstore.errors import SyncError
from gitstore.git.refs import files as refread
from gitstore.sync import beside, fetch, journal, remotes
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import GitCli
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
INCOMING = remotes.tracking_prefix("origin") + journal.INCOMING
COPY = remotes.tracking_prefix("origin") + journal.COPY


def git(gitdir: Path, *args: str, input: str | None = None) -> str:
    assert GIT is not None
    done = subprocess.run(
        [GIT, "--git-dir", str(gitdir), *args], capture_output=True, text=True, input=input
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def pair(tmp_path: Path) -> tuple[Syncer, Syncer, Path, Path]:
    """Laptop and desktop sharing a bare remote, one conversation pulled; and the log
    of every git the desktop starts."""
    assert GIT is not None
    remote = tmp_path / "remote.git"
    subprocess.run([GIT, "init", "--bare", "-q", str(remote)], check=True)
    counting, log = counting_git(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    laptop = machine(tmp_path, "laptop", str(remote), GIT, env)
    laptop.here.log.create("jp-c1", [start("jp-c1")], None, "test")
    push(laptop)
    desktop = machine(tmp_path, "desktop", str(remote), counting, env)
    assert {o.id for o in desktop.pull() if o.action == "created"} == {"jp-c1"}
    return laptop, desktop, remote, log


def more(laptop: Syncer, cid: str) -> None:
    tip = laptop.here.refs.require(cid).tip
    event = {"type": "chat_request", "timestamp": "2026-01-05T09:30:00Z", "content": "more"}
    laptop.here.log.append(cid, [event], tip, "test")
    push(laptop)


def leftovers(gitdir: Path) -> list[str]:
    side = sorted(p.name for p in (gitdir / "jp").glob("fetch-*"))
    return side + sorted(p.name for p in (gitdir / "objects" / "pack").glob("*.keep"))


def test_the_journal_and_what_it_names_come_through_a_repository_beside_the_store(
    tmp_path: Path,
) -> None:
    laptop, desktop, remote, log = pair(tmp_path)
    gitdir = desktop.here.place.gitdir
    more(laptop, "jp-c1")
    log.unlink()
    assert [o.id for o in desktop.pull() if o.kind == "conversation"] == ["jp-c1"]
    fetches = [c for c in calls(log) if " fetch " in c]
    assert len(fetches) == 2 and all("/jp/fetch-" in c for c in fetches), calls(log)
    assert "refs/jp/journal*" in fetches[0] and "refs/conversations/jp-c1*" in fetches[1]
    assert git(gitdir, "rev-parse", COPY) == git(remote, "rev-parse", journal.REMOTE_REF)
    assert desktop.here.refs.require("jp-c1").tip == laptop.here.refs.require("jp-c1").tip
    assert leftovers(gitdir) == []
    git(gitdir, "fsck", "--strict", "--no-dangling")


def test_a_remote_that_lost_its_journal_prunes_the_incoming_copy(tmp_path: Path) -> None:
    _, desktop, remote, _ = pair(tmp_path)
    gitdir = desktop.here.place.gitdir
    tip = git(gitdir, "rev-parse", COPY)
    git(gitdir, "update-ref", INCOMING, tip)
    git(gitdir, "update-ref", INCOMING + "-old", tip)
    fetch.fetch_journal(desktop.transport, "origin", gitdir)
    assert git(gitdir, "rev-parse", INCOMING) == git(remote, "rev-parse", journal.REMOTE_REF)
    assert INCOMING + "-old" not in refread.matching_refs(gitdir, [INCOMING + "*"])  # type: ignore[operator]
    git(remote, "update-ref", "-d", journal.REMOTE_REF)
    fetch.fetch_journal(desktop.transport, "origin", gitdir)
    assert refread.matching_refs(gitdir, [INCOMING + "*"]) == {}
    assert leftovers(gitdir) == []


def test_a_malformed_journal_is_refused_and_nothing_of_it_stays(tmp_path: Path) -> None:
    _, desktop, remote, _ = pair(tmp_path)
    gitdir = desktop.here.place.gitdir
    bad = git(remote, "hash-object", "-t", "commit", "--literally", "-w", "--stdin",
              input="tree 0000\nauthor x\n\nnot a commit\n")  # fmt: skip
    (remote / journal.REMOTE_REF).write_text(bad + "\n")  # git's update-ref would refuse it
    before = sorted(p.name for p in (gitdir / "objects" / "pack").iterdir())
    with pytest.raises(SyncError):
        fetch.fetch_journal(desktop.transport, "origin", gitdir)
    assert refread.matching_refs(gitdir, [INCOMING + "*"]) == {}
    assert sorted(p.name for p in (gitdir / "objects" / "pack").iterdir()) == before
    assert leftovers(gitdir) == []


def test_what_a_killed_journal_fetch_left_is_cleared(tmp_path: Path) -> None:
    laptop, desktop, _, _ = pair(tmp_path)
    gitdir = desktop.here.place.gitdir
    side = beside.folder(gitdir, "origin")
    (side / "objects" / "pack").mkdir(parents=True)
    (side / "objects" / "pack" / "pack-junk.pack").write_bytes(b"half a pack")
    keep = gitdir / "objects" / "pack" / "pack-0123.keep"
    keep.write_text(beside.mark("origin"))
    theirs = gitdir / "objects" / "pack" / "pack-4567.keep"
    theirs.write_text("someone else's\n")
    more(laptop, "jp-c1")
    assert [o.id for o in desktop.pull() if o.kind == "conversation"] == ["jp-c1"]
    assert leftovers(gitdir) == ["pack-4567.keep"]


def test_gc_beside_journal_fetches_loses_nothing(tmp_path: Path) -> None:
    laptop, desktop, _, _ = pair(tmp_path)
    gitdir = desktop.here.place.gitdir
    with pruning(gitdir):
        for _ in range(6):
            more(laptop, "jp-c1")
            desktop.pull()
    assert desktop.here.refs.require("jp-c1").tip == laptop.here.refs.require("jp-c1").tip
    git(gitdir, "fsck", "--strict", "--no-dangling")
    assert git(gitdir, "cat-file", "-t", COPY) == "commit"


def test_a_store_named_by_a_relative_path_fetches_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    laptop, desktop, remote, log = pair(tmp_path)
    more(laptop, "jp-c1")
    monkeypatch.chdir(tmp_path)
    transport = GitCli(desktop.transport.git, Path("desktop"), desktop.transport.environ,
                       desktop.here.place.repo)  # fmt: skip
    log.unlink()
    fetch.fetch_journal(transport, "origin", Path("desktop"))
    fetches = [c for c in calls(log) if " fetch " in c]  # one: none again in the store
    assert len(fetches) == 1 and fetches[0].startswith("--git-dir desktop/jp/fetch-"), fetches
    gitdir = tmp_path / "desktop"
    assert git(gitdir, "rev-parse", INCOMING) == git(remote, "rev-parse", journal.REMOTE_REF)
    assert leftovers(gitdir) == []


def test_a_remote_out_of_reach_is_asked_once(tmp_path: Path) -> None:
    """git's refusal beside the store is the answer: not a second fetch in the store
    (an unreachable remote would cost its timeout twice)."""
    _, desktop, remote, log = pair(tmp_path)
    gitdir = desktop.here.place.gitdir
    remote.rename(tmp_path / "gone.git")
    log.unlink()
    with pytest.raises(SyncError):
        fetch.fetch_journal(desktop.transport, "origin", gitdir)
    fetches = [c for c in calls(log) if " fetch " in c]
    assert len(fetches) == 1 and "/jp/fetch-" in fetches[0], fetches
    assert leftovers(gitdir) == []


def test_a_big_stores_journal_copies_are_written_by_one_git(tmp_path: Path) -> None:
    """libgit2 parses all of packed-refs for each ref it writes: past ``beside.SMALL``
    the copies a pull moves go through one ``git update-ref`` instead."""
    laptop, desktop, remote, log = pair(tmp_path)
    gitdir = desktop.here.place.gitdir
    packed_big(gitdir, git(gitdir, "rev-parse", COPY))
    assert (gitdir / "packed-refs").stat().st_size > beside.SMALL
    more(laptop, "jp-c1")
    log.unlink()
    assert [o.id for o in desktop.pull() if o.kind == "conversation"] == ["jp-c1"]
    # the journal's incoming copy, jp-c1's copy, then the journal's copy moved on
    writes = [c for c in calls(log) if "update-ref --stdin" in c]
    assert len(writes) == 3, calls(log)
    assert git(gitdir, "rev-parse", COPY) == git(remote, "rev-parse", journal.REMOTE_REF)
    assert INCOMING not in refread.list_refs(gitdir, [INCOMING.rsplit("/", 1)[0] + "/"])
    git(gitdir, "fsck", "--strict", "--no-dangling")


def test_a_pull_offers_the_copies_as_had_not_their_history(tmp_path: Path) -> None:
    """The remote's refs move on from the copies here: each copy is offered once, not
    walked down (16 commits to a round, each read by the remote); a journal of 20
    entries and a conversation of 21 commits cost one have each."""
    laptop, desktop, remote, log = pair(tmp_path)
    for _ in range(20):
        more(laptop, "jp-c1")
    desktop.pull()
    more(laptop, "jp-c1")
    trace = tmp_path / "packets"
    assert isinstance(desktop.transport, GitCli) and desktop.transport.environ is not None
    desktop.transport.environ["GIT_TRACE_PACKET"] = str(trace)
    desktop.transport._envs.clear()
    assert [o.id for o in desktop.pull() if o.kind == "conversation"] == ["jp-c1"]
    sent = trace.read_text().splitlines()
    haves = [line for line in sent if "fetch> have " in line]
    # the journal's copy; then the conversation's copy, the journal's and the journal as fetched
    assert len(haves) <= 4, haves
    assert git(desktop.here.place.gitdir, "rev-parse", "refs/conversations/jp-c1") == git(
        remote, "rev-parse", "refs/conversations/jp-c1"
    )
    assert leftovers(desktop.here.place.gitdir) == []
