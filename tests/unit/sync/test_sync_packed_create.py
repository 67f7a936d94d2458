"""A pull that creates many conversations writes their refs into ``packed-refs``
under git's lock (``gitstore.git.refs.bulk``): git reads, checks and repacks the
result, a loose ref or a lock of the same name is respected, a lock git holds
is waited out, and a kill at every step leaves a store git accepts, which the
next pull completes."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gitstore import undoing
from gitstore.errors import RefBusy
from gitstore.git import refs
from gitstore.git.refs import bulk
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import created, remotes
from gitstore.sync.here import Here
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import choose

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="pulled through git")
COUNT = created.BULK_AT + 3
ROOT = Path(__file__).resolve().parents[3]


def git(gitdir: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def machine(path: Path, url: str) -> Syncer:
    init_bare(path)
    store = Store(path)
    remotes.add(store.repo, "origin", url)
    return Syncer(Here.of(store), "origin", choose(store.repo, GIT))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare remote holding ``COUNT`` conversations (one archived)."""
    root = tmp_path_factory.mktemp("shared")
    remote = root / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    laptop = machine(root / "laptop", str(remote))
    for n in range(1, COUNT + 1):
        cid = f"jp-c{n}"
        start = {"type": "conversation_start", "timestamp": "2026-01-05T09:00:00Z",
                 "conversation_id": cid}  # fmt: skip
        laptop.here.log.create(cid, [start], None, "test")
    laptop.here.refs.archive("jp-c2", "test")
    push(laptop)
    return remote


def remote_conversations(remote: Path) -> dict[str, str]:
    lines = git(remote, "for-each-ref", "--format=%(objectname) %(refname)").splitlines()
    pairs = (line.split(" ", 1) for line in lines)
    return {name: oid for oid, name in pairs if "conversations/" in name}


def test_a_first_pull_leaves_its_refs_packed_and_git_accepts_them(
    tmp_path: Path, shared: Path
) -> None:
    desktop = machine(tmp_path / "desktop", str(shared))
    outcomes = desktop.pull()
    made = {o.id for o in outcomes if o.kind == "conversation" and o.action == "created"}
    assert len(made) == COUNT
    gitdir = desktop.here.place.gitdir
    assert not list((gitdir / "refs" / "conversations").glob("*"))  # no loose file each
    assert not (gitdir / "logs" / "refs" / "conversations").exists()  # as git clone: no reflog
    text = (gitdir / "packed-refs").read_text()
    assert text.startswith("# pack-refs with: peeled fully-peeled sorted \n")
    names = [line.split(" ", 1)[1] for line in text.splitlines()[1:] if line[0] != "^"]
    assert names == sorted(names, key=str.encode)
    listed = git(gitdir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/archive/",
                 "refs/conversations/")  # fmt: skip
    assert dict(line.split(" ")[::-1] for line in listed.splitlines()) == remote_conversations(
        shared
    )
    named = {line.split(" ")[1] for line in listed.splitlines()}
    assert refs.archived("jp-c2") in named and refs.live("jp-c2") not in named
    git(gitdir, "fsck", "--strict", "--no-dangling")
    git(gitdir, "pack-refs", "--all")
    assert git(gitdir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/archive/",
               "refs/conversations/") == listed  # fmt: skip
    assert (
        desktop.here.refs.require("jp-c7").tip == remote_conversations(shared)[refs.live("jp-c7")]
    )
    assert all(o.action == "up-to-date" or o.kind != "conversation" for o in desktop.pull())


def test_a_loose_ref_or_its_lock_wins_over_a_packed_creation(tmp_path: Path) -> None:
    gitdir = tmp_path / "store"
    init_bare(gitdir)
    one, two = "1" * 40, "2" * 40
    (gitdir / "refs" / "conversations").mkdir(parents=True, exist_ok=True)
    (gitdir / "refs" / "conversations" / "jp-c1").write_text(one + "\n")
    (gitdir / "refs" / "conversations" / "jp-c3.lock").write_text(one + "\n")
    (gitdir / "packed-refs").write_text(
        f"# pack-refs with: peeled sorted \n{one} refs/x/y\n^{two}\n"
    )
    wanted = {refs.live(f"jp-c{n}"): two for n in (1, 2, 3)} | {"refs/x/y": two}
    assert bulk.create(gitdir, wanted) == [refs.live("jp-c2")]
    assert (gitdir / "refs" / "conversations" / "jp-c1").read_text() == one + "\n"
    assert (gitdir / "packed-refs").read_text() == (
        f"# pack-refs with: peeled sorted \n{two} refs/conversations/jp-c2\n{one} refs/x/y\n^{two}\n"
    )
    assert not (gitdir / "packed-refs.lock").exists()
    assert not list((gitdir / "jp" / "ops").iterdir())


def test_a_lock_git_holds_is_waited_out_then_named(tmp_path: Path) -> None:
    gitdir = tmp_path / "store"
    init_bare(gitdir)
    lock = gitdir / "packed-refs.lock"
    lock.write_text("")
    with pytest.raises(RefBusy) as caught:
        bulk.create(gitdir, {refs.live("jp-c1"): "1" * 40}, wait=0.2)
    assert caught.value.by_maintenance and lock.exists()  # git's lock is never ours to drop
    threading.Timer(0.3, lock.unlink).start()
    started = time.monotonic()
    assert bulk.create(gitdir, {refs.live("jp-c1"): "1" * 40}, wait=5) == [refs.live("jp-c1")]
    assert time.monotonic() - started >= 0.25


KILLED = """
import os, shutil, signal, sys
from gitstore import faults
from gitstore.store.core import Store
from gitstore.sync.here import Here
from gitstore.sync.pull import Syncer
from gitstore.sync.transport import choose
point = sys.argv[2]
faults.install(lambda name: os.kill(os.getpid(), signal.SIGKILL) if name == point else None)
from pathlib import Path
store = Store(Path(sys.argv[1]))
Syncer(Here.of(store), "origin", choose(store.repo, shutil.which("git"))).pull()
"""


# packed: the conversations' refs; copies: the remote-tracking copies a first pull clones
POINTS = [f"{stage}:{step}" for stage in ("packed", "copies") for step in ("locked", "written",
          "renamed")]  # fmt: skip


@pytest.mark.parametrize("point", POINTS)
def test_a_pull_killed_at_each_step_leaves_a_store_git_accepts(
    tmp_path: Path, shared: Path, point: str
) -> None:
    desktop = machine(tmp_path / "desktop", str(shared))
    gitdir = desktop.here.place.gitdir
    done = subprocess.run([sys.executable, "-c", KILLED, str(gitdir), point], cwd=ROOT)
    assert done.returncode == -9
    listed = git(gitdir, "for-each-ref", "--format=%(refname)", "refs/conversations/")
    assert len(listed.splitlines()) == (0 if point != "packed:renamed" else COUNT - 1)
    git(gitdir, "fsck", "--no-dangling")
    assert (gitdir / "packed-refs.lock").exists() == (not point.endswith(":renamed"))
    again = Store(gitdir)  # opening repairs: the dead writer's lock is dropped
    assert not (gitdir / "packed-refs.lock").exists()
    assert not list((gitdir / "jp" / "ops").glob("*" + bulk.SUFFIX))
    Syncer(again, "origin", choose(again.repo, GIT)).pull()
    assert not list((gitdir / "objects" / "pack").glob("*.keep")), "no pack is kept for ever"
    assert not list((gitdir / "jp").glob("clone-*")), "nor the clone a first pull made"
    git(gitdir, "pack-refs", "--all")
    ours = git(gitdir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/archive/",
               "refs/conversations/")  # fmt: skip
    assert dict(line.split(" ")[::-1] for line in ours.splitlines()) == remote_conversations(shared)


def test_a_packed_creation_is_one_operation_that_undo_takes_back(
    tmp_path: Path, shared: Path
) -> None:
    init_bare(tmp_path / "desktop")
    store = Store(tmp_path / "desktop")
    remotes.add(store.repo, "origin", str(shared))
    desktop = Syncer(Here.of(store), "origin", choose(store.repo, GIT))
    with store.ops.operation("jp pull"):
        desktop.pull()
    op = store.ops.list(1)[0]
    moved = {m.ref for m in op.moves if "conversations/" in m.ref}
    assert moved == set(remote_conversations(shared))
    undoing.undo(store)
    assert store.refs.list(archived=None) == []
    git(store.gitdir, "fsck", "--no-dangling")


def test_without_hard_links_the_refs_are_created_one_batch_at_a_time(
    tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object) -> None:
        raise PermissionError(1, "Operation not permitted")  # as a FAT or some FUSE mounts

    monkeypatch.setattr(bulk.os, "link", refuse)
    desktop = machine(tmp_path / "desktop", str(shared))
    made = [o for o in desktop.pull() if o.kind == "conversation" and o.action == "created"]
    assert len(made) == COUNT
    gitdir = desktop.here.place.gitdir
    assert not (gitdir / "packed-refs.lock").exists()
    assert not list((gitdir / "jp" / "ops").glob("*" + bulk.SUFFIX))
    ours = git(gitdir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/archive/",
               "refs/conversations/")  # fmt: skip
    assert dict(line.split(" ")[::-1] for line in ours.splitlines()) == remote_conversations(shared)


def test_a_packed_refs_lock_held_past_the_wait_leaves_the_refs_loose(
    tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    desktop = machine(tmp_path / "desktop", str(shared))
    gitdir = desktop.here.place.gitdir
    real = bulk.create

    def held_by_gc(where: Path, new: dict[str, str], wait: float = 5.0, **more: str) -> list[str]:
        (where / "packed-refs.lock").write_text("")  # as git gc holds it
        try:
            return real(where, new, wait=0.1, **more)  # type: ignore[arg-type]
        finally:
            (where / "packed-refs.lock").unlink()

    monkeypatch.setattr(bulk, "create", held_by_gc)
    made = [o for o in desktop.pull() if o.kind == "conversation" and o.action == "created"]
    assert len(made) == COUNT
    assert len(list((gitdir / "refs" / "conversations").iterdir())) == COUNT - 1  # loose
    ours = git(gitdir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/archive/",
               "refs/conversations/")  # fmt: skip
    assert dict(line.split(" ")[::-1] for line in ours.splitlines()) == remote_conversations(shared)
