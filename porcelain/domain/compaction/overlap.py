"""Summary overlap growth (reference section 4.4).

A new summary range that intersects an existing summary in any way (partial
overlap or containment either way) grows to the union, repeated until nothing
changes, so summaries never partly overlap and a summary is never summarized.
Mechanical-only overlays are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class SummaryRange(Protocol):
    @property
    def from_turn(self) -> int: ...

    @property
    def to_turn(self) -> int: ...

    @property
    def has_summary(self) -> bool: ...


def grow_summary_range(overlays: Iterable[SummaryRange], from0: int, to0: int) -> tuple[int, int]:
    """The 0-based range a new summary over ``from0..to0`` must cover."""
    ranges = [(o.from_turn, o.to_turn) for o in overlays if o.has_summary]
    lo, hi = from0, to0
    changed = True
    while changed:
        changed = False
        for a, b in ranges:
            if lo <= b and hi >= a and (a < lo or b > hi):
                lo, hi = min(lo, a), max(hi, b)
                changed = True
    return lo, hi
