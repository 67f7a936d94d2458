"""Advisory file locks under ``<gitdir>/jp/locks/`` that the kernel drops when
the holder dies, so a killed jp never leaves a stale lock behind."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def held(gitdir: Path, name: str, wait: float, busy: Exception) -> Iterator[None]:
    """Hold lock ``name``, waiting up to ``wait`` seconds, else raise ``busy``."""
    folder = gitdir / "jp" / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise busy from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)
