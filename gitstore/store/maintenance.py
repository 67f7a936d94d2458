"""Keeping a store small: libgit2 never packs, so jp runs git's own maintenance.

Every object jp writes is a loose file, a 4 KiB block or more on most file
systems: 100,000 events are 300,000 files and over a gigabyte.  git packs
them into a few percent of that and packs refs too, but only git's own
commands run ``git gc --auto``; libgit2 never does.

So after writes jp estimates the loose objects the way git does (the files
in one of the 256 fan-out folders, times 256) and counts the packs (a pull
or an import leaves some); past git's own
thresholds (``gc.auto``, 6,700 by default, 0 turns it off; ``gc.autoPackLimit``,
50) it starts ``git gc --auto --quiet`` in the background.  git checks again, packs objects and refs,
writes the commit-graph, and prunes only unreachable objects older than two
weeks, so a concurrent writer loses nothing.  Without a git command line
nothing is packed (jp needs git to sync and import, and ``jp doctor`` says it
is missing): libgit2's ``compress_references`` reads ``packed-refs`` before it
takes the file's lock, so a ref another process moved meanwhile went back.

The operation log (``oplog.py``) keeps every tip an operation moved
reachable; maintenance trims it to its retention (porcelain's
``store.op_log_retention_days``, 90 days by default), so what only old
operations kept can go with git's gc.  A maintenance run trims first; and
after each recorded operation, the log is trimmed once its oldest operation
is a day past the retention (so a trim, which writes the kept operations
again, runs at most about once a day).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.fs.place import Place
from gitstore.git import objects, pack
from gitstore.lazy import loaded

if TYPE_CHECKING:  # subprocess is imported when maintenance runs: most commands never do
    import subprocess

    import pygit2

    from gitstore.oplog.model import Op
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

GC_AUTO = 6700  # git's default gc.auto
PACK_LIMIT = 50  # git's default gc.autoPackLimit
CHECK_EVERY = 256  # writes between two estimates within one process
TRIM_SLACK = 86400.0  # seconds past the retention before a trim after an operation
Retention = Callable[[], float]


def trim_oplog(place: Place, retention: float, now: float) -> int:
    """Drop the operations older than ``retention`` seconds; returns how many went."""
    from gitstore.oplog import log as oplog  # lazy: only a trim reads the op log

    oldest = oplog.oldest_time(place.repo)
    if oldest is None or oldest >= now - retention:
        return 0
    return oplog.trim(place, now - retention)


def trim_oplog_when_due(place: Place, retention: Retention, newest: Op) -> int:
    """After recording ``newest``: trim once the oldest operation is well past retention."""
    if newest.since and newest.since >= newest.time - TRIM_SLACK:
        return 0  # younger than a day: the retention cannot be due (at least a day)
    keep = retention()
    if newest.since >= newest.time - keep - TRIM_SLACK:
        return 0
    return trim_oplog(place, keep, newest.time)  # on the clock that stamped it


def threshold(repo: pygit2.Repository, key: str = "gc.auto", default: int = GC_AUTO) -> int:
    try:
        return int(repo.config.get_int(key))
    except (KeyError, ValueError, pygit2.GitError):
        return default


def _git_thresholds(gitdir: Path) -> tuple[int, int]:
    """``gc.auto`` and ``gc.autoPackLimit`` as one git process reads them."""
    from gitstore.git import command  # lazy: as subprocess

    done = command.run(
        gitdir, ["config", "--type=int", "--get-regexp", r"^gc\.auto(packlimit)?$"], check=False
    )
    found = dict(
        line.split(" ", 1)
        for line in done.stdout.decode("ascii", "replace").split("\n")
        if " " in line
    )
    values = []
    for key, default in (("gc.auto", GC_AUTO), ("gc.autopacklimit", PACK_LIMIT)):
        try:
            values.append(int(found[key]))
        except (KeyError, ValueError):
            values.append(default)
    return values[0], values[1]


def due(place: Place) -> bool:
    """Past git's own thresholds: loose objects (``gc.auto``) or packs (``gc.autoPackLimit``),
    read by libgit2 when this process has loaded it, else by git (an import never
    loads libgit2 for them)."""
    gitdir = place.gitdir
    if loaded("pygit2"):
        limit, pack_limit = (
            threshold(place.repo),
            threshold(place.repo, "gc.autoPackLimit", PACK_LIMIT),
        )
    else:
        limit, pack_limit = _git_thresholds(gitdir)
    if limit <= 0:
        return False
    return objects.loose_estimate(gitdir) > limit or 0 < pack_limit < pack.count(gitdir)


class Maintenance:
    """Runs git's maintenance for one store; at most one background run at a time."""

    def __init__(
        self,
        repo: pygit2.Repository,
        gitdir: Path,
        retention: Retention | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.repo = repo
        self.gitdir = gitdir
        self.retention = retention
        self.now = (
            now  # the store's clock: an operation's age is told on the clock it was stamped by
        )
        self.writes = 0
        self._running: subprocess.Popen[bytes] | None = None

    def wrote(self, count: int) -> None:
        """Count writes; check on the first of a process, then every ``CHECK_EVERY``."""
        before = self.writes
        self.writes += count
        if before and before // CHECK_EVERY == self.writes // CHECK_EVERY:
            return
        if due(Place.of(self.repo, self.gitdir)):
            self.run(force=False, wait=False)

    def run(self, force: bool, wait: bool) -> str:
        """Maintain now: ``git gc`` (``--auto`` unless forced), in the background unless
        ``wait``.  Returns what ran ("git gc", "git gc --auto", or "": one runs already, or
        there is no git)."""
        import shutil  # lazy: start-up; only maintenance starts git

        from gitstore.git import command  # lazy: as shutil (subprocess)

        if self.retention is not None:
            trim_oplog(Place.of(self.repo, self.gitdir), self.retention(), self.now())
        if shutil.which("git") is None:
            return ""
        if self._running is not None and self._running.poll() is None:
            if not wait:
                return ""
            self._running.wait()
        args = ["gc", "--quiet"] if force else ["gc", "--auto", "--quiet"]
        self._running = command.start(self.gitdir, args, wait)
        return " ".join(["git", *args])
