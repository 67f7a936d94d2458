"""The porcelain side's clock and randomness, read in this one place.

Everything of the porcelain that puts a time or a random value into the store or
the output (event timestamps, conversation ids, the opening call of a review,
``archived_at``/``pinned_at``, the time of a time-based compaction rule, elapsed
times) asks ``current()`` (or the ``now``/``now_text``/``monotonic``/``token``
shortcuts below).  The clock is the system's unless the testing hook installs a
seeded one (``cli.main`` reads it, as it reads ``JP_FAULT``; not for users):

- ``JP_TEST_CLOCK=<RFC 3339 time>[/<seconds>]``: the clock starts at that time
  and every reading moves it on by the step (default one second), the
  monotonic clock likewise from zero;
- ``JP_TEST_SEED=<integer>``: the random source (``token``) is seeded (default 0
  under ``JP_TEST_CLOCK``, else the system's).

So a command run twice with the same hook, store and input writes the same
events, ids and commits, and prints the same text: tests compare whole outputs.
The store is handed the same clock (``for_store``): what gitstore records (the
operation log's ids and times, metadata stamps, activations, a pull's fork ids)
comes from it too.  Its readings of a seeded clock do not move it on, and its
ids come from a random source of their own seeded alike, so handing the clock
to the store changes nothing the porcelain reads.
The jitter of retry sleeps is no data and stays the system's.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from gitstore import format_time, parse_time

if TYPE_CHECKING:
    import random

    from gitstore import Clock as StoreClock

DEFAULT_STEP = 1.0  # seconds a seeded clock moves on per reading
STORE_SEED = 7919  # the store's random source: the seed plus this, apart from the porcelain's


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time (aware, UTC)."""
        ...

    def time(self) -> float:
        """The current time in seconds since the epoch."""
        ...

    def monotonic(self) -> float:
        """Seconds of a clock that never goes back, for durations only."""
        ...

    def token(self, nbytes: int) -> str:
        """``nbytes`` random bytes as hex (for ids)."""
        ...


class SystemClock:
    """The machine's clocks and the operating system's randomness."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def token(self, nbytes: int) -> str:
        return os.urandom(nbytes).hex()


class SeededClock:
    """A clock for tests: ``start`` (None: the system's time) moved on by ``step`` per
    reading; randomness from ``seed`` (None: the system's)."""

    def __init__(
        self, start: datetime | None, step: float = DEFAULT_STEP, seed: int | None = None
    ) -> None:
        self._next = start.astimezone(UTC) if start is not None else None
        self._step = timedelta(seconds=step)
        self._ticks = 0
        self._random: random.Random | None = None
        self._seed = seed
        self._store_view: _StoreView | None = None
        if seed is not None:
            # lazy: only a test's clock needs it
            import random

            self._random = random.Random(seed)
        self._lock = threading.Lock()  # readings from a spinner or tool thread stay in order

    def now(self) -> datetime:
        if self._next is None:
            return datetime.now(UTC)
        with self._lock:
            moment, self._next = self._next, self._next + self._step
        return moment

    def time(self) -> float:
        return self.now().timestamp()

    def monotonic(self) -> float:
        if self._next is None:
            return time.monotonic()
        with self._lock:
            self._ticks += 1
            return self._ticks * self._step.total_seconds()

    def token(self, nbytes: int) -> str:
        if self._random is None:
            return os.urandom(nbytes).hex()
        with self._lock:
            return self._random.randbytes(nbytes).hex()

    def peek(self) -> datetime:
        """The time the next reading will give, without moving the clock on."""
        if self._next is None:
            return datetime.now(UTC)
        with self._lock:
            return self._next

    def for_store(self) -> _StoreView:
        """This clock as the store reads it (one view, so its ids never repeat)."""
        if self._store_view is None:
            self._store_view = _StoreView(self, self._seed)
        return self._store_view


class _StoreView:
    """A seeded clock as the store reads it: ``peek``s, and tokens of its own stream."""

    def __init__(self, clock: SeededClock, seed: int | None) -> None:
        self._clock = clock
        self._tokens = SeededClock(None, seed=None if seed is None else seed + STORE_SEED)

    def now(self) -> datetime:
        return self._clock.peek()

    def token(self, nbytes: int) -> str:
        return self._tokens.token(nbytes)


def from_hook(clock_spec: str | None, seed_spec: str | None) -> SeededClock:
    """The clock ``JP_TEST_CLOCK`` and ``JP_TEST_SEED`` describe; ValueError names a bad one."""
    start: datetime | None = None
    step = DEFAULT_STEP
    if clock_spec:
        moment, _, step_text = clock_spec.strip().partition("/")
        try:
            start = parse_time(moment)
        except ValueError:
            raise ValueError(f"JP_TEST_CLOCK: {moment!r} is not an RFC 3339 time") from None
        if step_text:
            try:
                step = float(step_text.removesuffix("s"))
            except ValueError:
                step = -1.0
            if not 0 <= step <= 86400:
                raise ValueError(f"JP_TEST_CLOCK: step {step_text!r} is not 0 to 86400 seconds")
    seed: int | None = 0 if clock_spec else None
    if seed_spec:
        try:
            seed = int(seed_spec)
        except ValueError:
            raise ValueError(f"JP_TEST_SEED: {seed_spec!r} is not an integer") from None
    return SeededClock(start, step, seed)


_current: Clock = SystemClock()


def current() -> Clock:
    return _current


def install(clock: Clock | None) -> None:
    """Use ``clock`` from now on (None: the system's again)."""
    global _current
    _current = clock if clock is not None else SystemClock()


def for_store() -> StoreClock:
    """The clock a ``Store`` is given: this one (a seeded one as the store reads it)."""
    clock = _current
    return clock.for_store() if isinstance(clock, SeededClock) else clock


def now() -> datetime:
    return _current.now()


def now_text() -> str:
    """The current time as events store it (RFC 3339, UTC, microseconds)."""
    return format_time(_current.now())


def monotonic() -> float:
    return _current.monotonic()


def token(nbytes: int) -> str:
    return _current.token(nbytes)


def elapsed() -> float:
    """The machine's monotonic seconds, for a budget or a time limit (recall's
    regex budget, the web view's request limits): always the real clock, never a
    test's seeded one, whose steps would spend a budget at every reading; it
    reaches no store and no output."""
    return time.monotonic()


def _urlsafe(data: bytes) -> str:
    import base64  # lazy: start-up; only a command that makes an id or a credential needs it

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def secret(nbytes: int) -> str:
    """``nbytes`` random bytes, URL-safe, for a credential (`jp serve`'s token):
    always the operating system's randomness, never a test seed's, so that no
    seeded clock can make a credential guessable (it is never stored or compared
    across runs)."""
    return _urlsafe(os.urandom(nbytes))


def name_uuid(namespace: str, name: str) -> str:
    """The UUID (version 5) of ``name`` in ``namespace`` (a UUID's text): no clock and
    no randomness, the same on every machine and every run, for ids another tool's
    records need (a session or a record given back) that must not change on export."""
    import uuid  # lazy: only a session export makes one

    return str(uuid.uuid5(uuid.UUID(namespace), name))
