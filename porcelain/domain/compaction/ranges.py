"""Range resolution: rule bounds and CLI selectors -> a 0-based inclusive turn range.

Exactly JP's two layers (reference section 4.3).  Bounds become *range bounds*
(an absolute index, n turns from the end, after the last compaction, or
"nothing"), which are then resolved against the stream as it stands.  User
positions are 1-based and translated to 0-based indices here, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from gitstore import Event
from porcelain.domain.compaction.bounds import (
    Ago,
    CliBound,
    Count,
    FromEnd,
    LastCompaction,
    Position,
    RuleBound,
    parse_cli_bound,
    parse_count,
    parse_rule_bound,
    parse_turn_spec,
)
from porcelain.domain.stream import Stream
from porcelain.errors import UsageError, UserError


@dataclass(frozen=True)
class RangeOverrides:
    """The range flags of ``compact``; they override the bounds of every rule."""

    keep_first: RuleBound | None = None
    keep_last: RuleBound | None = None
    from_: CliBound | None = None
    to: CliBound | None = None
    first: int | None = None
    last: int | None = None
    turn: tuple[int | None, int | None] | None = None  # 1-based, open ends None

    @property
    def selects_nothing(self) -> bool:
        """``--first 0`` / ``--last 0``: nothing to compact, whatever the stream."""
        return self.first == 0 or self.last == 0


_CONFLICTS = {
    "--keep-first": ("--from", "--last", "--turn"),
    "--keep-last": ("--to", "--first", "--turn"),
    "--first": ("--last", "--turn", "--from", "--to"),
    "--last": ("--first", "--turn", "--from", "--to"),
    "--turn": ("--first", "--last", "--from", "--to"),
}


def parse_range_overrides(
    *,
    keep_first: str | None = None,
    keep_last: str | None = None,
    from_: str | None = None,
    to: str | None = None,
    first: int | str | None = None,
    last: int | str | None = None,
    turn: str | None = None,
) -> RangeOverrides:
    """Parse and cross-check the range flags (``UsageError`` on a bad value or combination)."""
    given = {
        "--keep-first": keep_first,
        "--keep-last": keep_last,
        "--from": from_,
        "--to": to,
        "--first": first,
        "--last": last,
        "--turn": turn,
    }
    for flag, others in _CONFLICTS.items():
        for other in others:
            if given[flag] is not None and given[other] is not None:
                raise UsageError(f"{flag} cannot be used with {other}")
    out = RangeOverrides(
        keep_first=None if keep_first is None else parse_rule_bound(keep_first, "--keep-first"),
        keep_last=None if keep_last is None else parse_rule_bound(keep_last, "--keep-last"),
        from_=None
        if from_ is None
        else parse_cli_bound(from_, "--from", allow_last_compaction=True),
        to=None if to is None else parse_cli_bound(to, "--to", allow_last_compaction=False),
        first=None if first is None else parse_count(first, "--first"),
        last=None if last is None else parse_count(last, "--last"),
        turn=None if turn is None else parse_turn_spec(turn),
    )
    for keep, count, a, b in (
        (out.keep_first, out.first, "--keep-first", "--first"),
        (out.keep_last, out.last, "--keep-last", "--last"),
    ):
        if isinstance(keep, Count) and count is not None and keep.n > count:
            raise UsageError(
                f"{a} {keep.n} is greater than {b} {count}: nothing would remain to compact"
            )
    return out


# -- range bounds ---------------------------------------------------------------


@dataclass(frozen=True)
class _Abs:
    index: int


@dataclass(frozen=True)
class _End:
    n: int


@dataclass(frozen=True)
class _AfterLast:
    pass


@dataclass(frozen=True)
class _Empty:
    pass


_Bound = _Abs | _End | _AfterLast | _Empty | None


def _after_last(stream: Stream) -> int:
    """The first turn after the last standing compaction (0 without one)."""
    return max((o.to_turn + 1 for o in stream.overlays), default=0)


def _from_rule(bound: RuleBound, facts: Stream) -> _Bound:
    match bound:
        case Count(n):
            return _Abs(n)
        case Position(n):
            return _Abs(n - 1)
        case FromEnd(n):
            return _End(n)
        case LastCompaction():
            return _AfterLast()
        case Ago(span):
            first = facts.first_time()
            if first is None:
                return _Empty()
            turn = facts.turn_at(first + span)
            return _Abs(0 if turn is None else turn + 1)


def _to_rule(bound: RuleBound, facts: Stream, now: datetime) -> _Bound:
    match bound:
        case Count(n) | FromEnd(n):
            return _End(n)
        case Position(n):
            return _Abs(n - 1)
        case LastCompaction():
            return None
        case Ago(span):
            turn = facts.turn_at(now - span)
            return _Empty() if turn is None else _Abs(turn)


def _from_cli(bound: CliBound, facts: Stream, now: datetime) -> _Bound:
    match bound:
        case Position(n):
            return _Abs(n - 1)
        case FromEnd(n):
            return _End(n)
        case LastCompaction():
            return _AfterLast()
        case Ago(span):
            turn = facts.turn_at(now - span)
            return _Abs(0 if turn is None else turn + 1)


def _to_cli(bound: CliBound, facts: Stream, now: datetime) -> _Bound:
    match bound:
        case Position(n):
            return _Abs(n - 1)
        case FromEnd(n):
            return _End(n)
        case LastCompaction():
            raise UsageError("--to does not take last-compaction")
        case Ago(span):
            turn = facts.turn_at(now - span)
            return _Empty() if turn is None else _Abs(turn)


def _turns(n: int) -> str:
    return f"{n} turn" if n == 1 else f"{n} turns"


def check_overrides(overrides: RangeOverrides, turn_count: int) -> None:
    """``--turn`` endpoints must name existing turns (``UserError`` otherwise)."""
    if overrides.turn is None:
        return
    for end in overrides.turn:
        if end is not None and not 1 <= end <= turn_count:
            raise UserError(f"turn {end} out of range (conversation has {_turns(turn_count)})")


def _selector(o: RangeOverrides, facts: Stream, now: datetime) -> tuple[_Bound, _Bound]:
    """Bounds set by --from/--to/--first/--last/--turn (None where a flag says nothing)."""
    if o.first is not None:
        return _Abs(0), (_Abs(o.first - 1) if o.first else _Empty())
    if o.last is not None:
        return (_End(o.last - 1) if o.last else _Empty()), None
    if o.turn is not None:
        start, end = o.turn
        return _Abs(0 if start is None else start - 1), (None if end is None else _Abs(end - 1))
    return (
        None if o.from_ is None else _from_cli(o.from_, facts, now),
        None if o.to is None else _to_cli(o.to, facts, now),
    )


def resolve_bounds(
    facts: Stream,
    rule_keep_first: RuleBound | None,
    rule_keep_last: RuleBound | None,
    overrides: RangeOverrides,
    now: datetime,
) -> tuple[int, int] | None:
    """The 0-based inclusive range one rule compacts, or None for nothing (naive ``now``: UTC)."""
    check_overrides(overrides, facts.count)
    if facts.count == 0:
        return None
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    sel_from, sel_to = _selector(overrides, facts, now)
    if overrides.keep_first is not None:
        lo = _from_rule(overrides.keep_first, facts)
    elif sel_from is not None:
        lo = sel_from
    else:
        lo = _from_rule(rule_keep_first or Count(1), facts)
    if overrides.keep_last is not None:
        hi = _to_rule(overrides.keep_last, facts, now)
    elif sel_to is not None or overrides.last is not None or overrides.turn is not None:
        hi = sel_to
    else:
        hi = _to_rule(rule_keep_last or Count(1), facts, now)

    last = facts.count - 1
    match lo:
        case None:
            start = 0
        case _Abs(n):
            start = n
        case _End(n):
            start = max(last - n, 0)
        case _AfterLast():
            start = _after_last(facts)
        case _Empty():
            return None
    match hi:
        case None:
            end = last
        case _Abs(n):
            end = min(n, last)
        case _End(n):
            if n > last:
                return None
            end = last - n
        case _AfterLast():
            end = min(_after_last(facts), last)
        case _Empty():
            return None
    if start > last or start > end:
        return None
    return start, end


def resolve_rule_range(
    source: Sequence[Event] | Stream,
    rule_keep_first: RuleBound | None,
    rule_keep_last: RuleBound | None,
    overrides: RangeOverrides,
    now: datetime,
) -> tuple[int, int] | None:
    """Resolve one rule's range against ``source``; None when nothing is to be compacted."""
    return resolve_bounds(Stream.of(source), rule_keep_first, rule_keep_last, overrides, now)
