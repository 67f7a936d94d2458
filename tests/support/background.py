"""A command run again and again beside a test (git's gc or pack-refs racing jp)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager


@contextmanager
def repeating(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Iterator[list[int]]:
    """Run ``argv`` over and over in a thread until the block ends; yields a one-item
    list that counts the runs finished (read it after the block)."""
    stop = threading.Event()
    rounds = [0]

    def again() -> None:
        while not stop.is_set():
            subprocess.run(list(argv), env=None if env is None else dict(env), capture_output=True)
            rounds[0] += 1

    worker = threading.Thread(target=again)
    worker.start()
    try:
        yield rounds
    finally:
        stop.set()
        worker.join()
