"""Listing and moving refs while git packs them (`git pack-refs`, `git gc`).

git's maintenance writes a new ``packed-refs`` and then deletes the loose ref
files it packed, holding ``packed-refs.lock`` meanwhile.  A reader must never
miss a ref in between, and a writer that needs that lock waits, then says so.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from gitstore import faults
from gitstore.errors import RefBusy
from gitstore.git import refs
from gitstore.git.refs import transaction
from gitstore.git.refs.files import list_refs
from gitstore.store.core import Store
from gitstore.store.repo import init_bare
from tests.support.sandbox import ID
from tests.unit.gitstore.builders import git, start

# enough refs that each `git pack-refs` has a window between writing packed-refs and
# pruning the loose files (a reader that reads packed-refs first misses refs at 300:
# checked by swapping the two reads); more only makes the busy listing loop longer
COUNT = 300
ROUNDS = 12


def _two_commits(path: Path) -> tuple[str, str]:
    store = Store(path)
    a = store.log.write_commits([start("jp-c1")], None)[-1]
    b = store.log.write_commits([start("jp-c2")], None)[-1]
    return a, b


def _set_all(path: Path, oid: str) -> None:
    lines = "".join(f"update {refs.live(f'jp-c{n}')} {oid}\n" for n in range(1, COUNT + 1))
    git(path, "update-ref", "--stdin", input=lines)


def test_listing_never_misses_a_ref_while_git_packs(tmp_path: Path) -> None:
    path = tmp_path / "store.git"
    init_bare(path)
    a, b = _two_commits(path)
    _set_all(path, a)
    stop = threading.Event()
    rounds = 0

    def churn() -> None:  # loose refs written, then packed and pruned, over and over
        nonlocal rounds
        while not stop.is_set():
            _set_all(path, b if rounds % 2 else a)
            subprocess.run(["git", "--git-dir", str(path), "pack-refs", "--all"], check=True)
            rounds += 1

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        missing: list[int] = []
        while rounds < ROUNDS and worker.is_alive():  # listings all through the packing
            found = list_refs(path, [refs.LIVE_PREFIX])
            missing.append(COUNT - len(found))
            assert set(found.values()) <= {a, b}
    finally:
        stop.set()
        worker.join()
    assert rounds >= ROUNDS, "git stopped packing (test setup)"
    assert len(missing) > ROUNDS, "too few listings ran while git packed (test setup)"
    short = [m for m in missing if m]
    assert not short, f"{len(short)} of {len(missing)} listings missed refs: {short[:10]}"


# -- moving refs while git's maintenance holds packed-refs.lock ------------------------

A = "jp-c10"


@pytest.fixture
def packed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A store whose conversation refs git has packed; a short wait for locks."""
    monkeypatch.setattr(transaction, "WAIT_SECONDS", 0.3)
    path = tmp_path / "store.git"
    init_bare(path)
    store = Store(path)
    store.log.create(A, [start(A)], None, "test")
    git(path, "pack-refs", "--all")
    assert not (path / refs.live(A)).exists()
    return store


def state(store: Store) -> tuple[str | None, str | None]:
    return store.refs.target(refs.live(A)), store.refs.target(refs.archived(A))


def journals(store: Store) -> list[Path]:
    folder = store.gitdir / "jp" / "ops"
    return sorted(folder.iterdir()) if folder.is_dir() else []


@pytest.mark.parametrize("operation", ["archive", "delete"])
def test_a_lock_held_past_the_wait_is_named_and_nothing_moves(
    packed: Store, operation: str
) -> None:
    before = state(packed)
    (packed.gitdir / "packed-refs.lock").write_text("")  # a gc that keeps running (or died)
    with pytest.raises(RefBusy) as caught:
        getattr(packed.refs, operation)(A, "test")
    assert caught.value.by_maintenance and not caught.value.partial
    assert caught.value.ref == refs.live(A)
    assert caught.value.lock == str(packed.gitdir / "packed-refs.lock")
    assert state(packed) == before, "a refused operation moved a ref"
    assert journals(packed) == []


def test_a_lock_released_during_the_wait_lets_the_archive_through(
    packed: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transaction, "WAIT_SECONDS", 30.0)
    lock = packed.gitdir / "packed-refs.lock"
    lock.write_text("")
    tip = state(packed)[0]
    polls = 0
    real_sleep = transaction.time.sleep

    def sleep(seconds: float) -> None:  # git finishes after a few polls
        nonlocal polls
        polls += 1
        if polls == 3:
            lock.unlink()
        real_sleep(seconds)

    monkeypatch.setattr(transaction.time, "sleep", sleep)
    packed.refs.archive(A, "test")
    assert polls >= 3
    assert state(packed) == (None, tip)
    assert journals(packed) == []


def test_a_lock_taken_mid_commit_moves_nothing(packed: Store) -> None:
    """git takes packed-refs.lock between jp's check and its commit: the deletion of
    the packed live ref goes first and waits for the lock, and when git holds it past
    the wait nothing has moved (the archive ref is not made either): the command names
    git's lock, no journal or ref lock stays, and the archive goes through later."""
    tip = state(packed)[0]
    lock = packed.gitdir / "packed-refs.lock"

    def gc_starts(name: str) -> None:
        if name == "move:locked":
            lock.write_text("")

    faults.install(gc_starts)
    with pytest.raises(RefBusy) as caught:
        packed.refs.archive(A, "test")
    faults.install(None)
    assert caught.value.by_maintenance and not caught.value.partial
    assert caught.value.ref == refs.live(A)
    assert state(packed) == (tip, None)
    assert journals(packed) == []
    assert sorted(p.name for p in packed.gitdir.rglob("*.lock")) == ["packed-refs.lock"]
    lock.unlink()
    packed.refs.archive(A, "test")
    assert state(packed) == (None, tip)


def test_jp_archive_and_rm_never_report_work_they_did_not_do(tmp_path: Path) -> None:
    """Through jp: with packed-refs.lock held, archive and rm fail with one line naming
    the ref and the lock, and the store is as it was."""
    from tests.reliability.harness import RUST, Sandbox

    box = Sandbox(tmp_path / "box")
    box.ok("init")
    cid = ID.findall(box.ok("conversation", "import", str(RUST)))[0]
    box.git("pack-refs", "--all")
    before = box.git("for-each-ref")
    (box.store / "packed-refs.lock").write_text("")
    for args in (["archive", cid, "--yes"], ["rm", cid, "--yes"]):
        proc = box.fail("conversation", *args)
        assert f"refs/conversations/{cid}" in proc.stderr and "packed-refs.lock" in proc.stderr
        assert "jp doctor" in proc.stderr
        assert box.git("for-each-ref") == before, f"jp conversation {args[0]} moved a ref"
    (box.store / "packed-refs.lock").unlink()
    box.ok("conversation", "archive", cid, "--yes")
    assert f"refs/archive/conversations/{cid}" in box.git("for-each-ref")
