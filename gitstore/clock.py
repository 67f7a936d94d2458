"""The time, read in one place.

What the store records (when an operation ran and its id, when a conversation
was last activated, the stamp of a metadata line, the id a pull gives a
diverged continuation) comes from a ``Clock`` the store is given
(``Store(..., clock=...)``; the system's clock by default), so a test can
pin or step it and compare whole outputs.  A fixed clock must never make
the store wait: waiting (for a lock, between retries) and the age of a file
or a lock (which the file system stamps with the machine's own time) use
the machine's clocks below, never the given one.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """Where the store reads the time it records, and the random part of its ids."""

    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""
        ...

    def token(self, nbytes: int) -> str:
        """``nbytes`` random bytes as hex (an operation's id)."""
        ...


def _random_token(nbytes: int) -> str:
    return os.urandom(nbytes).hex()


class SystemClock:
    """The machine's clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def token(self, nbytes: int) -> str:
        return _random_token(nbytes)


SYSTEM = SystemClock()


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class FixedClock:
    """Always the same moment (naive times are UTC); ``set`` moves it."""

    def __init__(self, at: datetime) -> None:
        self.at = _aware(at)

    def now(self) -> datetime:
        return self.at

    def set(self, at: datetime) -> None:
        self.at = _aware(at)

    def token(self, nbytes: int) -> str:
        return _random_token(nbytes)


def seconds(clock: Clock) -> float:
    """``clock``'s time in seconds since the epoch."""
    return clock.now().timestamp()


# -- the machine's clocks: for waiting and for the age of files ------------------------


def wall() -> float:
    """The machine's time in seconds since the epoch, to compare with a file's mtime or a
    lock owner's record (never for what the store records: that is ``Clock``'s)."""
    return time.time()


def monotonic() -> float:
    """A clock for deadlines, which never goes back."""
    return time.monotonic()


def sleep(seconds: float) -> None:
    """Wait (for a lock another process holds, between retries)."""
    time.sleep(seconds)
