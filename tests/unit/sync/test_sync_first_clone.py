"""A first pull of many conversations fetched as a clone: copies straight into
packed-refs, nothing left behind, and anything unusual fetched the ordinary way."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitstore.git import refs
from gitstore.git.refs import files as refread
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from gitstore.sync import firstclone, remotes
from gitstore.sync.here import Here
from gitstore.sync.pull import Syncer
from gitstore.sync.push import push
from gitstore.sync.transport import choose
from tests.unit.sync.hostile import Hostile, fsck, refused

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="pulled through git")
COUNT = firstclone.BULK_AT + 3


def machine(path: Path, url: str) -> Syncer:
    init_bare(path)
    store = Store(path)
    remotes.add(store.repo, "origin", url)
    return Syncer(Here.of(store), "origin", choose(store.repo, GIT))


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare remote that a store of ``COUNT`` conversations (one titled) pushed to."""
    bare = tmp_path / "remote.git"
    init_bare(bare)
    laptop = machine(tmp_path / "laptop", str(bare))
    for n in range(COUNT):
        cid = f"jp-c{n + 1}"
        start = {"type": "conversation_start", "timestamp": "2026-01-05T09:00:00Z",
                 "conversation_id": cid}  # fmt: skip
        laptop.here.log.create(cid, [start], None, "test")
    laptop.here.notes.set_meta("jp-c1", {"title": "first"}, "test")
    push(laptop)
    return bare


def spoil_notes(remote: Path) -> None:
    """A notes tree git's object checks refuse (a name stored twice)."""
    bad = Hostile(remote)
    note = bad.blob('{"k": "title", "m": "x", "t": 5, "v": "dup"}\n')
    sub = bad.tree([f"100644 blob {note}\t{'ab' * 19}"])
    dup = bad.tree([f"100644 blob {note}\tab", f"040000 tree {sub}\tab"])
    bad.ref("refs/notes/meta", bad.commit(dup, bad.tip("refs/notes/meta")))


def loose_copies(store: Here) -> list[Path]:
    return [p for p in (store.place.gitdir / "refs" / "jp-remotes").rglob("*") if p.is_file()]


def test_a_first_pull_clones_into_packed_refs_and_leaves_nothing(
    tmp_path: Path, remote: Path
) -> None:
    desktop = machine(tmp_path / "desktop", str(remote))
    out = desktop.pull()
    created = {o.id for o in out if o.action == "created" and o.kind == "conversation"}
    assert created == {f"jp-c{n + 1}" for n in range(COUNT)}
    here = desktop.here
    assert here.notes.meta("jp-c1")["title"] == "first"
    copies = [p for p in loose_copies(here) if "/conversations/" in str(p)]
    assert copies == [], "the copies are packed, not loose files"
    packed = (here.place.gitdir / "packed-refs").read_text()
    assert packed.count("refs/jp-remotes/origin/conversations/") == COUNT
    gitdir = here.place.gitdir
    assert not list((gitdir / "objects" / "pack").glob("*.keep"))
    assert not list((gitdir / "jp").glob("clone-*")), "the clone's folder is gone"
    kept = [p for p in refread._PACKED if p.name.startswith("clone-")]
    assert kept == [], "nor is its packed-refs kept in memory"
    fsck(Store(gitdir))
    again = [o for o in desktop.pull() if o.kind == "conversation"]
    assert again == [], "a second pull finds nothing to do"


def test_a_clone_git_refuses_falls_back_and_refuses_only_the_bad_ref(
    tmp_path: Path, remote: Path
) -> None:
    spoil_notes(remote)
    desktop = machine(tmp_path / "desktop", str(remote))
    out = desktop.pull()
    assert "duplicateEntries" in refused(out)["refs/notes/meta"].detail
    created = {o.id for o in out if o.action == "created" and o.kind == "conversation"}
    assert len(created) == COUNT, "every conversation arrives by the ordinary fetch"
    assert not list((desktop.here.place.gitdir / "jp").glob("clone-*"))


def test_a_remote_with_other_names_is_not_cloned(tmp_path: Path, remote: Path) -> None:
    bad = Hostile(remote, journal=False)
    code = bad.commit(bad.tree([f"100644 blob {bad.blob('code')}\tmain.c"]))
    bad.git("update-ref", "refs/heads/main", code)
    desktop = machine(tmp_path / "desktop", str(remote))
    created = [o for o in desktop.pull() if o.action == "created" and o.kind == "conversation"]
    assert len(created) == COUNT
    assert desktop.here.place.repo.get(code) is None, "a branch's objects never come"
    assert desktop.here.place.repo.references.get(refs.live("jp-c1")) is not None


def test_a_killed_first_pull_leaves_a_folder_the_next_fetch_removes(
    tmp_path: Path, remote: Path
) -> None:
    desktop = machine(tmp_path / "desktop", str(remote))
    left = firstclone.folder(desktop.here.place.gitdir, "origin")
    (left / "objects").mkdir(parents=True)
    desktop.pull()
    assert not left.exists()


def test_the_clone_itself_writes_every_copy_and_refuses_a_bad_pack(
    tmp_path: Path, remote: Path
) -> None:
    desktop = machine(tmp_path / "desktop", str(remote))
    gitdir = desktop.here.place.gitdir
    assert firstclone.fetch(desktop.transport, "origin", gitdir)
    copies = {r.name for r in desktop.transport.list_refs(["refs/jp-remotes/origin/"])}
    assert len([c for c in copies if "/conversations/" in c]) == COUNT
    assert "refs/jp-remotes/origin/notes/meta" in copies
    assert not firstclone.fetch(desktop.transport, "origin", gitdir), "copies exist: no clone"
    spoil_notes(remote)
    other = machine(tmp_path / "other", str(remote))
    assert not firstclone.fetch(other.transport, "origin", other.here.place.gitdir)
    assert not list((other.here.place.gitdir / "objects" / "pack").glob("*.pack"))


def test_a_keep_left_by_a_killed_first_pull_is_removed_and_no_other(
    tmp_path: Path, remote: Path
) -> None:
    desktop = machine(tmp_path / "desktop", str(remote))
    packs = desktop.here.place.gitdir / "objects" / "pack"
    packs.mkdir(parents=True, exist_ok=True)
    ours, theirs = packs / "pack-1.keep", packs / "pack-2.keep"
    ours.write_text(firstclone._mark("origin"))
    theirs.write_text("kept by someone else\n")
    desktop.pull()
    assert not ours.exists() and theirs.exists()


def test_a_pack_of_the_same_name_here_already_is_not_taken_over(tmp_path: Path) -> None:
    """The clone's pack has the name of one this store holds already (a killed
    first pull's, released and unreachable, which git's repack may be deleting):
    it moves in under a name of its own, kept, and the other is left as it was."""
    gitdir, work = tmp_path / "store.git", tmp_path / "clone.git"
    init_bare(gitdir)
    init_bare(work)
    theirs = work / "objects" / "pack"
    theirs.mkdir(parents=True, exist_ok=True)
    (theirs / "pack-ab.pack").write_bytes(b"the clone's pack")
    (theirs / "pack-ab.idx").write_bytes(b"its index")
    here = gitdir / "objects" / "pack"
    here.mkdir(parents=True, exist_ok=True)
    (here / "pack-ab.pack").write_bytes(b"an earlier pack")
    (here / "pack-ab.idx").write_bytes(b"its index")
    kept: list[Path] = []
    firstclone.move_packs(work, gitdir, "mark\n", kept)
    assert (here / "pack-ab.pack").read_bytes() == b"an earlier pack"
    (keep,) = kept
    assert keep.name != "pack-ab.keep" and keep.read_text() == "mark\n"
    assert keep.with_suffix(".pack").read_bytes() == b"the clone's pack"
    assert keep.with_suffix(".idx").read_bytes() == b"its index"
