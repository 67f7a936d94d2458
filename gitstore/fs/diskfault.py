"""A write the disk dropped: named as the fault it is, never as another writer.

On a nearly full disk libgit2 may report a ref update as failed, or "succeed"
at writing an object that is then missing; both look like a race to the
caller.  ``check_written`` tells them apart by looking for the object.

git's prune (``git gc --prune=now``, ``git prune``) beside a write removes the
objects jp wrote before its ref points at them, and an empty ``objects/XX/``
between libgit2's mkdir and rename of a new object: ``retried`` writes such an
object again, and a missing object with the disk fine is named as that prune
(``pruned``), not as the disk's fault.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gitstore.errors import EnvironmentFault
from gitstore.fs import retry
from gitstore.fs.place import Place

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

LOW_SPACE = 1 << 20  # bytes free under which a lost write is blamed on a full disk
PRUNE_RETRIES = 5  # writes of one object that a concurrent prune may spoil
T = TypeVar("T")


def check_written(place: Place, oid: str) -> None:
    """Raise ``EnvironmentFault`` when the object jp just wrote is not in the store."""
    gitdir = place.gitdir
    if pygit2.Oid(hex=oid) in place.repo.odb:
        return
    stat = os.statvfs(gitdir)
    kind = "no-space" if stat.f_bavail * stat.f_frsize < LOW_SPACE else "io"
    if kind == "io" and pruning(gitdir, oid):
        kind = "pruned"
    raise EnvironmentFault(kind, str(gitdir / "objects"), "objects were not stored")


def pruning(gitdir: Path, oid: str) -> bool:
    """Whether git's prune took ``oid`` away: gc runs (``gc.pid``), or the object's
    folder is gone (prune removes the folders it empties; a dropped write does not)."""
    return (gitdir / "gc.pid").exists() or not (gitdir / "objects" / oid[:2]).is_dir()


def spoiled(exc: BaseException) -> bool:
    """libgit2 lost a new object's file: its folder vanished under it, or a tree or a
    commit was refused an object that is gone (a prune between the two writes)."""
    text = str(exc).lower()
    return any(
        words in text
        for words in (
            "failed to rename",
            "no such file or directory",
            "invalid object specified",
            "object not found",
        )
    )


def retried(write: Callable[[], T]) -> T:
    """``write()`` (one object), again when a concurrent prune spoiled it."""
    for attempt in retry.growing(PRUNE_RETRIES, 0.01):
        try:
            return write()
        except (pygit2.GitError, OSError) as exc:
            if not spoiled(exc):
                raise
            if attempt == PRUNE_RETRIES - 1:
                raise EnvironmentFault("pruned", "", str(exc)) from None
    raise AssertionError("unreachable")
