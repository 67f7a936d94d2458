"""A write the disk dropped: named as the fault it is, never as another writer.

On a nearly full disk libgit2 may report a ref update as failed, or "succeed"
at writing an object that is then missing; both look like a race to the
caller.  ``check_written`` tells them apart by looking for the object.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.errors import EnvironmentFault

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

LOW_SPACE = 1 << 20  # bytes free under which a lost write is blamed on a full disk


def check_written(repo: pygit2.Repository, gitdir: Path, oid: str) -> None:
    """Raise ``EnvironmentFault`` when the object jp just wrote is not in the store."""
    if pygit2.Oid(hex=oid) in repo.odb:
        return
    stat = os.statvfs(gitdir)
    kind = "no-space" if stat.f_bavail * stat.f_frsize < LOW_SPACE else "io"
    raise EnvironmentFault(kind, str(gitdir / "objects"), "objects were not stored")
