"""Taking over a file another process locked with ``flock`` and may have left behind.

A writer holds an ``flock`` on its record (a journal, a pending operation)
for as long as it lives; the kernel drops it when the process dies.  So a
record whose lock can be taken is one whose writer is gone, and whoever
takes it finishes the writer's work.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def claim(path: Path, still_there: bool = False) -> int | None:
    """A descriptor holding ``path``'s lock, or None while its writer lives (or it is gone).

    ``still_there``: also None when the file was removed (and perhaps made
    again) between the open and the lock, as a writer that completes does.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if still_there and os.fstat(fd).st_ino != os.stat(path).st_ino:
            raise OSError("completed and removed meanwhile")
    except OSError:
        os.close(fd)
        return None
    return fd
