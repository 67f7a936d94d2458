"""Planning a run of rules (cases 41, 42, 44, 48, 49) and the events it produces."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gitstore.events import Event
from porcelain.domain.compaction.bounds import Count
from porcelain.domain.compaction.overlays import ToolCalls, standing_overlays
from porcelain.domain.compaction.plan import PlannedOverlay, plan_compaction, planned_to_event
from porcelain.domain.compaction.projection import project
from porcelain.domain.compaction.ranges import RangeOverrides, parse_range_overrides
from porcelain.domain.compaction.rules import DEFAULT_RULE, Rule, SummarySpec, rules_from_config
from porcelain.domain.compaction.timeline import timeline
from porcelain.errors import UserError

from .builders import comp, of_type, stamp, turns

NOW = datetime(2030, 1, 1, tzinfo=UTC)
NONE = RangeOverrides()
SUMMARIZE = Rule(summary=SummarySpec(context="c"))


def ranges(planned: list[PlannedOverlay]) -> list[tuple[int, int]]:
    return [(p.from_turn, p.to_turn) for p in planned]


def with_tools(k: int) -> list[Event]:
    events: list[Event] = []
    for i in range(k):
        t = stamp(i)
        events += [
            {"type": "turn_start", "timestamp": t},
            {"type": "chat_request", "timestamp": t, "content": f"q{i}"},
            {
                "type": "tool_call_request",
                "timestamp": t,
                "id": f"c{i}",
                "name": "read",
                "arguments": {"path": f"f{i}"},
            },
            {
                "type": "tool_call_response",
                "timestamp": t,
                "id": f"c{i}",
                "content": "ok",
                "is_error": False,
            },
            {"type": "chat_response", "timestamp": t, "message": f"m{i}"},
        ]
    return events


def test_default_rule_on_nine_turns() -> None:  # case 41
    events = turns(9)
    planned = plan_compaction(events, [DEFAULT_RULE], NONE, NOW)
    assert planned == [PlannedOverlay(1, 7, True, ToolCalls.STRIP, None, 0)]
    event = planned_to_event(planned[0], None, stamp(99))
    assert event == {
        "type": "compaction",
        "timestamp": stamp(99),
        "from_turn": 1,
        "to_turn": 7,
        "reasoning": "strip",
        "tool_calls": {"policy": "strip", "request": True, "response": True},
    }
    new = [(p.from_turn, p.to_turn, p.label) for p in planned]
    assert timeline([], new, 9, dry_run=False) == [
        "Kept turn 1.",
        "Compacted turns 2-8 (reasoning + tools).",
        "Kept turn 9.",
    ]


def test_strip_requests_rule() -> None:  # case 42
    events = with_tools(6)
    rules = rules_from_config([{"tool_calls": "strip-requests", "keep_first": 1, "keep_last": 1}])
    planned = plan_compaction(events, rules, NONE, NOW)
    assert ranges(planned) == [(1, 4)]
    event = planned_to_event(planned[0], None, stamp(99))
    assert event["tool_calls"] == {"policy": "strip", "request": True, "response": False}
    assert "reasoning" not in event and "summary" not in event
    projected = project([*events, event]).events
    requests = of_type(projected, "tool_call_request")
    assert [r["arguments"] for r in requests] == [{"path": "f0"}, {}, {}, {}, {}, {"path": "f5"}]
    assert of_type(projected, "tool_call_response", "content") == ["ok"] * 6


def test_overrides_apply_to_every_rule() -> None:  # cases 44, 49
    rules = [
        Rule(Count(3), Count(1), reasoning=True),
        Rule(Count(0), Count(2), tool_calls=ToolCalls.OMIT),
    ]
    twenty = turns(20)
    assert ranges(plan_compaction(twenty, rules, NONE, NOW)) == [(3, 18), (0, 17)]
    o = parse_range_overrides(keep_last="5")
    assert ranges(plan_compaction(twenty, rules, o, NOW)) == [(3, 14), (0, 14)]
    o = parse_range_overrides(keep_first="1", first=16)
    assert ranges(plan_compaction(twenty, rules, o, NOW)) == [(1, 15), (1, 15)]


def test_every_rule_sees_the_stream_as_it_was() -> None:  # case 48
    rules = [
        Rule(Count(0), Count(3), reasoning=True),
        Rule(Count(0), Count(3), tool_calls=ToolCalls.STRIP),
    ]
    o = parse_range_overrides(from_="last-compaction")
    assert ranges(plan_compaction(turns(6), rules, o, NOW)) == [(0, 2), (0, 2)]


def test_rules_with_empty_ranges_are_skipped() -> None:
    rules = [Rule(Count(0), Count(30), reasoning=True), Rule(Count(0), Count(0), reasoning=True)]
    planned = plan_compaction(turns(5), rules, NONE, NOW)
    assert [(p.rule_index, p.from_turn, p.to_turn) for p in planned] == [(1, 0, 4)]
    assert plan_compaction(turns(5), [DEFAULT_RULE], parse_range_overrides(last=0), NOW) == []
    assert plan_compaction([], [DEFAULT_RULE], NONE, NOW) == []


def test_summary_grows_over_standing_summaries_only() -> None:
    events = [*turns(10), comp(5, 8, summary="OLD"), comp(0, 9, reasoning=True)]
    planned = plan_compaction(events, [Rule(Count(2), Count(3), summary=SummarySpec())], NONE, NOW)
    assert ranges(planned) == [(2, 8)]
    mech = plan_compaction(events, [Rule(Count(2), Count(3), reasoning=True)], NONE, NOW)
    assert ranges(mech) == [(2, 6)]


def test_summary_grows_over_summaries_planned_in_the_same_run() -> None:
    rules = [
        Rule(Count(4), Count(2), summary=SummarySpec()),
        Rule(Count(1), Count(5), summary=SummarySpec()),
    ]
    assert ranges(plan_compaction(turns(10), rules, NONE, NOW)) == [(4, 7), (1, 7)]
    rules[1:] = [Rule(Count(1), Count(6), summary=SummarySpec())]
    assert ranges(plan_compaction(turns(10), rules, NONE, NOW)) == [(4, 7), (1, 3)]


def test_withdrawn_summaries_do_not_grow_ranges() -> None:
    events = [
        *turns(10),
        comp(5, 8, summary="OLD"),
        {"type": "compaction_reset", "timestamp": stamp(1), "withdraw": [0]},
    ]
    assert standing_overlays(events) == []
    planned = plan_compaction(events, [Rule(Count(2), Count(3), summary=SummarySpec())], NONE, NOW)
    assert ranges(planned) == [(2, 6)]


def test_turn_out_of_range_is_an_error_even_without_rules() -> None:  # case 46
    with pytest.raises(UserError, match="turn 100 out of range"):
        plan_compaction(turns(5), [], parse_range_overrides(turn="100"), NOW)


def test_planned_summary_event() -> None:
    planned = plan_compaction(turns(6), [SUMMARIZE], NONE, NOW)[0]
    assert planned.label == "summary"
    assert planned.summary_spec == SummarySpec(context="c")
    event = planned_to_event(planned, "TEXT", stamp(5))
    assert event["summary"] == {"summary": "TEXT"}
    assert (event["from_turn"], event["to_turn"]) == (1, 4)
    with pytest.raises(ValueError):
        planned_to_event(planned, None, stamp(5))
    mech = plan_compaction(turns(6), [DEFAULT_RULE], NONE, NOW)[0]
    with pytest.raises(ValueError):
        planned_to_event(mech, "TEXT", stamp(5))
