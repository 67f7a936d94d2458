"""Notes and operation-log writes beside git's prune (``gitstore/store/keep.py``).

git's prune, run between a write's objects and its ref move (the fault points
``notes:objects-written`` and ``oplog:objects-written``), deletes every loose
object not reachable yet.  The objects are sheltered in a kept pack until the
ref has moved, so the ref never names an object that is gone.
"""

from __future__ import annotations

import os
import subprocess
import time

import pygit2
import pytest

from gitstore import faults
from gitstore.errors import EnvironmentFault, StoreError
from gitstore.fs import keep, shelters
from gitstore.oplog import log as oplog
from gitstore.oplog.model import Move, Op
from gitstore.store import notes
from gitstore.store.core import Store


def _prune_at(store: Store, point: str) -> list[str]:
    """At ``point``, what `git gc --prune=now` and `git prune --expire=now` do."""
    reached: list[str] = []

    def hook(name: str) -> None:
        if name != point:
            return
        reached.append(name)
        for args in (["gc", "--quiet", "--prune=now"], ["prune", "--expire=now"]):
            subprocess.run(["git", "--git-dir", str(store.gitdir), *args], check=True)

    faults.install(hook)
    return reached


def _fsck(store: Store) -> None:
    proc = subprocess.run(
        ["git", "--git-dir", str(store.gitdir), "fsck", "--full", "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "missing" not in proc.stdout + proc.stderr


def _no_keep_left(store: Store) -> None:
    assert not list((store.gitdir / "objects" / "pack").glob("*.keep"))
    assert not any(keep.folder(store.gitdir).glob("*"))


def test_a_note_written_beside_a_prune_is_whole(store: Store) -> None:
    cid = "jp-c17800000001"
    reached = _prune_at(store, "notes:objects-written")
    store.notes.set_meta(cid, {"title": "kept"}, "jp conversation edit")
    faults.install(None)
    assert reached, "the fault point was not reached"
    assert store.notes.meta(cid)["title"] == "kept"
    _fsck(store)
    _no_keep_left(store)


def test_an_operation_written_beside_a_prune_is_whole(store: Store) -> None:
    cid = "jp-c17800000002"
    store.notes.set_meta(cid, {"title": "t"}, "jp conversation edit")
    tip = store.refs.target(store.notes.refs.meta)
    reached = _prune_at(store, "oplog:objects-written")
    op = Op(
        "beside", "jp conversation edit", time.time(), moves=[Move("refs/notes/meta", None, tip)]
    )
    oplog.write(store.repo, op, pygit2.Signature("jp", "jp@localhost"))
    faults.install(None)
    assert reached, "the fault point was not reached"
    assert [o.id for o in oplog.ops(Store(store.gitdir).repo)] == ["beside"]
    _fsck(store)
    _no_keep_left(store)


def test_a_missing_notes_tree_is_named_not_an_internal_error(store: Store) -> None:
    cid = "jp-c17800000003"
    store.notes.set_meta(cid, {"title": "t"}, "jp conversation edit")
    commit = store.repo.lookup_reference(store.notes.refs.meta).peel(pygit2.Commit)
    tree = str(commit.tree_id)
    subprocess.run(["git", "--git-dir", str(store.gitdir), "repack", "-q"], check=False)
    for pack in (store.gitdir / "objects" / "pack").glob("*"):
        pack.unlink()
    loose = store.gitdir / "objects" / tree[:2] / tree[2:]
    loose.unlink(missing_ok=True)
    fresh = Store(store.gitdir)
    with pytest.raises((EnvironmentFault, StoreError)) as caught:
        notes.read(fresh.repo, fresh.notes.refs.meta, fresh.notes.anchor(cid))
    assert tree[:12] in str(caught.value) or isinstance(caught.value, EnvironmentFault)


def test_a_killed_writers_keep_is_swept(store: Store) -> None:
    """A `.keep` whose writer died (its flock free) goes at the next open."""
    work = keep.folder(store.gitdir) / "dead"
    work.mkdir(parents=True)
    name = "pack-" + "1" * 40 + ".keep"
    (work / "owner").write_text(name)
    packs = store.gitdir / "objects" / "pack"
    packs.mkdir(exist_ok=True)
    (packs / name).write_text("jp: until its ref names these objects\n")
    Store(store.gitdir)
    assert not (packs / name).exists()
    assert not work.exists()
    assert os.path.isdir(keep.folder(store.gitdir))


def test_many_small_packs_make_maintenance_due(store: Store) -> None:
    """Each sheltered write leaves a small pack: past `gc.autoPackLimit` git's gc is due."""
    from gitstore.store import maintenance

    packs = store.gitdir / "objects" / "pack"
    packs.mkdir(exist_ok=True)
    assert not maintenance.due(store.place)
    for n in range(maintenance.PACK_LIMIT + 1):
        (packs / f"pack-{n:040x}.idx").write_bytes(b"")
    assert maintenance.due(store.place)
    store.repo.config["gc.autoPackLimit"] = 0
    assert not maintenance.due(store.place)


def test_a_tree_refused_an_entry_whose_blob_a_prune_took_is_a_spoiled_write(store: Store) -> None:
    """A prune between a note's blob and its tree makes libgit2 refuse the entry
    ("invalid object specified"): the whole attempt is written again, not an
    internal error."""
    blob = store.repo.create_blob(b"a note")
    path = store.gitdir / "objects" / str(blob)[:2] / str(blob)[2:]
    path.unlink()  # what `git prune --expire=now` does to a loose object no ref holds
    builder = store.repo.TreeBuilder()
    with pytest.raises(pygit2.GitError) as refused:
        builder.insert(str(blob), blob, pygit2.GIT_FILEMODE_BLOB)
    assert keep.spoiled(refused.value)
    assert not keep.spoiled(pygit2.GitError("failed to parse revision specifier"))


def _packs(store: Store) -> int:
    return len(list((store.gitdir / "objects" / "pack").glob("*.idx")))


def test_released_shelter_packs_fold_and_keep_every_object(store: Store) -> None:
    """Each sheltered write leaves a pack; past FOLD_AT of them they fold into one,
    so the packs stay few, and an object whose loose copy git's prune removed (it was
    packed) is still read once its small pack has gone."""
    writes = shelters.FOLD_AT * 3 + 2
    cids = [f"jp-c178000001{n:02d}" for n in range(writes)]
    for n, cid in enumerate(cids):
        store.notes.set_meta(cid, {"title": f"t{n}"}, "jp conversation edit")
        if n == shelters.FOLD_AT // 2:  # loose copies of packed objects go: packs alone hold them
            subprocess.run(["git", "--git-dir", str(store.gitdir), "prune-packed"], check=True)
    assert _packs(store) <= 2 * shelters.FOLD_AT, _packs(store)
    fresh = Store(store.gitdir)
    assert [fresh.notes.meta(c)["title"] for c in cids] == [f"t{n}" for n in range(writes)]
    _fsck(store)
    _no_keep_left(store)


def test_a_damaged_shelter_record_folds_nothing_it_cannot_read(store: Store) -> None:
    """A line of the record that is not a level, a pack and object ids is skipped,
    and a pack no longer there (git's gc repacked it) is not folded."""
    record = store.gitdir / "jp" / "shelters"
    record.parent.mkdir(parents=True, exist_ok=True)
    gone = "0 pack-" + "2" * 40 + " " + "3" * 40
    record.write_text("\n".join(["0 ../../x 1", gone, "0 pack-zz", ""]))
    for n in range(shelters.FOLD_AT + 2):
        store.notes.set_meta(f"jp-c1780000020{n}", {"title": "t"}, "jp conversation edit")
    text = record.read_text()
    assert "../../x" not in text and "2" * 40 not in text and "pack-zz" not in text
    assert _packs(store) <= shelters.FOLD_AT
    assert Store(store.gitdir).notes.meta("jp-c17800000201")["title"] == "t"
    _fsck(store)
