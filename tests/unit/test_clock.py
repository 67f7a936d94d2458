"""porcelain/clock.py: the system clock, the seeded one of the testing hook, and the
rule that the porcelain reads the time nowhere else."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gitstore.events import parse_time
from porcelain import clock
from porcelain.clock import SeededClock, SystemClock, from_hook

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _system_clock_after() -> Iterator[None]:
    yield
    clock.install(None)


def test_a_seeded_clock_moves_on_by_its_step_per_reading() -> None:
    seeded = SeededClock(T0, step=0.5)
    assert [seeded.now() for _ in range(3)] == [T0 + timedelta(seconds=s) for s in (0, 0.5, 1)]
    assert seeded.time() == (T0 + timedelta(seconds=1.5)).timestamp()
    assert [seeded.monotonic() for _ in range(2)] == [0.5, 1.0]


def test_a_seed_gives_the_same_tokens_and_another_seed_others() -> None:
    one, again, other = SeededClock(T0, seed=7), SeededClock(T0, seed=7), SeededClock(T0, seed=8)
    tokens = [one.token(8) for _ in range(3)]
    assert tokens == [again.token(8) for _ in range(3)]
    assert tokens != [other.token(8) for _ in range(3)]
    assert len(set(tokens)) == 3 and all(len(t) == 16 for t in tokens)



def test_the_store_reads_a_seeded_clock_without_moving_it_or_its_tokens() -> None:
    """The clock handed to a Store: the porcelain's readings and tokens are those it had
    without a store, and the store's own are seeded too."""
    alone, shared = SeededClock(T0, seed=7), SeededClock(T0, seed=7)
    view = shared.for_store()
    assert shared.for_store() is view, "one view: the store's ids never repeat"
    assert view.now() == T0 and view.now() == T0, "the store's readings do not step"
    store_tokens = [view.token(8) for _ in range(3)]
    assert [shared.now(), shared.now()] == [alone.now(), alone.now()]
    assert view.now() == T0 + timedelta(seconds=2)
    assert [shared.token(8) for _ in range(3)] == [alone.token(8) for _ in range(3)]
    again = SeededClock(T0, seed=7).for_store()
    assert store_tokens == [again.token(8) for _ in range(3)]
    assert len(set(store_tokens)) == 3
    assert SeededClock(T0, seed=8).for_store().token(8) != store_tokens[0]


def test_the_store_gets_the_system_clock_as_it_is() -> None:
    clock.install(None)
    handed = clock.for_store()
    assert isinstance(handed, SystemClock)
    clock.install(SeededClock(T0, seed=1))
    assert clock.for_store().now() == T0

def test_the_system_clock_is_the_machines() -> None:
    system = SystemClock()
    before = datetime.now(UTC)
    assert before <= system.now() <= datetime.now(UTC)
    assert system.monotonic() <= system.monotonic()
    assert len(system.token(4)) == 8 and len({system.token(8) for _ in range(5)}) == 5


def test_the_hook_is_parsed_and_bad_values_are_named() -> None:
    hooked = from_hook("2026-01-05T09:00:00Z", None)
    assert [hooked.now(), hooked.now()] == [T0, T0 + timedelta(seconds=1)]
    assert from_hook("2026-01-05T09:00:00Z/0.25s", None).monotonic() == 0.25
    assert from_hook("2026-01-05T09:00:00Z", None).token(4) == SeededClock(T0, seed=0).token(4)
    assert from_hook("2026-01-05T09:00:00Z", "3").token(4) == SeededClock(T0, seed=3).token(4)
    only_seed = from_hook(None, "3")
    assert only_seed.token(4) == SeededClock(T0, seed=3).token(4)
    assert abs(only_seed.now() - datetime.now(UTC)) < timedelta(minutes=5)
    for spec, seed, message in [
        ("yesterday", None, "JP_TEST_CLOCK: 'yesterday' is not an RFC 3339 time"),
        ("2026-01-05T09:00:00Z/-1", None, "step '-1' is not 0 to 86400 seconds"),
        ("2026-01-05T09:00:00Z/fast", None, "step 'fast'"),
        ("2026-01-05T09:00:00Z", "x", "JP_TEST_SEED: 'x' is not an integer"),
    ]:
        with pytest.raises(ValueError, match=message):
            from_hook(spec, seed)


def test_the_shortcuts_read_the_installed_clock() -> None:
    clock.install(SeededClock(T0))
    assert clock.now() == T0
    assert clock.now_text() == "2026-01-05T09:00:01.000000Z"
    assert parse_time(clock.now_text()) == T0 + timedelta(seconds=2)
    assert clock.monotonic() == 1.0
    clock.install(None)
    assert isinstance(clock.current(), SystemClock)


READS = {
    "datetime.now",
    "datetime.utcnow",
    "datetime.today",
    "time.time",
    "time.time_ns",
    "time.monotonic",
    "time.perf_counter",
    "uuid.uuid4",
    "uuid.uuid1",
    "os.urandom",
    "now_text",  # gitstore's, which reads the system clock
}


def _reads(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {a.name for a in node.names}
            found |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {f"import {a.name}" for a in node.names}
    return found


def test_the_porcelain_reads_the_clock_only_through_porcelain_clock() -> None:
    """Times, ids and random values that reach the store or the output come from
    porcelain/clock.py (the jitter of a retry's sleep, no data, may use `random`)."""
    bad = {}
    for path in sorted((ROOT / "porcelain").rglob("*.py")):
        if path.name == "clock.py" and path.parent.name == "porcelain":
            continue
        found = _reads(path) & (READS | {"import uuid", "import secrets"})
        if found:
            bad[path.relative_to(ROOT).as_posix()] = sorted(found)
    assert not bad


def test_the_hook_is_read_only_by_the_entry_points() -> None:
    # cli.main installs it; the early entry point names it only to leave such a run to cli
    readers = [
        p.relative_to(ROOT).as_posix()
        for p in sorted((ROOT / "porcelain").rglob("*.py"))
        if '"JP_TEST_CLOCK"' in p.read_text() or '"JP_TEST_SEED"' in p.read_text()
    ]
    assert readers == ["porcelain/cli.py", "porcelain/early/__init__.py"]
