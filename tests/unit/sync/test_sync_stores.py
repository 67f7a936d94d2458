"""Pull and push between two stores and a bare remote, in process, over both
transports (the git command line and the pygit2 fallback)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from gitstore.events import now_text
from gitstore.git import refs
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import remotes
from gitstore.sync.here import Here
from gitstore.sync.pull import Outcome, Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import choose
from tests.support.servers.fixtures import Remote, every_remote

GIT = shutil.which("git")
Make = Callable[[str], tuple[Store, Syncer]]


def start(cid: str) -> dict[str, object]:
    return {"type": "conversation_start", "timestamp": now_text(), "conversation_id": cid}


def say(text: str) -> dict[str, object]:
    return {"type": "chat_request", "timestamp": now_text(), "content": text}


def new(store: Store, cid: str, *texts: str) -> str:
    return store.log.create(cid, [start(cid), *(say(t) for t in texts)], None, "test")


def add(store: Store, cid: str, *texts: str) -> str:
    return store.log.append(cid, [say(t) for t in texts], store.refs.require(cid).tip, "test")


def texts(store: Store, cid: str) -> list[str]:
    events, _ = store.log.read_chain(store.refs.require(cid).tip)
    return [str(e["content"]) for e in events if e["type"] == "chat_request"]


def actions(outcomes: list[Outcome], direction: str = "pull") -> dict[str, str]:
    return {o.id: o.action for o in outcomes if o.direction == direction}


@pytest.fixture
def machine(tmp_path: Path, bare_remote: Remote) -> Make:
    """Stores that sync with ``bare_remote`` (a path; with ``@every_remote`` also over
    SSH and HTTP, where the git command line is the transport)."""
    if GIT is None:
        pytest.skip("no git executable")

    def make(name: str) -> tuple[Store, Syncer]:
        init_bare(tmp_path / name)
        store = Store(tmp_path / name)
        remotes.add(store.repo, "origin", bare_remote.url)
        transport = choose(store.repo, GIT)
        return store, Syncer(Here.of(store), "origin", transport)

    return make


@every_remote
def test_push_then_pull_copies_and_fast_forwards(machine: Make) -> None:
    a, sa = machine("a")
    b, sb = machine("b")
    new(a, "jp-c100", "one", "two")
    assert actions(push(sa), "push") == {"jp-c100": "created"}
    assert actions(sb.pull()) == {"jp-c100": "created"}
    add(b, "jp-c100", "three")
    push(sb)
    assert actions(sa.pull()) == {"jp-c100": "fast-forwarded"}
    assert texts(a, "jp-c100") == ["one", "two", "three"]
    assert sa.pull() == [] and actions(push(sa), "push") == {}


@every_remote
def test_divergence_forks_the_local_continuation(machine: Make) -> None:
    a, sa = machine("a")
    b, sb = machine("b")
    new(a, "jp-c100", "one")
    a.notes.set_meta("jp-c100", {"title": "shared"}, "test")
    push(sa)
    sb.pull()
    b.refs.set_active("jp-c100")
    add(a, "jp-c100", "from a")
    add(b, "jp-c100", "from b")
    push(sa)
    out = sb.pull()
    fork = next(o for o in out if o.id == "jp-c100")
    assert fork.action == "diverged" and fork.new_id
    assert texts(b, "jp-c100") == ["one", "from a"]
    assert texts(b, fork.new_id) == ["one", "from b"]
    assert b.refs.active() == fork.new_id
    assert b.notes.meta(fork.new_id)["diverged_from"] == "jp-c100"
    assert b.notes.meta(fork.new_id)["title"] == "shared"
    assert sb.pull() == []
    push(sb)
    assert actions(sa.pull()) == {fork.new_id: "created", refs.NOTES_META: "fast-forwarded"}


@every_remote
def test_collision_moves_the_local_conversation_to_a_new_id(machine: Make) -> None:
    a, sa = machine("a")
    b, sb = machine("b")
    new(a, "jp-c100", "made on a")
    new(b, "jp-c100", "made on b")
    push(sa)
    out = [o for o in push(sb) if o.id == "jp-c100"]
    assert out[0].action == "collision" and out[0].new_id
    assert texts(b, "jp-c100") == ["made on a"]
    assert texts(b, out[0].new_id) == ["made on b"]


@every_remote
def test_archive_travels_and_activity_unarchives(machine: Make) -> None:
    a, sa = machine("a")
    b, sb = machine("b")
    new(a, "jp-c100", "one")
    new(a, "jp-c200", "two")
    push(sa)
    sb.pull()
    a.refs.archive("jp-c100", "test")
    assert actions(push(sa), "push")["jp-c100"] == "archived"
    b.refs.archive("jp-c200", "test")
    add(a, "jp-c200", "more")
    push(sa)
    out = push(sb)
    assert actions(out)["jp-c100"] == "archived"
    assert actions(out)["jp-c200"] == "unarchived"
    assert b.refs.require("jp-c100").archived and not b.refs.require("jp-c200").archived
    assert texts(b, "jp-c200") == ["two", "more"]


def test_concurrent_metadata_edits_merge(machine: Make) -> None:
    a, sa = machine("a")
    b, sb = machine("b")
    new(a, "jp-c100", "one")
    push(sa)
    sb.pull()
    a.notes.set_meta("jp-c100", {"title": "title from a"}, "test")
    b.notes.set_meta("jp-c100", {"labels": {"k": "v"}}, "test")
    push(sa)
    assert actions(push(sb))[refs.NOTES_META] == "merged"
    sa.pull()
    for store in (a, b):
        meta = store.notes.meta("jp-c100")
        assert meta["title"] == "title from a" and meta["labels"] == {"k": "v"}
    assert sa.pull() == [] and sb.pull() == []


def test_invalid_remote_ids_are_refused_by_name(machine: Make, tmp_path: Path) -> None:
    a, sa = machine("a")
    tip = new(a, "jp-c100", "one")
    push(sa)
    hub = pygit2.Repository(str(tmp_path / "remote.git"))
    hub.create_reference_direct("refs/conversations/not-an-id", tip, False)
    hub.create_reference_direct("refs/archive/other/x", tip, False)
    b, sb = machine("b")
    out = sb.pull()
    refused = {o.id: o.detail for o in out if o.kind == "refused"}
    assert refused.keys() == {"refs/conversations/not-an-id", "refs/archive/other/x"}
    assert "not a conversation id" in refused["refs/conversations/not-an-id"]
    assert [loc.cid for loc in b.refs.list(None)] == ["jp-c100"]
    spaces = ["refs/jp-remotes/origin/conversations/", "refs/jp-remotes/origin/archive/"]
    copies = [r.name for r in sb.transport.list_refs(spaces)]
    assert copies == ["refs/jp-remotes/origin/conversations/jp-c100"], "refused copies stay"


def test_nothing_but_synced_namespaces_leaves(machine: Make, tmp_path: Path) -> None:
    a, sa = machine("a")
    new(a, "jp-c100", "one")
    a.refs.set_active("jp-c100")
    push(sa)
    names = pygit2.Repository(str(tmp_path / "remote.git")).listall_references()
    synced = ("refs/conversations/", "refs/notes/", "refs/jp/journal")
    assert names and all(n.startswith(synced) for n in names)


@pytest.mark.skipif(GIT is None, reason="no git executable")
def test_plain_git_fetch_uses_the_same_refspecs(machine: Make, tmp_path: Path) -> None:
    a, sa = machine("a")
    new(a, "jp-c100", "one")
    push(sa)
    b, _ = machine("b")
    subprocess.run([str(GIT), "--git-dir", str(tmp_path / "b"), "fetch", "origin"], check=True)
    assert "refs/jp-remotes/origin/conversations/jp-c100" in b.repo.listall_references()
