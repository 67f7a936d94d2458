"""Bounds of a compaction range as the user writes them, parsed but not resolved.

The same few shapes serve rule bounds (``keep_first``/``keep_last`` in config,
``--keep-first``/``--keep-last``, the DSL) and the ``--from``/``--to`` flags;
what a shape *means* depends on where it is used, which ``ranges`` decides:

- ``Count(n)``: a number of turns (``keep_first = 2``).
- ``Position(n)``: a 1-based turn position (``@5``, ``--from 5``, DSL ``5``).
- ``FromEnd(n)``: n turns back from the end.  For a rule bound ``-3`` is
  "keep the last 3" (n=3); for ``--from -1`` it is the last turn (n=0).
- ``Ago(span)``: a duration (``5h``).
- ``LastCompaction()``: just after the last standing compaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from porcelain.errors import UsageError


@dataclass(frozen=True)
class Count:
    n: int


@dataclass(frozen=True)
class Position:
    n: int  # 1-based


@dataclass(frozen=True)
class FromEnd:
    n: int


@dataclass(frozen=True)
class Ago:
    span: timedelta


@dataclass(frozen=True)
class LastCompaction:
    pass


RuleBound = Count | Position | FromEnd | Ago | LastCompaction
CliBound = Position | FromEnd | Ago | LastCompaction

_UNITS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), 86400),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 7 * 86400),
}
_PART = re.compile(r"\s*(\d+)\s*([a-z]+)")
_INT = re.compile(r"[+-]?\d+")


def parse_duration(text: str) -> timedelta | None:
    """``30m``, ``5h``, ``2d``, ``1w``, ``1h30m``, ``5 days``; None when it is not one."""
    rest = text.strip().lower()
    if not rest:
        return None
    seconds = 0
    while rest:
        match = _PART.match(rest)
        if match is None or match.group(2) not in _UNITS:
            return None
        seconds += int(match.group(1)) * _UNITS[match.group(2)]
        rest = rest[match.end() :].strip()
    return timedelta(seconds=seconds)


def parse_int(text: str) -> int | None:
    """A plain decimal integer with an optional sign, or None."""
    raw = text.strip()
    return int(raw) if _INT.fullmatch(raw) else None


def _bad(flag: str, text: str, what: str) -> UsageError:
    return UsageError(f"invalid value '{text}' for {flag}: expected {what}")


RULE_BOUND_HELP = "a count N, @N, -N, a duration like 5h, or last-compaction"


def parse_rule_bound(text: str, flag: str = "--keep-first") -> RuleBound:
    """A rule bound: N (count), @N (1-based), -N (from the end), duration, last-compaction."""
    raw = text.strip()
    if raw.lower() in ("last-compaction", "last"):
        return LastCompaction()
    if raw.startswith("@"):
        n = parse_int(raw[1:])
        if n is None or raw[1:2] in ("+", "-") or n < 1:
            raise _bad(flag, text, "@N with N at least 1 (a 1-based turn position)")
        return Position(n)
    n = parse_int(raw)
    if n is not None:
        if raw.startswith("-"):
            if n == 0:
                raise _bad(flag, text, "-N with N at least 1")
            return FromEnd(-n)
        return Count(n)
    span = parse_duration(raw)
    if span is None:
        raise _bad(flag, text, RULE_BOUND_HELP)
    return Ago(span)


def parse_cli_bound(text: str, flag: str, *, allow_last_compaction: bool) -> CliBound:
    """``--from``/``--to``: 1-based ``N``, ``-N`` (-1 = last turn), duration, last-compaction."""
    raw = text.strip()
    if raw.lower() in ("last-compaction", "last"):
        if not allow_last_compaction:
            raise _bad(flag, text, "a turn number N, -N counted from the end, or a duration")
        return LastCompaction()
    n = parse_int(raw)
    if n is not None:
        if n == 0:
            raise UsageError(f"{flag} {raw}: turn numbers start at 1 (-1 is the last turn)")
        return Position(n) if n > 0 else FromEnd(-n - 1)
    span = parse_duration(raw)
    if span is None:
        extra = ", or last-compaction" if allow_last_compaction else ""
        raise _bad(
            flag, text, f"a turn number N, -N counted from the end, a duration like 5h{extra}"
        )
    return Ago(span)


def parse_count(value: int | str, flag: str) -> int:
    """A non-negative count of turns (``--first``, ``--last``)."""
    n = value if isinstance(value, int) else parse_int(value)
    if n is None or n < 0 or isinstance(value, bool):
        raise _bad(flag, str(value), "a number of turns (0 or more)")
    return n


def parse_turn_spec(text: str) -> tuple[int | None, int | None]:
    """``--turn N`` or ``A..B`` (1-based, inclusive, either end open); not yet range-checked."""
    raw = text.strip()
    if ".." not in raw:
        n = parse_int(raw)
        if n is None or raw.startswith(("-", "+")):
            raise _bad("--turn", text, "a turn number N or a range A..B")
        return n, n
    left, _, right = raw.partition("..")
    ends: list[int | None] = []
    for part in (left.strip(), right.strip()):
        if not part:
            ends.append(None)
            continue
        n = parse_int(part)
        if n is None or part.startswith(("-", "+")):
            raise _bad("--turn", text, "a turn number N or a range A..B")
        ends.append(n)
    start, end = ends
    if start is not None and end is not None and start > end:
        raise UsageError(f"--turn {raw}: the range starts after it ends")
    return start, end
