"""propose_compaction arguments: validation, growth, rendering, events (D66)."""

from __future__ import annotations

from typing import Any

import pytest

from porcelain.domain.compaction.overlays import ToolCalls, overlay_from_event
from porcelain.domain.compaction.proposal import (
    PROPOSE_TOOL_SCHEMA,
    Proposal,
    ProposalError,
    validate_proposal,
)

from .builders import comp, stamp, turns

TWENTY = turns(20)


def error(args: Any, events: Any = TWENTY) -> str:
    with pytest.raises(ProposalError) as err:
        validate_proposal(args, events)
    return err.value.message


def test_a_summary_proposal() -> None:
    p = validate_proposal({"from_turn": 2, "to_turn": 15, "summary": "S"}, TWENTY)
    assert p == Proposal(2, 15, "S")
    assert p.to_args() == {"from_turn": 2, "to_turn": 15, "summary": "S"}
    assert p.to_json() == {
        "from_turn": 2,
        "to_turn": 15,
        "summary": "S",
        "reasoning": None,
        "tool_calls": None,
    }
    assert p.render(20) == "Proposed: compact turns 2-15 of 20 (summarize)\n\nS"


def test_a_mechanical_proposal() -> None:
    p = validate_proposal(
        {"from_turn": 3, "to_turn": 3, "reasoning": "strip", "tool_calls": "sres"}, TWENTY
    )
    assert p == Proposal(3, 3, None, True, ToolCalls.STRIP_RESPONSES)
    assert p.to_args() == {
        "from_turn": 3,
        "to_turn": 3,
        "reasoning": "strip",
        "tool_calls": "strip-responses",
    }
    assert p.to_json()["tool_calls"] == "strip-responses"
    assert p.to_json()["reasoning"] == "strip"
    assert p.render(20) == "Proposed: compact turn 3 of 20 (strip reasoning, strip tool responses)"
    omit = validate_proposal({"from_turn": 1, "to_turn": 4, "tool_calls": "omit"}, TWENTY)
    assert omit.render(20) == "Proposed: compact turns 1-4 of 20 (omit tools)"
    strip = validate_proposal({"from_turn": 1, "to_turn": 4, "tool_calls": "strip"}, TWENTY)
    assert strip.render(20) == "Proposed: compact turns 1-4 of 20 (strip tools)"


def test_round_trip_through_args() -> None:
    for args in (
        {"from_turn": 2, "to_turn": 15, "summary": "S"},
        {"from_turn": 1, "to_turn": 20, "reasoning": "strip", "tool_calls": "omit"},
    ):
        p = validate_proposal(args, TWENTY)
        assert p.to_args() == args
        assert validate_proposal(p.to_args(), TWENTY) == p


def test_compaction_event_is_zero_based() -> None:
    p = validate_proposal({"from_turn": 2, "to_turn": 15, "summary": "S"}, TWENTY)
    event = p.to_compaction_event(stamp(7))
    assert event == {
        "type": "compaction",
        "timestamp": stamp(7),
        "from_turn": 1,
        "to_turn": 14,
        "summary": {"summary": "S"},
    }
    mech = Proposal(1, 2, None, True, ToolCalls.OMIT).to_compaction_event(stamp(7))
    overlay = overlay_from_event(mech)
    assert (overlay.from_turn, overlay.to_turn, overlay.reasoning, overlay.tool_calls) == (
        0,
        1,
        True,
        ToolCalls.OMIT,
    )


def test_range_errors_name_the_numbers() -> None:
    assert "the conversation has 20 turns, to_turn was 25" in error(
        {"from_turn": 2, "to_turn": 25, "summary": "S"}
    )
    assert "the conversation has 20 turns, from_turn was 21" in error(
        {"from_turn": 21, "to_turn": 21, "summary": "S"}
    )
    assert "from_turn 9 is after to_turn 3" in error({"from_turn": 9, "to_turn": 3, "summary": "S"})
    assert "from_turn must be at least 1, got 0" in error(
        {"from_turn": 0, "to_turn": 3, "summary": "S"}
    )
    assert "to_turn must be at least 1, got -2" in error(
        {"from_turn": 1, "to_turn": -2, "summary": "S"}
    )
    assert "1 turn," in error({"from_turn": 1, "to_turn": 2, "summary": "S"}, turns(1))
    assert "no turns" in error({"from_turn": 1, "to_turn": 1, "summary": "S"}, [])


@pytest.mark.parametrize("value", ["3", 3.0, 2.5, True, None, [3]])
def test_non_integer_turns_are_refused(value: Any) -> None:
    message = error({"from_turn": 1, "to_turn": value, "summary": "S"})
    assert "to_turn" in message


def test_summary_with_dead_policies() -> None:
    message = error({"from_turn": 2, "to_turn": 5, "summary": "S", "reasoning": "strip"})
    assert (
        message == "summary is set, so reasoning would be ignored: drop reasoning or drop summary"
    )
    both = error(
        {"from_turn": 2, "to_turn": 5, "summary": "S", "reasoning": "strip", "tool_calls": "omit"}
    )
    assert "reasoning and tool_calls would be ignored" in both


def test_policy_errors() -> None:
    assert error({"from_turn": 2, "to_turn": 5, "tool_calls": "shred"}) == (
        "unknown tool_calls policy 'shred' (use strip, strip-requests, strip-responses or omit)"
    )
    assert "'keep'" in error({"from_turn": 2, "to_turn": 5, "reasoning": "keep"})
    assert "at least one of summary, reasoning or tool_calls" in error(
        {"from_turn": 2, "to_turn": 5}
    )
    assert "summary is empty" in error({"from_turn": 2, "to_turn": 5, "summary": "  "})
    assert "summary must be a string" in error({"from_turn": 2, "to_turn": 5, "summary": 3})


def test_argument_shape_errors() -> None:
    assert "unknown argument 'keep_last'" in error(
        {"from_turn": 2, "to_turn": 5, "summary": "S", "keep_last": 3}
    )
    assert "from_turn is required" in error({"to_turn": 5, "summary": "S"})
    assert "object" in error(["from_turn", 2])


def test_all_problems_are_reported_at_once() -> None:
    message = error({"from_turn": 0, "to_turn": 25, "tool_calls": "shred"})
    for part in ("from_turn must be at least 1", "to_turn was 25", "'shred'"):
        assert part in message


def test_summary_grows_over_existing_summaries() -> None:
    source = [*TWENTY, comp(4, 9, summary="OLD")]  # turns 5-10, 1-based
    p = validate_proposal({"from_turn": 2, "to_turn": 7, "summary": "NEW"}, source)
    assert (p.from_turn, p.to_turn) == (2, 10)
    assert p.grown_from == (2, 7)
    assert p.to_args()["to_turn"] == 10
    text = p.render(20)
    assert text.startswith("Proposed: compact turns 2-10 of 20 (summarize)\n")
    assert "grew from turns 2-7" in text
    assert text.endswith("\n\nNEW")


def test_mechanical_proposals_and_mechanical_overlays_do_not_grow() -> None:
    source = [*TWENTY, comp(4, 9, summary="OLD"), comp(0, 19, reasoning=True)]
    p = validate_proposal({"from_turn": 2, "to_turn": 7, "reasoning": "strip"}, source)
    assert (p.from_turn, p.to_turn, p.grown_from) == (2, 7, None)
    only_mech = [*TWENTY, comp(0, 19, reasoning=True)]
    q = validate_proposal({"from_turn": 2, "to_turn": 7, "summary": "S"}, only_mech)
    assert (q.from_turn, q.to_turn) == (2, 7)


def test_null_policies_count_as_absent() -> None:
    p = validate_proposal(
        {"from_turn": 2, "to_turn": 7, "summary": "S", "reasoning": None, "tool_calls": None},
        TWENTY,
    )
    assert p == Proposal(2, 7, "S")


def test_schema() -> None:
    assert PROPOSE_TOOL_SCHEMA["type"] == "object"
    props = PROPOSE_TOOL_SCHEMA["properties"]
    assert set(props) == {"from_turn", "to_turn", "summary", "reasoning", "tool_calls"}
    assert props["from_turn"]["type"] == "integer"
    assert "[turn N]" in props["from_turn"]["description"]
    assert "1-based" in props["to_turn"]["description"]
    assert PROPOSE_TOOL_SCHEMA["required"] == ["from_turn", "to_turn"]
