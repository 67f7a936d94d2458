"""The compact report, reference cases 54 and 55."""

from __future__ import annotations

from porcelain.domain.compaction.overlays import Overlay
from porcelain.domain.compaction.timeline import timeline


def old(a: int, b: int) -> Overlay:
    return Overlay(position=0, ordinal=0, from_turn=a, to_turn=b, reasoning=True)


def test_gaps_between_and_after_segments() -> None:  # case 54
    expected = [
        "Kept turn 1.",
        "Compacted turns 2-4.",
        "Kept turns 5-6.",
        "Compacted turns 7-9.",
        "Kept turns 10-11.",
    ]
    assert timeline([], [(1, 3, None), (6, 8, None)], 11, dry_run=False) == expected
    assert timeline([], [(6, 8, None), (1, 3, None)], 11, dry_run=False) == expected


def test_overlapping_segments_have_no_bogus_gap() -> None:  # case 54
    assert timeline([], [(1, 5, "tools"), (3, 8, "reasoning")], 10, dry_run=False) == [
        "Kept turn 1.",
        "Compacted turns 2-6 (tools).",
        "Compacted turns 4-9 (reasoning).",
        "Kept turn 10.",
    ]


def test_dry_run_wording() -> None:  # case 54
    assert timeline([], [(1, 3, "summary")], 5, dry_run=True) == [
        "Would have kept turn 1.",
        "Would have compacted turns 2-4 (summary).",
        "Would have kept turn 5.",
    ]


def test_existing_overlays_are_facts() -> None:  # case 55
    expected = [
        "Kept turn 1.",
        "Compacted turns 2-6 (already compacted).",
        "Compacted turns 7-9.",
        "Kept turn 10.",
    ]
    assert timeline([old(1, 5)], [(6, 8, None)], 10, dry_run=False) == expected
    dry = timeline([old(1, 5)], [(6, 8, None)], 10, dry_run=True)
    assert dry[1] == "Compacted turns 2-6 (already compacted)."
    assert dry[2] == "Would have compacted turns 7-9."
    assert dry[0] == "Would have kept turn 1."


def test_whole_range_and_edges() -> None:
    assert timeline([], [(0, 4, "tools")], 5, dry_run=False) == [
        "Compacted turns 1-5 (tools).",
    ]
    assert timeline([], [], 3, dry_run=False) == ["Kept turns 1-3."]
    assert timeline([], [], 0, dry_run=False) == []


def test_ranges_past_the_end_are_clamped() -> None:
    assert timeline([old(0, 99)], [], 4, dry_run=False) == [
        "Compacted turns 1-4 (already compacted).",
    ]


def test_a_segment_inside_another_does_not_uncover_turns() -> None:
    assert timeline([old(1, 8)], [(3, 5, "summary")], 10, dry_run=False) == [
        "Kept turn 1.",
        "Compacted turns 2-9 (already compacted).",
        "Compacted turns 4-6 (summary).",
        "Kept turn 10.",
    ]
