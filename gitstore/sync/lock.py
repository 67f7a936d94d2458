"""One pull or push per store and remote at a time, what it turns off while it
runs (libgit2's object cache), and the ref lock files killed git processes leave
in the namespaces sync owns (docs/sync.md, "Interrupted runs"): at once under
``refs/jp-push/<remote>/``, once a minute old under ``refs/jp-remotes/<remote>/``
(plain ``git fetch`` writes there too), and once ``STALE_LOCK_SECONDS`` old under
its ``jp/`` (the journal's copies, jp's alone: a younger one is waited for).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2

from gitstore.errors import SyncError
from gitstore.fs import flock
from gitstore.git.refs.transaction import STALE_LOCK_SECONDS

STALE_AFTER = 60.0  # seconds: no ref transaction holds its lock files this long
OWN = "jp"  # under the tracking namespace: the journal's copies, written by jp alone


@contextmanager
def exclusive(gitdir: Path, remote: str, wait: float = 60.0) -> Iterator[None]:
    """Hold the sync lock of ``remote`` (the kernel drops it if we die)."""
    busy = SyncError(remote, "another jp pull or push is running")
    with flock.held(gitdir, f"sync.{remote}", wait, busy):
        clear_stale(gitdir, f"refs/jp-push/{remote}", 0.0)
        clear_own(gitdir, f"refs/jp-remotes/{remote}/{OWN}")
        clear_stale(gitdir, f"refs/jp-remotes/{remote}", STALE_AFTER)
        yield


def clear_own(gitdir: Path, namespace: str, stale: float = STALE_LOCK_SECONDS) -> int:
    """Remove the lock files under ``namespace``, whose writer (a jp holding this
    lock before us) is gone: each once ``stale`` seconds old, a younger one waited for."""
    youngest = min((_age(p) for p in _locks(gitdir / namespace)), default=stale)
    if youngest < stale:
        time.sleep(stale - max(youngest, 0.0))
    return clear_stale(gitdir, namespace, stale)


def _locks(root: Path) -> list[Path]:
    """The lock files under ``root``: os.walk passes over a folder that goes while it
    walks (git's gc prunes the empty folders of the refs it packs); Path.rglob raised."""
    return [Path(d) / n for d, _, names in os.walk(root) for n in names if n.endswith(".lock")]


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return STALE_LOCK_SECONDS  # gone meanwhile


def clear_stale(gitdir: Path, namespace: str, older_than: float = 0.0) -> int:
    """Remove ref lock files under ``namespace`` older than ``older_than`` seconds."""
    now = time.time()
    removed = 0
    for path in _locks(gitdir / namespace):
        try:
            if now - path.stat().st_mtime >= older_than:
                path.unlink()
                removed += 1
        except OSError:
            continue
    return removed


@contextmanager
def sync_reads() -> Iterator[None]:
    """No object cache and no hash of each object read, for what runs inside
    (libgit2's defaults, both on, afterwards; the settings are the process's).

    A sync reads each object of what came in once, and the cache (up to 256 MiB)
    held 45 MiB at the end of a first pull of 100,000, given back in pieces the
    process could not return; without it the pull takes the same time.  The hash
    was a sixth of the instructions of a first push's secret check at 4,000: a
    sync reads what this store wrote or git's ``index-pack`` hashed as it came in,
    a damaged object still fails its zlib check, and the remote's ``index-pack``
    hashes what a push sends (the bytes its check read).
    """
    pygit2.settings.enable_caching(False)
    pygit2.settings.enable_strict_hash_verification(False)
    try:
        yield
    finally:
        pygit2.settings.enable_strict_hash_verification(True)
        pygit2.settings.enable_caching(True)
