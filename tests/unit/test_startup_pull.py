"""A pull with nothing to do loads neither libgit2, nor click, nor the store, its
cache or its writing half (porcelain/early/pull.py); a pull that has something to
do does.  Python itself names every module the real `jp` executes
(``PYTHONPROFILEIMPORTTIME``: one line each on stderr, for each module an
``import`` statement loads; ``importlib.import_module`` loads are not named, only
what they import)."""

from __future__ import annotations

from pathlib import Path

from tests.support.importprobe import imported
from tests.support.noop_pull import synced
from tests.support.sync_machine import Machine

HEAVY = {
    "pygit2",
    "pygit2._pygit2",  # libgit2, named even when pygit2 was bound lazily (lazy_module)
    "click",
    "gitstore.store.core",
    "gitstore.cache",
    "gitstore.sync.fetch",  # the pull's own module loads by import_module, unnamed
    "gitstore.store.packwrite",
    "porcelain.config",
    "porcelain.cli",
}


def _pull(machine: Machine) -> tuple[str, set[str]]:
    """``jp pull``'s output, and which of ``HEAVY`` it imported."""
    out, names = imported(machine, "pull")
    return out, names & HEAVY


def test_a_noop_pull_loads_nothing_heavy(tmp_path: Path) -> None:
    laptop, desktop, _ = synced(tmp_path)
    out, heavy = _pull(desktop)
    assert out == "Already up to date with origin.\n"
    assert heavy == set()
    laptop.ok("q", "MOVED")
    laptop.ok("push")
    out, heavy = _pull(desktop)
    assert "updated from origin" in out
    assert {"pygit2._pygit2", "click", "gitstore.sync.fetch", "porcelain.cli"} <= heavy
