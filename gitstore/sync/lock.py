"""One pull or push per store and remote at a time, and the lock files that
killed git processes leave behind in the namespaces sync owns.

``git update-ref`` and ``git fetch`` lock every ref they write with a
``<ref>.lock`` file; killed midway they leave those files, and every later
write of those refs fails until someone removes them.  Under this lock no
other jp writes ``refs/jp-push/<remote>/``, so its stale lock files go at
once; in ``refs/jp-remotes/<remote>/`` (which plain ``git fetch`` writes
too) only lock files older than a minute go.  The journal's copies
(``refs/jp-remotes/<remote>/jp/``: ``journal`` and the ``incoming`` a pull holds
while it runs) are jp's alone, written only under this lock: a lock file there
is a killed jp's, or of a git it started that ends within moments, so it goes
once it is ``STALE_LOCK_SECONDS`` old (a younger one is waited for), as the
store's own ref locks do when their writer is gone.  Without that, a jp killed
while it held ``incoming.lock`` stopped every later sync with the remote.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
    if not root.is_dir():
        return []
    return [Path(d) / n for d, _, names in os.walk(root) for n in names if n.endswith(".lock")]


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return STALE_LOCK_SECONDS  # gone meanwhile


def clear_stale(gitdir: Path, namespace: str, older_than: float = 0.0) -> int:
    """Remove ref lock files under ``namespace`` older than ``older_than`` seconds."""
    root = gitdir / namespace
    if not root.is_dir():
        return 0
    now = time.time()
    removed = 0
    # os.walk passes over a folder that goes while it walks (git's gc prunes the
    # empty folders of the refs it packs); Path.rglob raised there
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".lock"):
                continue
            path = Path(folder) / name
            try:
                if now - path.stat().st_mtime >= older_than:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
    return removed
