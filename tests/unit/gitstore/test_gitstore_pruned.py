"""Writes beside git's prune: the one rule of ``gitstore/git/pruned.py``.

git's prune, run between a write's objects and its ref move (the fault points
``notes:objects-written`` and ``oplog:objects-written``), deletes every loose
object not reachable yet.  The write finds them gone and writes them again,
once, so the ref never names an object that is gone; gone again, it is named.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pygit2
import pytest

from gitstore import faults
from gitstore.errors import EnvironmentFault, StoreError
from gitstore.git import pruned, writers
from gitstore.oplog import log as oplog
from gitstore.oplog.model import Move, Op
from gitstore.store import notes
from gitstore.store.core import Store

WRITES = 30  # writes beside the maintenance loop


def _prune_at(store: Store, point: str) -> list[str]:
    """At ``point``, what `git gc --prune=now` and `git prune --expire=now` do: the
    gc is refused (the write holds git's gc lock, ``pruned.shielded``); a bare
    prune, which takes no lock, deletes the write's loose objects."""
    reached: list[str] = []

    def hook(name: str) -> None:
        if name != point:
            return
        reached.append(name)
        gc = ["git", "--git-dir", str(store.gitdir), "gc", "--quiet", "--prune=now"]
        refused = subprocess.run(gc, capture_output=True, text=True)
        assert refused.returncode != 0 and "already running" in refused.stderr, refused
        prune = ["git", "--git-dir", str(store.gitdir), "prune", "--expire=now"]
        subprocess.run(prune, check=True)

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
    assert not any(writers.kept_folder(store.gitdir).glob("*"))


def test_a_note_written_beside_a_prune_is_whole(store: Store) -> None:
    cid = "jp-c17800000001"
    reached = _prune_at(store, "notes:objects-written")
    store.notes.set_meta(cid, {"title": "kept"}, "jp conversation edit")
    faults.install(None)
    assert reached, "the fault point was not reached"
    assert store.notes.meta(cid)["title"] == "kept"
    _fsck(store)
    _no_keep_left(store)


def test_many_notes_written_beside_a_prune_are_whole(store: Store) -> None:
    """An import's titles, one pack behind a ``.keep``: the prune leaves it alone."""
    cids = [f"jp-c1780000{n:04d}" for n in range(2 * notes.PACK_FROM)]
    reached = _prune_at(store, "notes:objects-written")
    store.notes.set_metas({c: {"title": c} for c in cids}, "jp conversation import")
    faults.install(None)
    assert reached, "the fault point was not reached"
    assert Store(store.gitdir).notes.metas(cids) == {c: {"title": c} for c in cids}
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
    """A bulk writer's `.keep` whose writer died (its flock free) goes at the next open."""
    work = writers.kept_folder(store.gitdir) / "dead"
    work.mkdir(parents=True)
    name = "pack-" + "1" * 40 + ".keep"
    (work / "owner").write_text(name)
    packs = store.gitdir / "objects" / "pack"
    packs.mkdir(exist_ok=True)
    (packs / name).write_text("jp: until its ref names these objects\n")
    Store(store.gitdir)
    assert not (packs / name).exists()
    assert not work.exists()
    assert os.path.isdir(writers.kept_folder(store.gitdir))


def test_many_small_packs_make_maintenance_due(store: Store) -> None:
    """Each pull or import leaves a pack: past `gc.autoPackLimit` git's gc is due."""
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
    assert pruned.spoiled(refused.value)
    assert not pruned.spoiled(pygit2.GitError("failed to parse revision specifier"))


def test_a_write_spoiled_again_after_its_one_retry_is_named() -> None:
    """The rule: a write a prune spoiled is made again once; spoiled again, it is
    named in one line, never reported as done and never retried without end."""
    tries: list[int] = []

    def attempt() -> str:
        tries.append(1)
        raise pygit2.GitError(f"object not found - no match for id ({'ab' * 20})")

    with pytest.raises(EnvironmentFault) as caught:
        pruned.once(attempt, "/store/objects")
    assert len(tries) == pruned.ATTEMPTS == 2
    assert caught.value.kind == "pruned"

    from porcelain.render.failures import translate

    error = translate(caught.value)
    assert error is not None
    assert str(error).splitlines()[0] == (
        "a git gc --prune=now ran beside this write; run the command again"
    )


def test_a_write_spoiled_once_is_made_again() -> None:
    tries: list[int] = []

    def attempt() -> str:
        tries.append(1)
        if len(tries) == 1:
            raise pygit2.GitError("invalid object specified - event.json")
        return "written"

    assert pruned.once(attempt, "/store/objects") == "written" and len(tries) == 2


def test_another_failure_is_not_taken_for_a_prune() -> None:
    def attempt() -> str:
        raise pygit2.GitError("failed to parse revision specifier")

    with pytest.raises(pygit2.GitError):
        pruned.once(attempt, "/store/objects")


def test_objects_a_prune_took_after_the_move_are_written_again(store: Store) -> None:
    """``settle`` after the ref moved: what the prune took is written again (the same
    bytes, the same ids), and the ref names whole objects."""
    cid = "jp-c17800000004"
    store.notes.set_meta(cid, {"title": "first"}, "jp conversation edit")
    written = pruned.Written(store.gitdir)
    blob = written.put(pygit2.GIT_OBJECT_BLOB, b"a note\n")
    loose = store.gitdir / "objects" / blob.hex()[:2] / blob.hex()[2:]
    loose.unlink()  # what `git gc --prune=now` does to it after its walk
    written.settle()
    assert loose.is_file()
    assert store.repo.odb.read(blob.hex())[1] == b"a note\n"


def test_notes_ops_and_appends_beside_a_gc_and_prune_loop_all_land(store: Store) -> None:
    """git's own maintenance (`git gc`, `git prune` with their grace) removes every
    `objects/XX/` folder it empties, also between libgit2's mkdir and rename of a
    new object: each write beside a loop of them lands whole, none is named."""
    from tests.unit.gitstore.builders import request, start

    stop = threading.Event()
    rounds = [0]

    def loop() -> None:
        while not stop.is_set():
            for args in (["gc", "--quiet"], ["prune", "--expire=2.weeks.ago"]):
                subprocess.run(["git", "--git-dir", str(store.gitdir), *args], capture_output=True)
            rounds[0] += 1

    cid = "jp-c17800000005"
    tip = store.log.create(cid, [start(cid)], None, "test")
    worker = threading.Thread(target=loop, daemon=True)
    worker.start()
    try:
        for n in range(WRITES):
            with store.ops.operation(f"jp title {n}"):
                store.notes.set_meta(f"jp-c178000001{n:02d}", {"title": f"t{n}"}, "edit")
                tip = store.log.append(cid, [request(f"turn {n}")], tip, "test")
    finally:
        stop.set()
        worker.join(timeout=120)
    assert rounds[0] > 0
    fresh = Store(store.gitdir)
    assert [fresh.notes.meta(f"jp-c178000001{n:02d}")["title"] for n in range(WRITES)] == [
        f"t{n}" for n in range(WRITES)
    ]
    assert len(fresh.ops.list(WRITES + 1)) >= WRITES
    assert fresh.refs.require(cid).tip == tip
    _fsck(store)


def test_jp_never_asks_git_to_prune_without_its_grace() -> None:
    """jp's own maintenance keeps git's grace period: no argument of a git command jp
    runs is a prune or expiry of "now" (``--prune=now``, ``--expire=now``...)."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    # an expiry of "now", git's prune run alone, or its expiry set in the config
    now = re.compile(r"--(prune|expire|expire-unreachable)=(now|all)|prune|gc\.pruneexpire", re.I)
    found = []
    for source in [*(root / "gitstore").rglob("*.py"), *(root / "porcelain").rglob("*.py")]:
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and now.fullmatch(value):
                found.append(f"{source.relative_to(root)}:{node.lineno}: {value}")
    assert not found, found
