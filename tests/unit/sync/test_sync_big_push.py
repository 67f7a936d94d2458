"""A push of many refs: sent from the side repository, which holds them in its
``packed-refs`` (``git.sidegit``), the remote-tracking copies created in one step, a remote that is only a URL pushed to by URL (no copies
written by git), a journal entry cut into entries a reader takes, and the
remote's size counted so that the next push reads the journal."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pygit2
import pytest

from gitstore.git import refs, sidegit
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import created, journal, remotes, transport
from gitstore.sync.here import Here
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import choose
from tests.support.servers.fixtures import Remote, every_remote

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="a push of many refs goes through git")
COUNT = created.BULK_AT + 5
T = "2026-01-05T09:00:00Z"


def git(gitdir: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def refs_of(gitdir: Path, prefix: str) -> dict[str, str]:
    lines = git(gitdir, "for-each-ref", "--format=%(refname) %(objectname)", prefix).splitlines()
    return dict(line.split(" ") for line in lines)


def loose_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def machine(path: Path, url: str, journal_from: int = 0) -> tuple[Store, Syncer]:
    init_bare(path)
    store = Store(path)
    remotes.add(store.repo, "origin", url)
    syncer = Syncer(Here.of(store), "origin", choose(store.repo, GIT), journal_from=journal_from)
    return store, syncer


def fill(store: Store, count: int, first: int = 1) -> list[str]:
    cids = [f"jp-c{n}" for n in range(first, first + count)]
    for cid in cids:
        start = {"type": "conversation_start", "timestamp": T, "conversation_id": cid}
        store.log.create(cid, [start], None, "test")
    return cids


def add(store: Store, cid: str) -> None:
    event = {"type": "chat_request", "timestamp": T, "content": "more"}
    store.log.append(cid, [event], store.refs.require(cid).tip, "test")


@every_remote
def test_a_big_push_sends_everything_from_beside_and_leaves_no_loose_ref(
    tmp_path: Path, bare_remote: Remote
) -> None:
    store, syncer = machine(tmp_path / "laptop", bare_remote.url)
    cids = fill(store, COUNT)
    sent = [o for o in push(syncer) if o.direction == "push" and o.kind == "conversation"]
    assert sorted(o.id for o in sent) == sorted(cids) and {o.action for o in sent} == {"created"}
    there = refs_of(bare_remote.path, "refs/conversations/")
    assert there == {refs.live(c): store.refs.require(c).tip for c in cids}
    gitdir = store.gitdir
    assert list((gitdir / "jp").glob("push-*")) == []  # the side repository went
    # the copies say what the remote holds, all of them packed (git wrote none loose)
    copies = refs_of(gitdir, syncer.tracking + "conversations/")
    assert {n.replace(syncer.tracking, "refs/"): oid for n, oid in copies.items()} == there
    assert loose_files(gitdir / syncer.tracking / "conversations") == []
    git(gitdir, "fsck", "--no-dangling")
    assert git(gitdir, "pack-refs", "--all") == ""  # git takes the packed-refs we wrote


def test_refs_a_killed_push_left_beside_are_not_sent(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    store, syncer = machine(tmp_path / "laptop", str(remote))
    cids = fill(store, COUNT)
    tip = store.refs.require(cids[0]).tip
    side = sidegit.folder(store.gitdir, "push", "origin")
    sidegit.prepare(side, store.gitdir, {"refs/conversations/jp-c999999": tip})  # loose
    (side / "packed-refs").write_text(f"{tip} refs/conversations/jp-c888888\n")  # packed
    push(syncer)
    assert "refs/conversations/jp-c999999" not in refs_of(remote, "refs/")
    assert "refs/conversations/jp-c888888" not in refs_of(remote, "refs/")
    assert len(refs_of(remote, "refs/conversations/")) == COUNT
    assert not side.exists()


def test_a_push_too_big_for_one_entry_writes_several_and_a_reader_reconciles_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "MAX_NAMES", 3)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    a, sa = machine(tmp_path / "a", str(remote))
    b, sb = machine(tmp_path / "b", str(remote))
    fill(a, 1)
    push(sa)
    sb.pull()
    before = git(remote, "rev-parse", journal.REMOTE_REF).strip()
    cids = fill(a, 7, first=10)
    push(sa)
    entries = git(remote, "rev-list", f"{before}..{journal.REMOTE_REF}").split()
    assert len(entries) == 3
    named: set[str] = set()
    for entry in entries:
        body = git(remote, "log", "-1", "--format=%B", entry).partition("\n\n")[2]
        lines = [line for line in body.split("\n") if line]
        assert 0 < len(lines) <= 3
        named |= set(lines)
    assert {refs.live(c) for c in cids} <= named
    outcomes = sb.pull()
    assert sb.said == [] and not [o for o in outcomes if o.kind == "warning"]
    assert {o.id for o in outcomes if o.action == "created"} == set(cids)
    assert journal.pulls_since_reconcile(b.gitdir, "origin") == 0  # it reconciled


def test_after_a_first_push_the_next_one_reads_the_journal(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    store, syncer = machine(tmp_path / "laptop", str(remote), journal_from=COUNT)
    cids = fill(store, COUNT)
    push(syncer)  # the remote was empty: this push's pull listed it whole
    assert journal.refs_at_reconcile(store.gitdir, "origin") == COUNT
    add(store, cids[3])
    pulls = journal.pulls_since_reconcile(store.gitdir, "origin")
    sent = [o for o in push(syncer) if o.direction == "push"]
    assert [(o.id, o.action) for o in sent] == [(cids[3], "fast-forwarded")]
    assert journal.pulls_since_reconcile(store.gitdir, "origin") == pulls + 1  # no reconcile


def test_a_remote_jp_made_is_pushed_to_by_its_url_any_other_by_its_name(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "s.git"), bare=True)
    cases = {
        "plain": "/srv/jp.git",
        "ssh": "ssh://host/jp.git",
        "scp": "git@host:jp.git",
        "relative": "../jp.git",
        "pushurl": "/srv/jp.git",
        "twice": "/srv/jp.git",
    }
    for name, url in cases.items():
        remotes.add(repo, name, url)
    # jp refuses such a URL (tests/unit/sync/test_remote_urls.py); plain git writes it
    cases["dashed"] = "-oProxyCommand=x:y"
    repo.config["remote.dashed.url"] = cases["dashed"]
    for value in remotes.fetch_refspecs("dashed"):
        repo.config.set_multivar("remote.dashed.fetch", "^$", value)
    repo.config["remote.pushurl.pushurl"] = "/srv/other.git"
    repo.config.set_multivar("remote.twice.url", "^$", "/srv/mirror.git")
    targets = {name: transport.push_target(repo, name) for name in cases}
    assert targets == {
        "plain": "/srv/jp.git",
        "ssh": "ssh://host/jp.git",
        "scp": "git@host:jp.git",
        "relative": "relative",
        "dashed": "dashed",
        "pushurl": "pushurl",
        "twice": "twice",
    }
    assert transport.push_target(None, "plain") == "plain"


def test_a_store_whose_packed_refs_is_not_sorted_still_sends_exactly_what_moved(
    tmp_path: Path,
) -> None:
    """What differs cannot be told from the runs of an unsorted ``packed-refs``
    (``refs.files.differing``): every conversation is planned, and only what moved
    is sent."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    store, syncer = machine(tmp_path / "laptop", str(remote))
    cids = fill(store, 3)
    push(syncer)
    add(store, cids[1])
    git(store.gitdir, "pack-refs", "--all")
    packed = store.gitdir / "packed-refs"
    lines = [line for line in packed.read_text().splitlines() if not line.startswith("#")]
    packed.write_text("".join(line + "\n" for line in reversed(lines)))  # no "sorted" trait
    sent = [(o.id, o.action) for o in push(syncer) if o.direction == "push"]
    assert sent == [(cids[1], "fast-forwarded")]
    assert refs_of(remote, "refs/conversations/") == {
        refs.live(c): store.refs.require(c).tip for c in cids
    }
