"""Stored overlays, withdrawal by reset events, names and labels (cases 6, 43, 79)."""

from __future__ import annotations

import pytest

from porcelain.domain.compaction.overlays import (
    Overlay,
    ToolCalls,
    all_overlays,
    compaction_event,
    overlay_from_event,
    overlay_json,
    overlay_label,
    overlay_to_event,
    parse_tool_mode,
    reset_event,
    standing_overlays,
    tool_mode_name,
)
from porcelain.errors import UsageError

from .builders import comp, reset, stamp, turns


def test_event_shape_leaves_absent_policies_out() -> None:  # case 6
    assert compaction_event(stamp(0), 0, 5) == {
        "type": "compaction",
        "timestamp": stamp(0),
        "from_turn": 0,
        "to_turn": 5,
    }
    full = compaction_event(
        stamp(0), 0, 5, summary="text", reasoning=True, tool_calls=ToolCalls.STRIP
    )
    assert full["summary"] == {"summary": "text"}
    assert full["reasoning"] == "strip"
    assert full["tool_calls"] == {"policy": "strip", "request": True, "response": True}
    omit = compaction_event(stamp(0), 1, 1, tool_calls=ToolCalls.OMIT)
    assert omit["tool_calls"] == {"policy": "omit"}
    with pytest.raises(ValueError):
        compaction_event(stamp(0), 3, 2)


def test_round_trip() -> None:
    event = compaction_event(stamp(3), 2, 4, summary="S", tool_calls=ToolCalls.STRIP_REQUESTS)
    overlay = overlay_from_event(event, position=7, ordinal=1)
    assert overlay == Overlay(7, 1, 2, 4, "S", False, ToolCalls.STRIP_REQUESTS, stamp(3))
    assert overlay_to_event(overlay) == event
    assert overlay_to_event(overlay, stamp(9))["timestamp"] == stamp(9)


def test_reading_tool_policies() -> None:  # case 43
    read = ToolCalls.from_event
    assert read({"policy": "strip", "request": True, "response": True}) is ToolCalls.STRIP
    assert read({"policy": "strip", "request": True, "response": False}) is ToolCalls.STRIP_REQUESTS
    assert (
        read({"policy": "strip", "request": False, "response": True}) is ToolCalls.STRIP_RESPONSES
    )
    assert read({"policy": "omit"}) is ToolCalls.OMIT
    assert read({"policy": "strip"}) is ToolCalls.STRIP
    assert read({"policy": "strip", "request": False, "response": False}) is None
    assert read(None) is None
    assert read({"policy": "shred"}) is None


def test_tool_mode_names_and_aliases() -> None:
    aliases = {
        ToolCalls.STRIP: ("strip", "s", "STRIP"),
        ToolCalls.STRIP_REQUESTS: ("strip-requests", "sreq", "strip_requests"),
        ToolCalls.STRIP_RESPONSES: ("strip-responses", "sres", "strip_responses"),
        ToolCalls.OMIT: ("omit", "o"),
    }
    for mode, names in aliases.items():
        for name in names:
            assert parse_tool_mode(name) is mode
        assert tool_mode_name(mode) == names[0]
    with pytest.raises(UsageError, match="'shred'"):
        parse_tool_mode("shred")


def test_reset_all_withdraws_only_earlier_overlays() -> None:
    events = [*turns(4), comp(0, 1), comp(2, 3), reset(), comp(1, 2)]
    standing = standing_overlays(events)
    assert [(o.from_turn, o.to_turn, o.ordinal) for o in standing] == [(1, 2, 2)]
    assert [gone for _, gone in all_overlays(events)] == [True, True, False]


def test_reset_by_ordinal_counts_withdrawn_ones_too() -> None:
    events = [*turns(6), comp(0, 0), comp(1, 1), reset([0]), comp(2, 2), comp(3, 3), reset([2])]
    assert [o.from_turn for o in standing_overlays(events)] == [1, 3]
    # ordinals past what was there when the reset was written are ignored
    later = [*turns(6), comp(0, 0), reset([1]), comp(1, 1)]
    assert [o.from_turn for o in standing_overlays(later)] == [0, 1]


def test_reset_event() -> None:
    assert reset_event(stamp(1)) == {
        "type": "compaction_reset",
        "timestamp": stamp(1),
        "withdraw": None,
    }
    assert reset_event(stamp(1), [3, 1, 3])["withdraw"] == [1, 3]


def test_positions_are_stream_indices() -> None:
    events = [*turns(2), comp(0, 1)]
    assert standing_overlays(events)[0].position == len(events) - 1


def test_labels() -> None:  # case 79
    summary = overlay_from_event(comp(0, 4, summary="S", reasoning=True))
    assert overlay_label(summary) == "summary"
    both = overlay_from_event(comp(2, 2, reasoning=True, tools=ToolCalls.STRIP))
    assert overlay_label(both) == "reasoning + tools"
    cases = {
        ToolCalls.STRIP_REQUESTS: "tool requests",
        ToolCalls.STRIP_RESPONSES: "tool responses",
        ToolCalls.OMIT: "tools omitted",
    }
    for mode, label in cases.items():
        assert overlay_label(overlay_from_event(comp(0, 0, tools=mode))) == label
    assert overlay_label(overlay_from_event(comp(0, 0, reasoning=True))) == "reasoning"
    assert overlay_label(overlay_from_event(comp(0, 0))) is None


def test_json_form() -> None:  # case 79
    summary = overlay_from_event(comp(0, 4, summary="S", reasoning=True))
    assert overlay_json(summary) == {
        "from_turn": 1,
        "to_turn": 5,
        "summary": "S",
        "reasoning": "strip",
        "tool_calls": None,
    }
    mech = overlay_from_event(comp(2, 2, tools=ToolCalls.STRIP))
    assert overlay_json(mech) == {
        "from_turn": 3,
        "to_turn": 3,
        "summary": None,
        "reasoning": None,
        "tool_calls": "strip",
    }
