"""The report ``compact`` prints: which turns were kept and which compacted.

Lines use 1-based turn numbers and inclusive ``A..B`` ranges (reference 3.3):
``Kept turn 1.``, ``Compacted turns 2..8 (7 total, reasoning + tools).``;
under ``--dry-run`` kept lines and the new compactions read ``Would have ...``,
while compactions that existed before the run are facts and say ``Compacted``.
"""

from __future__ import annotations

from collections.abc import Sequence

from porcelain.domain.compaction.overlays import Overlay

ALREADY = "already compacted"


def _kept(a: int, b: int, dry_run: bool) -> str:
    verb = "Would have kept" if dry_run else "Kept"
    return f"{verb} turn {a + 1}." if a == b else f"{verb} turns {a + 1}..{b + 1}."


def _compacted(a: int, b: int, label: str | None, would: bool) -> str:
    verb = "Would have compacted" if would else "Compacted"
    total = f"{b - a + 1} total"
    detail = f"{total}, {label}" if label else total
    return f"{verb} turns {a + 1}..{b + 1} ({detail})."


def timeline(
    existing: Sequence[Overlay],
    new: Sequence[tuple[int, int, str | None]],
    turn_count: int,
    dry_run: bool,
) -> list[str]:
    """Lines for the standing overlays plus ``new`` ones as ``(from0, to0, label)``.

    Segments are sorted by start (existing before new on a tie); overlapping
    segments are each printed and a kept line appears only where no segment
    covers a turn.  Ranges past the end are shown clamped to the last turn.
    """
    last = turn_count - 1
    segments: list[tuple[int, int, str | None, bool]] = [
        (o.from_turn, o.to_turn, ALREADY, False) for o in existing
    ]
    segments += [(a, b, label, dry_run) for a, b, label in new]
    segments.sort(key=lambda s: s[0])
    lines: list[str] = []
    mark = 0
    for a, b, label, would in segments:
        if a > last:
            continue
        b = min(b, last)
        if a > mark:
            lines.append(_kept(mark, a - 1, dry_run))
        lines.append(_compacted(a, b, label, would))
        mark = max(mark, b + 1)
    if turn_count and mark <= last:
        lines.append(_kept(mark, last, dry_run))
    return lines
