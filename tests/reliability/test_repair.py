"""Multi-ref updates left half-done are finished by the next command.

libgit2 commits a ref transaction by renaming one lock file after another, so
a crash (or an I/O error) in that loop leaves some refs moved and the rest
still locked.  The commit is one call, so these tests build that state by
hand: the operation's intent journal, some refs moved with plain git, lock
files left on the others.  Then the next `Store` (every `jp` command opens
one) must finish the operation, remove the locks and the journal, and never
touch an operation whose writer is still alive.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitstore import faults
from gitstore.errors import StoreError
from gitstore.events import now_text
from gitstore.git import refs
from gitstore.git.refs import transaction
from gitstore.git.refs.transaction import SYMBOLIC, RefUpdate
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from tests.reliability.harness import RUST_ID, Sandbox

A, B = "jp-c100", "jp-c200"


def start(cid: str) -> dict[str, str]:
    return {"type": "conversation_start", "timestamp": now_text(), "conversation_id": cid}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    init_bare(tmp_path / "s.git")
    s = Store(tmp_path / "s.git")
    for cid in (A, B):
        s.log.create(cid, [start(cid)], None, "test")
    s.refs.set_active(A)
    yield s
    faults.install(None)


def archive_updates(s: Store, cid: str) -> list[RefUpdate]:
    tip = s.refs.require(cid).tip
    return [
        RefUpdate(refs.live(cid), tip, None),
        RefUpdate(refs.archived(cid), None, tip),
        RefUpdate(refs.ACTIVE, "*", SYMBOLIC + refs.live(B)),
    ]


def journals(s: Store) -> list[Path]:
    return sorted((s.gitdir / "jp" / "ops").glob("*"))


def locks(s: Store) -> list[Path]:
    return [p for p in s.gitdir.rglob("*.lock") if "jp/locks" not in p.as_posix()]


def write_journal(s: Store, updates: list[RefUpdate]) -> Path:
    """A journal as a writer leaves it (its flock dies with the writer)."""
    path, fd = transaction._write_journal(s.gitdir, updates, "jp test")
    os.close(fd)
    return path


def state(s: Store, updates: list[RefUpdate]) -> list[str | None]:
    return [transaction.current(s.repo, u.name) for u in updates]


def set_ref(s: Store, name: str, value: str | None) -> None:
    """Move a ref the way the half-finished commit would have."""
    if value is None:
        s.repo.references.delete(name)
    elif value.startswith(SYMBOLIC):
        s.repo.create_reference_symbolic(name, value[len(SYMBOLIC) :], True)
    else:
        s.repo.create_reference_direct(name, value, True)


def stale_lock(s: Store, name: str, age: float = 5.0) -> Path:
    lock = s.gitdir / f"{name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("0" * 40 + "\n")
    then = time.time() - age
    os.utime(lock, (then, then))
    return lock


SUBSETS = [
    moved
    for n in (1, 2)
    for moved in itertools.combinations(range(3), n)
    if moved != (2,)  # JP_HEAD alone moved: nothing of the archive landed (see below)
]


@pytest.mark.parametrize("moved", SUBSETS, ids=lambda m: "moved-" + "-".join(map(str, m)))
def test_a_half_renamed_transaction_is_finished(store: Store, moved: tuple[int, ...]) -> None:
    updates = archive_updates(store, A)
    write_journal(store, updates)
    for i, u in enumerate(updates):
        if i in moved:
            set_ref(store, u.name, u.new)
        else:
            stale_lock(store, u.name)  # the lock the crash left on a ref not yet renamed

    Store(store.path)  # the next command

    assert state(store, updates) == [u.new for u in updates]
    assert journals(store) == [] and locks(store) == []


def test_nothing_landed_so_nothing_is_done(store: Store) -> None:
    """Killed with only locks taken (or only JP_HEAD moved): the operation never happened."""
    updates = archive_updates(store, A)
    before = state(store, updates)
    write_journal(store, updates)
    for u in updates:
        stale_lock(store, u.name)

    Store(store.path)

    assert state(store, updates) == before
    assert journals(store) == [] and locks(store) == []


def test_a_ref_moved_by_another_writer_is_left_alone(store: Store) -> None:
    """The writer died before its commit; the live ref moved on since: no archive appears."""
    updates = archive_updates(store, A)
    write_journal(store, updates)
    tip = store.log.append_anyway(A, [{"type": "turn_start", "timestamp": now_text()}], "other")

    Store(store.path)

    assert store.refs.require(A).tip == tip and not store.refs.require(A).archived
    assert transaction.current(store.repo, refs.archived(A)) is None
    assert journals(store) == []


def test_a_running_operation_is_not_touched(store: Store) -> None:
    """Another process's repair leaves a journal alone while its writer holds it."""
    updates = archive_updates(store, A)
    path, fd = transaction._write_journal(store.gitdir, updates, "jp test")
    try:
        set_ref(store, updates[1].name, updates[1].new)  # mid-commit, as it would look
        assert transaction.repair(store.place) == 0
        assert path.exists()
        assert transaction.current(store.repo, refs.live(A)) is not None
    finally:
        os.close(fd)
    assert transaction.repair(store.place) == 1
    assert state(store, updates) == [u.new for u in updates]


def test_a_young_lock_waits_for_the_next_command(store: Store) -> None:
    updates = archive_updates(store, A)
    write_journal(store, updates)
    set_ref(store, updates[1].name, updates[1].new)
    stale_lock(store, updates[0].name, age=0.0)

    transaction.repair(store.place)
    assert len(journals(store)) == 1 and len(locks(store)) == 1  # could be a live writer's

    transaction.repair(store.place, stale_after=0.0)
    assert state(store, updates) == [u.new for u in updates]
    assert journals(store) == [] and locks(store) == []


def test_unreadable_journals_and_half_written_ones_go(store: Store) -> None:
    folder = store.gitdir / "jp" / "ops"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "broken.json").write_text("{not json")
    (folder / "partial.tmp").write_text('{"upd')
    then = time.time() - 5
    os.utime(folder / "partial.tmp", (then, then))
    Store(store.path)
    assert journals(store) == []


def test_a_failed_commit_phase_is_finished_at_once(store: Store) -> None:
    """An I/O error while libgit2 renames the locks (one lock vanishes under it)."""
    updates = archive_updates(store, A)

    sabotage(store, times=1)
    store.refs.move(updates, "jp test")  # finished at once: every ref was locked and checked
    assert state(store, updates) == [u.new for u in updates]
    assert journals(store) == [] and locks(store) == []


def test_a_commit_phase_that_keeps_failing_is_left_to_the_next_command(store: Store) -> None:
    updates = archive_updates(store, A)
    sabotage(store, times=transaction.BLIND_RETRIES + 2)  # the first try and every retry
    before = state(store, updates)
    with pytest.raises(StoreError, match="the next jp command repairs the store"):
        store.refs.move(updates, "jp test")
    assert len(journals(store)) == 1 and locks(store) == []
    Store(store.path)
    now = state(store, updates)
    assert now[:2] in (before[:2], [u.new for u in updates][:2])  # not archived, or archived
    assert journals(store) == [] and locks(store) == []


def sabotage(store: Store, times: int) -> None:
    """Make the archive ref's lock file vanish before libgit2 renames it."""
    left = times

    def hook(name: str) -> None:
        nonlocal left
        if name == "move:locked" and left > 0:
            left -= 1
            (store.gitdir / f"{refs.archived(A)}.lock").unlink()

    faults.install(hook)


# -- through jp: a review's --continue half-renamed ------------------------------------


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sandbox, dict[str, object]]:
    """A --continue killed after its transaction (journal left, every ref moved)."""
    from tests.reliability.harness import RUST

    box = Sandbox(tmp_path_factory.mktemp("applied") / "box")
    box.ok("init")
    box.ok("conversation", "import", "--activate", str(RUST))
    box.ok("conversation", "compact", "--interactive")
    box.kill("move:committed", "conversation", "compact", "--continue", "-y")
    (journal,) = (box.store / "jp" / "ops").glob("*.json")
    return box, json.loads(journal.read_text())


@pytest.mark.parametrize("renamed", [(0,), (1,), (2,), (0, 1), (0, 3), (1, 2, 3)])
def test_a_half_renamed_continue_is_finished_by_the_next_jp(
    applied: tuple[Sandbox, dict[str, object]], renamed: tuple[int, ...], tmp_path: Path
) -> None:
    template, journal = applied
    box = template.copy(tmp_path / "box")
    updates = [RefUpdate(**u) for u in journal["updates"]]  # type: ignore[union-attr]
    done = {u.name: u.new for u in updates}
    for i, u in enumerate(updates):  # undo what was not yet renamed, and lock it
        if i in renamed:
            continue
        if u.old is None:
            box.git("update-ref", "-d", u.name)
        elif u.old == "*":
            continue
        else:
            box.git("update-ref", u.name, u.old)
        lock = box.store / f"{u.name}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text("")
        os.utime(lock, (time.time() - 5, time.time() - 5))

    box.ok("conversation", "ls")

    assert box.leftovers() == []
    box.fsck()
    for name, value in done.items():
        if value is None:
            assert name not in box.refs(), name
        elif value.startswith(SYMBOLIC):
            assert box.git("symbolic-ref", name).strip() == value[len(SYMBOLIC) :]
        else:
            assert box.refs().get(name) == value, name
    assert box.head() == RUST_ID
    box.ok("q", "after the repair")
