"""libgit2's object cache, off while a pull or push runs.

libgit2 keeps each commit and tree it reads in a cache of the repository (up
to 256 MiB by default), for the next read of the same object.  A sync reads
each object of what came in once: its checks walk every new chain once, and
nothing is read again.  In a first pull of 100,000 conversations the cache
held about 45 MiB at the end of the checks, and the memory it gave back when
it filled was left in pieces the process could not return.  Turned off, every
object read is freed when its reader is done with it; the pull takes the same
time.  The setting is the process's (libgit2 has no other), so it is put back
as the sync ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pygit2


@contextmanager
def off() -> Iterator[None]:
    """No object cache for what runs inside (libgit2's default, on, afterwards)."""
    pygit2.settings.enable_caching(False)
    try:
        yield
    finally:
        pygit2.settings.enable_caching(True)
