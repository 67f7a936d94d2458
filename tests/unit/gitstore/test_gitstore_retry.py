"""The retry loops' one home (``gitstore/fs/retry.py``), on a clock the test moves."""

from __future__ import annotations

import random

import pytest

from gitstore.fs import retry


class Machine:
    """Monotonic time that moves only when the loop sleeps (so nothing here is timed)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> Machine:
    m = Machine()
    monkeypatch.setattr(retry.time, "monotonic", m.monotonic)
    monkeypatch.setattr(retry.time, "sleep", m.sleep)
    return m


def test_until_tries_at_once_then_every_poll_until_the_time_is_up(machine: Machine) -> None:
    tries = [a.number for a in retry.until(1.0, 0.25)]
    assert tries == [0, 1, 2, 3, 4]  # at 0, .25, .5, .75 and 1.0 s: the last is at the limit
    assert machine.slept == [0.25] * 4


def test_until_with_no_time_tries_once(machine: Machine) -> None:
    assert [a.last for a in retry.until(0, 0.05)] == [True]
    assert machine.slept == []


def test_a_try_that_read_its_time_as_not_up_is_followed_by_another(machine: Machine) -> None:
    """The loop's own reading of ``last`` is the caller's: a caller that saw time left
    is never left with a loop that ends without telling it."""
    seen = []
    for attempt in retry.until(0.1, 0.1):
        seen.append(attempt.last)
        machine.now += 5  # time passes after the caller looked
    assert seen == [False, True]


def test_jittered_sleeps_between_tries_only_and_longer_each_time(
    machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(random, "uniform", lambda low, high: high)  # the longest
    assert list(retry.jittered(4, jitter=0.5)) == [0, 1, 2, 3]
    assert machine.slept == [0.5, 1.0, 1.5]


def test_growing_waits_a_step_more_after_each_try(machine: Machine) -> None:
    for attempt in retry.growing(3, 0.01):
        if attempt == 1:
            break
    assert machine.slept == [0.01]
    machine.slept.clear()
    assert list(retry.growing(3, 0.01)) == [0, 1, 2]
    assert machine.slept == pytest.approx([0.01, 0.02])


def test_a_loop_left_early_sleeps_no_more(machine: Machine) -> None:
    for _ in retry.jittered(60):
        break
    for _ in retry.until(30.0, 1.0):
        break
    assert machine.slept == []


def test_before_shares_one_deadline_between_two_loops(machine: Machine) -> None:
    """Two loops of one command against one deadline: the second has only what is left."""
    end = retry.deadline(1.0)
    first = [a.number for a in retry.before(end, 0.25) if a.number < 2 or a.last]
    assert first == [0, 1, 4]
    assert [a.last for a in retry.before(end, 0.25)] == [True]  # the time is spent
    assert machine.slept == [0.25] * 4


def test_pausing_waits_each_pause_after_its_try_and_none_after_the_last(
    machine: Machine,
) -> None:
    assert list(retry.pausing((0.2, 1.0, 3.0))) == [0, 1, 2, 3]
    assert machine.slept == [0.2, 1.0, 3.0]
    machine.slept.clear()
    for attempt in retry.pausing((0.2, 1.0)):
        if attempt == 1:
            break
    assert machine.slept == [0.2]


def test_tries_never_sleeps(machine: Machine) -> None:
    assert list(retry.tries(3)) == [0, 1, 2]
    assert list(retry.tries(0)) == []
    assert machine.slept == []
