"""Trying again: every loop that waits out a sibling's lock or a concurrent move.

``until``/``before`` try for a time (each try an ``Attempt`` whose ``last`` says
the time is up; several loops of one command share a ``deadline``); ``jittered``,
``growing``, ``pausing`` and ``tries`` try a number of times, with random growing
sleeps (writers racing for one ref spread apart), growing ones (a prune beside a
write finishing), given ones (a git beside holding a lock) or none (a
compare-and-swap reads again what moved).  Waiting uses the machine's monotonic
clock: it is no data, and nothing records it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

JITTER = 0.002  # seconds of the longest first sleep of ``jittered``; the n-th is n times it


class Attempt:
    """One try of ``until``: ``last`` once the time is up (read once, then kept)."""

    def __init__(self, number: int, deadline: float) -> None:
        self.number = number
        self._deadline = deadline
        self._last: bool | None = None

    @property
    def last(self) -> bool:
        if self._last is None:
            self._last = time.monotonic() >= self._deadline
        return self._last


def deadline(limit: float) -> float:
    """The monotonic time ``limit`` seconds from now, for ``before``."""
    return time.monotonic() + limit


def until(limit: float, poll: float) -> Iterator[Attempt]:
    """Tries for ``limit`` seconds, ``poll`` seconds apart (the first at once)."""
    return before(deadline(limit), poll)


def before(deadline: float, poll: float) -> Iterator[Attempt]:
    """Tries until the monotonic time ``deadline``, ``poll`` seconds apart (the first
    at once, even when the time is up already)."""
    number = 0
    while True:
        attempt = Attempt(number, deadline)
        yield attempt
        if attempt.last:
            return
        time.sleep(poll)
        number += 1


def jittered(count: int, jitter: float = JITTER) -> Iterator[int]:
    """At most ``count`` tries (their numbers), a random sleep of up to
    ``jitter * n`` seconds after the n-th."""
    for number in range(count):
        yield number
        if number + 1 < count:
            import random  # lazy: only a try that failed (3 M instructions of every start)

            time.sleep(random.uniform(0, jitter * (1 + number)))


def growing(count: int, step: float) -> Iterator[int]:
    """At most ``count`` tries (their numbers), ``step * n`` seconds after the n-th."""
    for number in range(count):
        yield number
        if number + 1 < count:
            time.sleep(step * (1 + number))


def pausing(pauses: tuple[float, ...]) -> Iterator[int]:
    """``len(pauses) + 1`` tries (their numbers), ``pauses[n]`` seconds after the n-th."""
    for number in range(len(pauses) + 1):
        yield number
        if number < len(pauses):
            time.sleep(pauses[number])


def tries(count: int) -> Iterator[int]:
    """At most ``count`` tries (their numbers), one right after another."""
    yield from range(count)
