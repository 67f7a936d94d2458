"""A write the disk dropped: named as the fault it is, never as another writer.

On a nearly full disk libgit2 may report a ref update as failed, or "succeed"
at writing an object that is then missing; both look like a race to the
caller.  ``check_written`` tells them apart by looking for the object.

A missing object with the disk fine is named as git's prune beside the write
(``pruning``), not as the disk's fault; what a write does beside a prune is
``pruned.py``'s one rule.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.errors import EnvironmentFault
from gitstore.fs.place import Place

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

LOW_SPACE = 1 << 20  # bytes free under which a lost write is blamed on a full disk


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
