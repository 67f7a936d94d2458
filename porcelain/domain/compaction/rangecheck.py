"""The range flags of `compact` checked against the conversation, as the review checks its tool.

An inverted range, a turn past the end and a negative count are mistakes,
not "nothing to compact": each is one usage error that names the valid
range (``turns 1-9``).  Durations and last-compaction are left to the
resolver: they say "from a moment", which may well select nothing.
"""

from __future__ import annotations

from porcelain.domain.compaction.bounds import FromEnd, Position
from porcelain.domain.compaction.ranges import RangeOverrides
from porcelain.errors import UsageError


def valid_range(count: int) -> str:
    if count == 0:
        return "the conversation has no turns"
    return (
        "the conversation has 1 turn (turn 1)"
        if count == 1
        else (f"the conversation has {count} turns (turns 1-{count})")
    )


def _position(bound: object, count: int) -> int | None:
    """The 1-based turn a --from/--to bound names (None: not a turn number)."""
    if isinstance(bound, Position):
        return bound.n
    if isinstance(bound, FromEnd):
        return count - bound.n  # -1 (FromEnd(0)) is the last turn
    return None


def check_range_flags(o: RangeOverrides, count: int, raw: dict[str, str | None]) -> None:
    """``UsageError`` for a range the conversation cannot have (``raw``: the flags as typed)."""
    where = valid_range(count)
    for flag, bound in (("--keep-first", o.keep_first), ("--keep-last", o.keep_last)):
        if isinstance(bound, FromEnd):
            raise UsageError(
                f"{flag} {raw.get(flag)}: a count of turns cannot be negative; {where}"
            )
        if isinstance(bound, Position) and not 1 <= bound.n <= count:
            raise UsageError(f"{flag} {raw.get(flag)} is outside the conversation; {where}")
    lo = _position(o.from_, count)
    hi = _position(o.to, count)
    for flag, value in (("--from", lo), ("--to", hi)):
        if value is not None and not 1 <= value <= count:
            raise UsageError(f"{flag} {raw.get(flag)} is outside the conversation; {where}")
    if lo is not None and hi is not None and lo > hi:
        raise UsageError(
            f"--from {raw.get('--from')} is after --to {raw.get('--to')}: the range is inverted; {where}"
        )


def typed_range(opts: dict[str, object]) -> dict[str, str | None]:
    """The range flags as the user typed them, by flag name (for the messages)."""
    names = (("--from", "from_"), ("--to", "to"), ("--keep-first", "keep_first"))
    typed = {flag: opts.get(key) for flag, key in (*names, ("--keep-last", "keep_last"))}
    return {k: None if v is None else str(v) for k, v in typed.items()}
