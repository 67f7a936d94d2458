"""An append beside a ``git gc --prune=now`` that walked the refs before the append's
ref moved: the prune deletes the new loose objects after the ref names them, and
the append, which waits for that gc to end (``pruned.after_gc``), writes them again."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitstore.git import pruned, refs
from gitstore.git.refs import files as refread
from gitstore.store.core import Store
from tests.unit.gitstore.builders import git, request, start

CID = "jp-c17000000001"


SLEEP = "import time; time.sleep(60)"


def living(*args: str) -> Iterator[int]:
    """A process that lives for the test, with ``args`` on its command line: what a
    running gc's ``gc.pid`` names."""
    proc = subprocess.Popen([sys.executable, "-c", SLEEP, *args])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def live_pid() -> Iterator[int]:
    """``git gc --prune=now``, as far as its command line says."""
    yield from living("gc", "--prune=now")


@pytest.fixture
def auto_pid() -> Iterator[int]:
    """``git gc --auto`` (two weeks' grace: it takes no new object)."""
    yield from living("gc", "--auto")


def loose(path: Path, oid: str) -> Path:
    return path / "objects" / oid[:2] / oid[2:]


def test_objects_a_running_prune_takes_after_the_move_are_written_again(
    store: Store, path: Path, live_pid: int
) -> None:
    store.log.create(CID, [start(CID)], None, "test")
    before = store.refs.require(CID).tip
    pid_file = path / "gc.pid"
    pid_file.write_text(f"{live_pid} {socket.gethostname()}")
    took: list[str] = []

    def prune_after_the_move() -> None:  # the walk was before it; the deletion is now
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            now = refread.read_ref(path, refs.live(CID))
            if now is not None and now != before:
                time.sleep(0.1)  # the append has checked its objects once already
                loose(path, now).unlink()
                took.append(now)
                break
            time.sleep(0.001)
        pid_file.unlink()  # that gc ends

    prune = threading.Thread(target=prune_after_the_move)
    prune.start()
    tip = store.log.append(CID, [request("more")], before, "test")
    prune.join()
    assert took == [tip]
    assert loose(path, tip).exists()
    git(path, "fsck", "--strict", "--no-dangling")


def test_a_gc_that_died_or_runs_elsewhere_is_read_as_git_reads_it(
    path: Path, live_pid: int
) -> None:
    pid_file = path / "gc.pid"
    assert pruned.gc_running(path) is None
    pid_file.write_text(f"{live_pid} {socket.gethostname()}")
    assert pruned.gc_running(path) == pid_file.read_text()
    pid_file.write_text(f"{live_pid} another-machine")
    assert pruned.gc_running(path) is not None  # git cannot tell: it is taken as running
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    pid_file.write_text(f"{dead.pid} {socket.gethostname()}")
    assert pruned.gc_running(path) is None
    pid_file.write_text(f"{live_pid} {socket.gethostname()}")
    old = time.time() - pruned.GC_STALE - 60
    os.utime(pid_file, (old, old))
    assert pruned.gc_running(path) is None
    started = time.monotonic()
    pruned.after_gc(path)  # a stale one is not waited for
    assert time.monotonic() - started < 1


def test_a_gc_that_gives_grace_is_not_waited_for(path: Path, auto_pid: int) -> None:
    pid_file = path / "gc.pid"
    pid_file.write_text(f"{auto_pid} {socket.gethostname()}")
    running = pruned.gc_running(path)
    assert running is not None and not pruned.prunes_now(path, running)
    started = time.monotonic()
    pruned.after_gc(path)
    assert time.monotonic() - started < 1
    (path / "config").write_text((path / "config").read_text() + "[gc]\n\tpruneExpire = now\n")
    assert pruned.prunes_now(path, running)  # the store's config makes it prune now


def test_a_note_waits_out_a_running_prune_before_it_writes(
    store: Store, path: Path, live_pid: int
) -> None:
    """A notes write (``pruned.shielded``) waits for a running ``gc --prune=now``
    to end before it writes its objects, then holds git's gc lock until its ref
    names them: no prune can take them, before the move or after it."""
    store.notes.set_meta(CID, {"title": "first"}, "edit")
    pid_file = path / "gc.pid"
    pid_file.write_text(f"{live_pid} {socket.gethostname()}")
    ended: list[bool] = []

    def gc_ends() -> None:
        time.sleep(0.3)
        ended.append(True)
        pid_file.unlink()

    gc = threading.Thread(target=gc_ends)
    gc.start()
    store.notes.set_meta(CID, {"title": "second"}, "edit")
    assert ended, "the write did not wait for the running gc"
    gc.join()
    assert not pid_file.exists()  # the write's own hold of the lock is gone too
    assert Store(path).notes.meta(CID)["title"] == "second"
    git(path, "fsck", "--strict", "--no-dangling")


def test_while_jp_holds_the_gc_lock_no_git_gc_starts(path: Path) -> None:
    """``pruned.holding``: git's own ``gc.pid``, so a ``git gc`` begun meanwhile
    refuses; after the block the lock is gone and gc runs."""
    with pruned.holding(path) as held:
        assert held
        refused = subprocess.run(
            ["git", "--git-dir", str(path), "gc", "--prune=now"], capture_output=True, text=True
        )
        assert refused.returncode != 0 and "already running" in refused.stderr
    assert not (path / "gc.pid").exists() and not (path / "gc.pid.lock").exists()
    git(path, "gc", "--prune=now")


def test_a_gc_lock_a_killed_process_left_stops_nothing(path: Path) -> None:
    """A ``gc.pid`` naming a process that died is stale, to git and to jp."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (path / "gc.pid").write_text(f"{dead.pid} {socket.gethostname()}")
    with pruned.holding(path, wait=5) as held:
        assert held
    git(path, "gc", "--prune=now")
