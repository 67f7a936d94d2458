"""Listing and moving refs while git packs them (`git pack-refs`, `git gc`).

git's maintenance writes a new ``packed-refs`` and then deletes the loose ref
files it packed, holding ``packed-refs.lock`` meanwhile.  A reader must never
miss a ref in between, and a writer that needs that lock waits, then says so.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from gitstore import refs
from gitstore.refread import list_refs
from gitstore.repo import init_bare
from gitstore.store import Store
from tests.unit.gitstore.builders import git, start

COUNT = 2000
ROUNDS = 12


def _two_commits(path: Path) -> tuple[str, str]:
    store = Store(path)
    a = store.write_commits([start("jp-c1")], None)[-1]
    b = store.write_commits([start("jp-c2")], None)[-1]
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
