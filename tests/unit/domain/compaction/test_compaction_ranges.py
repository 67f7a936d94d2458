"""Range bounds and their resolution (reference section 4.3, cases 37-39, 44-47)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gitstore.events import Event, format_time
from porcelain.domain.compaction.bounds import (
    Ago,
    Count,
    FromEnd,
    LastCompaction,
    Position,
    RuleBound,
    parse_cli_bound,
    parse_duration,
    parse_rule_bound,
    parse_turn_spec,
)
from porcelain.domain.compaction.ranges import (
    RangeOverrides,
    parse_range_overrides,
    resolve_rule_range,
)
from porcelain.errors import UsageError, UserError

from .builders import comp, reset, turns

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=1)
NONE = RangeOverrides()


def hourly(k: int) -> list[Event]:
    """k turns, turn i starting at T0 + i hours."""
    events = turns(k)
    for i, event in enumerate(events):
        event["timestamp"] = format_time(T0 + timedelta(hours=i // 3))
    return events


def rng(
    events: list[Event],
    first: RuleBound | None = None,
    last: RuleBound | None = None,
    o: RangeOverrides = NONE,
    now: datetime = NOW,
) -> tuple[int, int] | None:
    return resolve_rule_range(events, first, last, o, now)


# -- parsing ------------------------------------------------------------------------------


def test_durations() -> None:
    assert parse_duration("5h") == timedelta(hours=5)
    assert parse_duration("30m") == timedelta(minutes=30)
    assert parse_duration("2d") == timedelta(days=2)
    assert parse_duration("1w") == timedelta(weeks=1)
    assert parse_duration("1h30m") == timedelta(minutes=90)
    assert parse_duration("5 days") == timedelta(days=5)
    for bad in ("", "5", "h", "5x", "five hours", "-5h"):
        assert parse_duration(bad) is None, bad


def test_rule_bounds() -> None:  # case 63, string forms
    assert parse_rule_bound("3") == Count(3)
    assert parse_rule_bound("0") == Count(0)
    assert parse_rule_bound("@5") == Position(5)
    assert parse_rule_bound("-3") == FromEnd(3)
    assert parse_rule_bound("5h") == Ago(timedelta(hours=5))
    assert parse_rule_bound("last") == LastCompaction()
    assert parse_rule_bound("last-compaction") == LastCompaction()
    for bad in ("@0", "@-1", "-0", "abc", "@x", ""):
        with pytest.raises(UsageError):
            parse_rule_bound(bad)


def test_rule_bound_error_names_flag_and_value() -> None:
    with pytest.raises(UsageError) as err:
        parse_rule_bound("soon", "--keep-last")
    assert "--keep-last" in err.value.message and "'soon'" in err.value.message


def test_cli_bounds() -> None:
    assert parse_cli_bound("5", "--from", allow_last_compaction=True) == Position(5)
    assert parse_cli_bound("-1", "--from", allow_last_compaction=True) == FromEnd(0)
    assert parse_cli_bound("-3", "--to", allow_last_compaction=False) == FromEnd(2)
    assert parse_cli_bound("5h", "--to", allow_last_compaction=False) == Ago(timedelta(hours=5))
    assert parse_cli_bound("last", "--from", allow_last_compaction=True) == LastCompaction()
    with pytest.raises(UsageError, match="--from 0"):
        parse_cli_bound("0", "--from", allow_last_compaction=True)
    with pytest.raises(UsageError):
        parse_cli_bound("-0", "--to", allow_last_compaction=False)
    with pytest.raises(UsageError, match="'abc'"):
        parse_cli_bound("abc", "--to", allow_last_compaction=False)
    with pytest.raises(UsageError):
        parse_cli_bound("last-compaction", "--to", allow_last_compaction=False)


def test_turn_specs() -> None:
    assert parse_turn_spec("3") == (3, 3)
    assert parse_turn_spec("2..5") == (2, 5)
    assert parse_turn_spec("2..") == (2, None)
    assert parse_turn_spec("..5") == (None, 5)
    assert parse_turn_spec("..") == (None, None)
    for bad in ("x", "-1", "1..x", "5..3", "1...3"):
        with pytest.raises(UsageError):
            parse_turn_spec(bad)


def test_conflicting_flags_are_refused() -> None:
    with pytest.raises(UsageError, match="--keep-first cannot be used with --from"):
        parse_range_overrides(keep_first="1", from_="2")
    with pytest.raises(UsageError):
        parse_range_overrides(first=2, last=3)
    with pytest.raises(UsageError):
        parse_range_overrides(turn="3", to="4")
    parse_range_overrides(keep_first="1", first=16)
    parse_range_overrides(keep_last="2", last=16)


def test_keep_greater_than_selection_is_refused() -> None:  # case 45
    with pytest.raises(UsageError) as err:
        parse_range_overrides(keep_first="17", first=16)
    assert err.value.message == (
        "--keep-first 17 is greater than --first 16: nothing would remain to compact"
    )
    with pytest.raises(UsageError, match="--keep-last 4 is greater than --last 3"):
        parse_range_overrides(keep_last="4", last="3")
    assert parse_range_overrides(keep_first="16", first=16).first == 16


def test_non_numeric_counts_are_refused() -> None:
    with pytest.raises(UsageError, match="--first"):
        parse_range_overrides(first="many")
    with pytest.raises(UsageError):
        parse_range_overrides(last=-1)


# -- resolution ---------------------------------------------------------------------------


def test_basic_bounds() -> None:  # case 37
    assert rng(turns(3), Count(0), Count(0)) == (0, 2)
    assert rng(turns(4), Count(1), Position(3)) == (1, 2)
    assert rng(turns(4), Count(0), Count(1)) == (0, 2)
    assert rng(turns(9)) == (1, 7)  # default keep first 1, last 1


def test_after_last_compaction() -> None:  # case 38
    assert rng(turns(4), LastCompaction(), Count(0)) == (0, 3)
    assert rng([*turns(4), comp(0, 1)], LastCompaction(), Count(0)) == (2, 3)
    assert rng([*turns(4), comp(0, 3)], LastCompaction(), Count(0)) is None
    # max to_turn + 1 over all standing overlays, not the latest one
    assert rng([*turns(6), comp(0, 3), comp(0, 1)], LastCompaction(), Count(0)) == (4, 5)
    # a withdrawn overlay does not count
    assert rng([*turns(4), comp(0, 3), reset()], LastCompaction(), Count(0)) == (0, 3)


def test_empty_results() -> None:  # case 39
    assert rng(turns(4), Count(5), Count(0)) is None
    assert rng(turns(4), Count(0), Count(5)) is None
    assert rng(turns(2), Count(1), Position(1)) is None
    assert rng(turns(2), Count(0), Position(100)) == (0, 1)
    assert rng([], Count(0), Count(0)) is None


def test_from_end_rule_bounds() -> None:
    assert rng(turns(20), FromEnd(10), FromEnd(3)) == (9, 16)
    assert rng(turns(5), FromEnd(10), Count(0)) == (0, 4)  # saturates at 0
    assert rng(turns(20), Count(0), FromEnd(20)) is None
    assert rng(turns(30), Count(0), FromEnd(20)) == (0, 9)


def test_keep_first_and_first() -> None:  # case 44
    twenty = turns(20)
    assert rng(twenty, o=parse_range_overrides(keep_first="1", first=16)) == (1, 15)
    assert rng(twenty, o=parse_range_overrides(keep_last="2", last=16)) == (4, 17)
    assert rng(twenty, o=parse_range_overrides(first=16)) == (0, 15)
    assert rng(twenty, o=parse_range_overrides(last=3)) == (17, 19)


def test_turn_selector() -> None:  # case 46
    five = turns(5)
    assert rng(five, o=parse_range_overrides(turn="3")) == (2, 2)
    assert rng(five, o=parse_range_overrides(turn="2..")) == (1, 4)
    assert rng(five, o=parse_range_overrides(turn="..2")) == (0, 1)
    for spec in ("100", "..100", "0"):
        with pytest.raises(UserError) as err:
            rng(five, o=parse_range_overrides(turn=spec))
        assert err.value.message == (
            f"turn {spec.strip('.')} out of range (conversation has 5 turns)"
        )


def test_zero_counts_select_nothing() -> None:  # case 46
    for o in (parse_range_overrides(last=0), parse_range_overrides(first=0)):
        assert o.selects_nothing
        assert rng(turns(5), o=o) is None


def test_from_and_to() -> None:
    nine = turns(9)
    assert rng(nine, o=parse_range_overrides(from_="3", to="6")) == (2, 5)
    assert rng(nine, o=parse_range_overrides(from_="-2", to="-1")) == (7, 8)
    assert rng(nine, o=parse_range_overrides(from_="2", to="99")) == (1, 8)
    assert rng(nine, o=parse_range_overrides(from_="4", to="2")) is None
    assert rng(turns(5), o=parse_range_overrides(from_="9")) is None
    # --from alone leaves the end to the rule (keep last 1 by default)
    assert rng(nine, o=parse_range_overrides(from_="3")) == (2, 7)
    assert rng(nine, Count(1), Count(0), o=parse_range_overrides(to="5")) == (1, 4)
    assert rng([*nine, comp(0, 4)], o=parse_range_overrides(from_="last")) == (5, 7)


def test_keep_overrides_replace_the_rule_bounds() -> None:  # case 49
    o = parse_range_overrides(keep_last="5")
    assert rng(turns(20), Count(3), Count(1), o) == (3, 14)
    assert rng(turns(20), Count(3), Count(1), parse_range_overrides(keep_first="@2")) == (1, 18)


def test_rule_keep_last_duration() -> None:  # case 47
    five = hourly(5)
    recent = T0 + timedelta(hours=6)
    assert rng(five, Count(0), Ago(timedelta(days=30)), now=recent) is None
    assert rng(five, Count(0), Ago(timedelta(hours=3)), now=recent) == (0, 3)
    assert rng(five, Count(0), Ago(timedelta(hours=5)), now=recent) == (0, 1)


def test_rule_keep_first_duration_counts_from_the_first_event() -> None:
    five = hourly(5)
    assert rng(five, Ago(timedelta(hours=2)), Count(0)) == (3, 4)
    assert rng(five, Ago(timedelta(minutes=30)), Count(0)) == (1, 4)
    assert rng(five, Ago(timedelta(hours=9)), Count(0)) is None
    assert rng([], Ago(timedelta(hours=1)), Count(0)) is None


def test_cli_durations_count_back_from_now() -> None:
    five = hourly(5)
    now = T0 + timedelta(hours=10)
    assert rng(five, o=parse_range_overrides(from_="7h", to="-1"), now=now) == (4, 4)
    assert rng(five, o=parse_range_overrides(from_="20h", to="-1"), now=now) == (0, 4)
    assert rng(five, Count(0), o=parse_range_overrides(to="7h"), now=now) == (0, 3)
    assert rng(five, Count(0), o=parse_range_overrides(to="20h"), now=now) is None
    assert rng(five, o=parse_range_overrides(from_="6h", to="-1"), now=now) is None


def test_naive_now_is_utc() -> None:
    five = hourly(5)
    naive = (T0 + timedelta(hours=6)).replace(tzinfo=None)
    assert rng(five, Count(0), Ago(timedelta(hours=3)), now=naive) == (0, 3)
