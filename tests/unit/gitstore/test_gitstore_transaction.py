"""Multi-ref updates and their journal: a half-applied operation is finished by
the next Store that opens the repository."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

import pygit2
import pytest

from gitstore import faults
from gitstore.errors import ConcurrentUpdate
from gitstore.fs.place import Place
from gitstore.git import refs
from gitstore.git.refs import transaction
from gitstore.git.refs.transaction import SYMBOLIC, RefUpdate
from gitstore.store.core import Store
from tests.support.background import repeating
from tests.unit.gitstore.builders import git, request, start, turn


def ref(path: Path, name: str) -> str | None:
    proc = subprocess.run(
        ["git", "--git-dir", str(path), "rev-parse", "--verify", "--quiet", name],
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip() or None


def journal(path: Path, updates: list[RefUpdate], message: str = "jp test op") -> Path:
    """An intent journal as a writer leaves it when it dies."""
    folder = path / "jp" / "ops"
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "0123456789abcdef.json"
    file.write_text(json.dumps({"message": message, "updates": [u._asdict() for u in updates]}))
    return file


def archive_updates(cid: str, tip: str) -> list[RefUpdate]:
    return [RefUpdate(refs.live(cid), tip, None), RefUpdate(refs.archived(cid), None, tip)]


@pytest.fixture
def tip(store: Store) -> str:
    store.log.create("jp-c2", [start("jp-c2")], None, "create")
    return store.log.create("jp-c1", [start("jp-c1"), *turn(1)], None, "create")


def test_archive_half_done_live_ref_gone(path: Path, tip: str) -> None:
    file = journal(path, archive_updates("jp-c1", tip), "jp conversation archive jp-c1")
    git(path, "update-ref", "-d", "refs/conversations/jp-c1")  # the crash came here
    store = Store(path)
    assert ref(path, "refs/archive/conversations/jp-c1") == tip
    assert ref(path, "refs/conversations/jp-c1") is None
    assert not file.exists()
    assert store.refs.require("jp-c1").archived
    log = git(path, "reflog", "show", "--format=%gs", "refs/archive/conversations/jp-c1")
    assert log.startswith("jp conversation archive jp-c1"), log


def test_archive_half_done_archive_ref_made(path: Path, tip: str) -> None:
    file = journal(path, archive_updates("jp-c1", tip))
    git(path, "update-ref", "refs/archive/conversations/jp-c1", tip)
    Store(path)
    assert ref(path, "refs/conversations/jp-c1") is None
    assert ref(path, "refs/archive/conversations/jp-c1") == tip
    assert not file.exists()


def test_review_apply_half_done_is_finished(store: Store, path: Path, tip: str) -> None:
    """D66's --continue: source moves, review archived, JP_HEAD back at the source."""
    review_tip = store.log.create("jp-c3", [start("jp-c3")], tip, "review")
    store.refs.set_active("jp-c3")
    applied = store.log.write_commits(
        [{"type": "compaction", "timestamp": "2026-01-05T10:00:00.000000Z", "from_turn": 0, "to_turn": 0}],
        tip,
    )[-1]
    updates = [
        RefUpdate(refs.live("jp-c1"), tip, applied),
        RefUpdate(refs.live("jp-c3"), review_tip, None),
        RefUpdate(refs.archived("jp-c3"), None, review_tip),
        RefUpdate(refs.ACTIVE, "*", SYMBOLIC + refs.live("jp-c1")),
    ]
    file = journal(path, updates, "jp conversation compact --continue")
    git(path, "update-ref", "refs/conversations/jp-c1", applied, tip)  # only the first moved
    reopened = Store(path)
    assert ref(path, "refs/conversations/jp-c1") == applied
    assert ref(path, "refs/conversations/jp-c3") is None
    assert ref(path, "refs/archive/conversations/jp-c3") == review_tip
    assert reopened.refs.active() == "jp-c1"
    assert not file.exists()


def test_nothing_moved_means_nothing_happens(store: Store, path: Path, tip: str) -> None:
    before = git(path, "for-each-ref")
    file = journal(path, archive_updates("jp-c1", tip))
    Store(path)
    assert git(path, "for-each-ref") == before, "an operation that never started is dropped"
    assert not file.exists()


def test_a_ref_another_writer_moved_since_is_left_alone(store: Store, path: Path, tip: str) -> None:
    other_tip = store.refs.require("jp-c2").tip
    moved = store.log.append("jp-c2", [request("later")], other_tip, "someone else")
    done = store.log.write_commits([request("op", 50)], tip)[-1]
    updates = [RefUpdate(refs.live("jp-c1"), tip, done), RefUpdate(refs.live("jp-c2"), other_tip, None)]
    file = journal(path, updates)
    git(path, "update-ref", "refs/conversations/jp-c1", done, tip)
    Store(path)
    assert ref(path, "refs/conversations/jp-c2") == moved, "repair deleted another writer's work"
    assert not file.exists()


def test_a_running_operation_is_not_touched(path: Path, tip: str) -> None:
    file = journal(path, archive_updates("jp-c1", tip))
    git(path, "update-ref", "-d", "refs/conversations/jp-c1")
    fd = os.open(file, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # its writer is alive
    try:
        Store(path)
        assert file.exists() and ref(path, "refs/archive/conversations/jp-c1") is None
    finally:
        os.close(fd)
    Store(path)
    assert not file.exists() and ref(path, "refs/archive/conversations/jp-c1") == tip


def test_broken_journals_and_stale_leftovers_are_cleared(path: Path, tip: str) -> None:
    folder = path / "jp" / "ops"
    folder.mkdir(parents=True, exist_ok=True)  # the store's first creation made it
    (folder / "broken.json").write_text("{not json")
    (folder / "shape.json").write_text(json.dumps({"updates": [{"nope": 1}]}))
    half = folder / "dying.tmp"
    half.write_text('{"message": "x", "upd')
    old = time.time() - 60
    os.utime(half, (old, old))
    before = git(path, "for-each-ref")
    assert transaction.repair(Store(path).place) >= 0
    assert list(folder.iterdir()) == []
    assert git(path, "for-each-ref") == before


def test_a_writer_killed_while_deleting_under_git_s_lock_is_finished(path: Path, tip: str) -> None:
    """Killed inside a deletion (``bulk.drop``): its ``packed-refs.lock`` (a hard link
    to its file in jp/ops) and its half-written ``packed-refs`` stay.  The next Store
    takes the lock away before it runs the journal (whose name sorts first, and whose
    deletion needs that lock), then finishes the archive; nothing of the writer stays."""
    git(path, "pack-refs", "--all")
    file = journal(path, archive_updates("jp-c1", tip))
    git(path, "update-ref", "refs/archive/conversations/jp-c1", tip)  # the archive ref was made
    held = path / "jp" / "ops" / "ffffffffffffffff.packed"
    held.write_text("")
    os.link(held, path / "packed-refs.lock")
    half = held.with_suffix(".tmp")
    half.write_text("# pack-refs with: peeled fully-peeled sorted \n")
    old = time.time() - 60
    os.utime(half, (old, old))
    Store(path)
    assert ref(path, "refs/conversations/jp-c1") is None
    assert ref(path, "refs/archive/conversations/jp-c1") == tip
    assert not file.exists() and list((path / "jp" / "ops").iterdir()) == []
    assert not (path / "packed-refs.lock").exists()


def test_a_stale_ref_lock_of_a_dead_writer_is_removed(path: Path, tip: str) -> None:
    file = journal(path, archive_updates("jp-c1", tip))
    git(path, "update-ref", "-d", "refs/conversations/jp-c1")
    lock = path / "refs" / "archive" / "conversations" / "jp-c1.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    old = time.time() - 60
    os.utime(lock, (old, old))
    Store(path)
    assert not lock.exists() and not file.exists()
    assert ref(path, "refs/archive/conversations/jp-c1") == tip


def test_apply_is_all_or_nothing_against_a_moved_ref(store: Store, path: Path, tip: str) -> None:
    before = git(path, "for-each-ref")
    stale = [RefUpdate(refs.live("jp-c1"), "0" * 40, None), RefUpdate(refs.archived("jp-c1"), None, tip)]
    with pytest.raises(ConcurrentUpdate):
        store.refs.move(stale, "stale")
    assert git(path, "for-each-ref") == before
    assert not list((path / "jp" / "ops").glob("*.json"))


def test_a_crash_after_the_journal_is_finished_by_the_next_store(store: Store, path: Path, tip: str) -> None:
    class Crash(Exception):
        pass

    def crash(point: str) -> None:
        if point == "move:committed":
            raise Crash(point)

    faults.install(crash)
    with pytest.raises(Crash):
        store.refs.archive("jp-c1", "jp conversation archive jp-c1")
    faults.install(None)
    assert list((path / "jp" / "ops").glob("*.json")), "the journal outlived the crash"
    Store(path)
    assert not list((path / "jp" / "ops").glob("*.json"))
    assert ref(path, "refs/archive/conversations/jp-c1") == tip
    assert ref(path, "refs/conversations/jp-c1") is None


@pytest.mark.parametrize("cid", ["jp-c3", "jp-c4", "jp-c5", "jp-c6"])
def test_a_commit_failing_at_jp_head_alone_still_moves_it(
    store: Store, path: Path, cid: str
) -> None:
    """libgit2 renames the lock files one by one, in an order of its own: a rename
    that fails on JP_HEAD after the conversation's ref moved is finished at once
    (the names cover both orders), not reported done with JP_HEAD behind."""
    tip = store.log.create(cid, [start(cid)], None, "create")
    store.refs.set_active("jp-c2")
    new = store.log.write_commits([request("later", 5)], tip)[-1]
    shots = [(path / "JP_HEAD.lock")]

    def lose_lock(point: str) -> None:  # the rename of JP_HEAD.lock then fails
        if point == "move:locked" and shots:
            shots.pop().unlink()

    faults.install(lose_lock)
    store.refs.move(
        [
            RefUpdate(refs.live(cid), tip, new),
            RefUpdate(refs.ACTIVE, "*", SYMBOLIC + refs.live(cid)),
        ],
        "op",
    )
    faults.install(None)
    assert not shots, "the fault point was not reached"
    assert ref(path, refs.live(cid)) == new
    assert Store(path).refs.active() == cid, "JP_HEAD was left behind"
    assert not list((path / "jp" / "ops").glob("*.json"))


def test_a_crash_after_jp_head_moved_alone_puts_it_back(store: Store, path: Path, tip: str) -> None:
    """libgit2 may rename JP_HEAD first: a crash before any other ref moved leaves
    an operation that never happened but an active conversation that does not
    exist.  The next store rolls JP_HEAD back to what it was, as the rest."""
    store.refs.set_active("jp-c1")
    made = store.log.write_commits([start("jp-c5")], None)[-1]

    class Crash(Exception):
        pass

    def crash(point: str) -> None:
        if point == "move:journal-written":
            raise Crash(point)

    faults.install(crash)
    with pytest.raises(Crash):
        store.refs.move(
            [RefUpdate(refs.live("jp-c5"), None, made), RefUpdate(refs.ACTIVE, "*", SYMBOLIC + refs.live("jp-c5"))],
            "jp new",
        )
    faults.install(None)
    git(path, "symbolic-ref", refs.ACTIVE, refs.live("jp-c5"))  # renamed before the crash
    reopened = Store(path)
    assert ref(path, refs.live("jp-c5")) is None
    assert reopened.refs.active() == "jp-c1", "JP_HEAD names a conversation never made"
    assert not list((path / "jp" / "ops").glob("*.json"))


def test_a_crash_before_jp_head_moved_finishes_it(store: Store, path: Path, tip: str) -> None:
    """The other order: the conversation's ref moved, JP_HEAD's lock left by the
    dead writer; the next store removes the stale lock and moves JP_HEAD."""
    store.refs.set_active("jp-c2")
    new = store.log.write_commits([request("later", 5)], tip)[-1]
    updates = [RefUpdate(refs.live("jp-c1"), tip, new), RefUpdate(refs.ACTIVE, "*", SYMBOLIC + refs.live("jp-c1"))]
    file = journal(path, updates)
    git(path, "update-ref", refs.live("jp-c1"), new, tip)
    lock = path / "JP_HEAD.lock"
    lock.write_text("ref: refs/conversations/jp-c1\n")
    old = time.time() - 60
    os.utime(lock, (old, old))
    reopened = Store(path)
    assert reopened.refs.active() == "jp-c1"
    assert not lock.exists() and not file.exists()


def test_jp_head_another_writer_moved_since_is_not_taken_back(store: Store, path: Path, tip: str) -> None:
    """A crash after the conversation's ref moved: JP_HEAD, switched since by
    another command, stays where that one put it (the journal's "before" says
    what the operation found)."""
    store.refs.set_active("jp-c2")
    new = store.log.write_commits([request("later", 5)], tip)[-1]
    updates = [RefUpdate(refs.live("jp-c1"), tip, new), RefUpdate(refs.ACTIVE, "*", SYMBOLIC + refs.live("jp-c1"))]
    file = journal(path, updates)
    data = json.loads(file.read_text())
    file.write_text(json.dumps({**data, "before": {refs.ACTIVE: SYMBOLIC + refs.live("jp-c3")}}))
    git(path, "update-ref", refs.live("jp-c1"), new, tip)
    reopened = Store(path)
    assert ref(path, refs.live("jp-c1")) == new
    assert reopened.refs.active() == "jp-c2", "repair took back another command's switch"
    assert not file.exists()


def test_no_move_is_lost_or_undone_while_git_packs_refs(path: Path) -> None:
    """Transactions that advance one ref, delete another and create a third, beside
    `git pack-refs --all` run over and over (git gc, the background gc jp starts):
    every move they report reads back, right after it returns and once git has
    stopped.  libgit2 deletes a ref by rewriting ``packed-refs`` from what it read
    before taking the file's lock, and unlinks a loose ref without it: a packing
    in between lost the advance (the ref read as unmoved) or brought the deleted
    ref back."""
    place = Place.of(pygit2.Repository(str(path)))
    tree = git(path, "hash-object", "-t", "tree", "-w", "/dev/null").strip()
    who = ("-c", "user.name=t", "-c", "user.email=t@x")
    old, new = (git(path, *who, "commit-tree", tree, "-m", m).strip() for m in ("old", "new"))
    moved = {}
    with repeating(["git", "--git-dir", str(path), "pack-refs", "--all"]) as rounds:
        for n in range(300):
            kept, gone, made = f"refs/t/kept{n}", f"refs/t/gone{n}", f"refs/t/made{n}"
            transaction.apply(place, [RefUpdate(kept, None, old), RefUpdate(gone, None, old)], "t")
            move = [RefUpdate(kept, old, new), RefUpdate(gone, old, None), RefUpdate(made, None, old)]
            transaction.apply(place, move, "t")
            now = {name: ref(path, name) for name in (kept, gone, made)}
            assert now == {kept: new, gone: None, made: old}, f"move {n} read back as {now}"
            moved |= now
    assert rounds[0] > 0
    listed = git(path, "for-each-ref", "--format=%(refname) %(objectname)", "refs/t/")
    assert dict(line.split() for line in listed.splitlines()) == {
        name: value for name, value in moved.items() if value is not None
    }
