"""Summary overlap growth, reference case 40."""

from __future__ import annotations

from porcelain.domain.compaction.overlap import grow_summary_range
from porcelain.domain.compaction.overlays import Overlay, ToolCalls


def summary(a: int, b: int) -> Overlay:
    return Overlay(position=0, ordinal=0, from_turn=a, to_turn=b, summary="S")


def test_no_summaries_leaves_the_range() -> None:
    assert grow_summary_range([], 3, 7) == (3, 7)


def test_disjoint_is_unchanged() -> None:
    assert grow_summary_range([summary(0, 2)], 5, 8) == (5, 8)


def test_adjacent_is_unchanged() -> None:
    assert grow_summary_range([summary(0, 4)], 5, 8) == (5, 8)


def test_partial_overlaps_grow_to_the_union() -> None:
    assert grow_summary_range([summary(5, 9)], 3, 7) == (3, 9)
    assert grow_summary_range([summary(0, 4)], 3, 8) == (0, 8)


def test_containment() -> None:
    assert grow_summary_range([summary(3, 5)], 0, 8) == (0, 8)
    assert grow_summary_range([summary(0, 9)], 3, 5) == (0, 9)


def test_chains_grow_transitively() -> None:
    chain = [summary(9, 15), summary(4, 10), summary(0, 5)]
    assert grow_summary_range(chain, 3, 7) == (0, 15)


def test_mechanical_overlays_are_ignored() -> None:
    mech = Overlay(0, 0, 0, 9, reasoning=True, tool_calls=ToolCalls.STRIP)
    assert grow_summary_range([mech], 3, 7) == (3, 7)
