"""Projection, reference cases 13-35 (precedence by stream order, not timestamp)."""

from __future__ import annotations

from gitstore.events import Event
from gitstore.events.turns import turn_count
from porcelain.domain.compaction.overlays import ToolCalls
from porcelain.domain.compaction.projection import SUMMARY_REQUEST, Kept, Summarized, project

from .builders import comp, of_type, reset, stamp, turns, two_turns, visible


def test_no_overlays_changes_nothing() -> None:  # case 13
    events = two_turns()
    result = project(events)
    assert result.events == events
    assert result.origins == [Kept(0), Kept(1)]


def test_reasoning_strip_removes_reasoning_only() -> None:  # case 14
    result = project([*two_turns(), comp(0, 1, reasoning=True)])
    assert of_type(result.events, "chat_response", "reasoning") == []
    assert of_type(result.events, "chat_response", "message") == [
        "Created src/main.rs",
        "Added error handling",
    ]
    assert len(of_type(result.events, "tool_call_request")) == 2
    assert of_type(result.events, "compaction") == []


def test_strip_requests_only() -> None:  # case 15
    result = project([*two_turns(), comp(0, 1, tools=ToolCalls.STRIP_REQUESTS)])
    requests = of_type(result.events, "tool_call_request")
    assert [r["arguments"] for r in requests] == [{}, {}]
    assert requests[1]["name"] == "fs_modify_file" and requests[1]["id"] == "tc2"
    responses = of_type(result.events, "tool_call_response", "content")
    assert responses == ["file created", "file modified"]


def test_strip_both() -> None:  # case 16
    result = project([*two_turns(), comp(0, 1, tools=ToolCalls.STRIP)])
    assert [r["arguments"] for r in of_type(result.events, "tool_call_request")] == [{}, {}]
    contents = of_type(result.events, "tool_call_response", "content")
    assert contents == [
        "[compacted] fs_create_file: success",
        "[compacted] fs_modify_file: success",
    ]


def test_strip_responses_only() -> None:  # case 17
    result = project([*two_turns(), comp(0, 1, tools=ToolCalls.STRIP_RESPONSES)])
    assert of_type(result.events, "tool_call_request")[0]["arguments"] == {"path": "src/main.rs"}
    assert of_type(result.events, "tool_call_response")[0]["content"] == (
        "[compacted] fs_create_file: success"
    )


def test_stripped_error_response_stays_an_error() -> None:  # case 18
    t = stamp(0)
    events: list[Event] = [
        {"type": "turn_start", "timestamp": t},
        {"type": "chat_request", "timestamp": t, "content": "run the tests"},
        {
            "type": "tool_call_request",
            "timestamp": t,
            "id": "x",
            "name": "cargo_test",
            "arguments": {},
        },
        {
            "type": "tool_call_response",
            "timestamp": t,
            "id": "x",
            "content": "test failed: boom",
            "is_error": True,
        },
        comp(0, 0, tools=ToolCalls.STRIP_RESPONSES),
    ]
    response = of_type(project(events).events, "tool_call_response")[0]
    assert response["content"] == "[compacted] cargo_test: error"
    assert response["is_error"] is True


def test_response_without_known_request_is_named_unknown() -> None:
    t = stamp(0)
    events: list[Event] = [
        {"type": "chat_request", "timestamp": t, "content": "q"},
        {
            "type": "tool_call_response",
            "timestamp": t,
            "id": "ghost",
            "content": "x",
            "is_error": False,
        },
        comp(0, 0, tools=ToolCalls.STRIP),
    ]
    assert of_type(project(events).events, "tool_call_response")[0]["content"] == (
        "[compacted] unknown: success"
    )


def test_omit_drops_both_halves() -> None:  # case 19
    result = project([*two_turns(), comp(0, 1, tools=ToolCalls.OMIT)])
    assert of_type(result.events, "tool_call_request") == []
    assert of_type(result.events, "tool_call_response") == []
    assert len(of_type(result.events, "chat_response", "reasoning")) == 2
    assert len(of_type(result.events, "chat_response", "message")) == 2


def test_summary_replaces_everything() -> None:  # case 20
    result = project([*two_turns(), comp(0, 1, summary="Set up and added error handling.")])
    shown = visible(result.events)
    assert [(e["type"], e.get("content"), e.get("message")) for e in shown] == [
        ("chat_request", SUMMARY_REQUEST, None),
        ("chat_response", None, "Set up and added error handling."),
    ]
    assert result.events[0]["type"] == "turn_start"
    assert all(e["timestamp"] == stamp(0) for e in result.events)
    assert result.origins == [Summarized(0, 1)]


def test_summary_ignores_its_own_mechanical_policies() -> None:  # case 21
    overlay = comp(0, 1, summary="S", reasoning=True, tools=ToolCalls.STRIP)
    assert len(visible(project([*two_turns(), overlay]).events)) == 2


def test_summary_of_first_turn_only() -> None:  # case 22
    shown = visible(project([*two_turns(), comp(0, 0, summary="S")]).events)
    assert len(shown) == 7
    assert shown[2]["content"] == "add error handling"


def test_summary_of_last_turn_keeps_turn_count() -> None:  # case 23
    result = project([*two_turns(), comp(1, 1, summary="S")])
    assert turn_count(result.events) == 2
    assert result.events[6]["type"] == "turn_start"
    assert result.events[8]["message"] == "S"
    assert result.origins == [Kept(0), Summarized(1, 1)]


def test_equal_texts_are_still_two_summaries() -> None:  # case 24
    result = project(
        [*turns(2), comp(0, 0, summary="SAME", at=1), comp(1, 1, summary="SAME", at=2)]
    )
    assert turn_count(result.events) == 2
    assert of_type(result.events, "chat_response", "message") == ["SAME", "SAME"]


def test_newer_summary_inside_older_splits_it() -> None:  # case 25
    events = [*turns(4), comp(0, 3, summary="OUTER"), comp(1, 2, summary="INNER")]
    result = project(events)
    assert of_type(result.events, "chat_response", "message") == ["OUTER", "INNER", "OUTER"]
    assert result.origins == [Summarized(0, 0), Summarized(1, 2), Summarized(3, 3)]


def test_summary_in_the_middle() -> None:  # case 26
    result = project([*turns(6), comp(1, 4, summary="S")])
    assert result.origins == [Kept(0), Summarized(1, 4), Kept(5)]
    assert of_type(result.events, "chat_response", "message") == ["m0", "S", "m5"]


def test_later_in_stream_wins_even_with_same_timestamp() -> None:  # case 27
    events = [
        *two_turns(),
        comp(0, 1, tools=ToolCalls.OMIT, at=5),
        comp(0, 1, tools=ToolCalls.STRIP, at=5),
    ]
    assert len(of_type(project(events).events, "tool_call_request")) == 2


def test_stream_order_beats_timestamps() -> None:
    # The later event carries an older timestamp (another machine's clock): it still wins.
    events = [
        *two_turns(),
        comp(0, 1, tools=ToolCalls.STRIP, at=9),
        comp(0, 1, tools=ToolCalls.OMIT, at=1),
    ]
    assert of_type(project(events).events, "tool_call_request") == []


def test_each_policy_has_its_own_winner() -> None:  # case 28
    events = [*two_turns(), comp(0, 1, reasoning=True), comp(0, 1, tools=ToolCalls.STRIP)]
    result = project(events)
    assert of_type(result.events, "chat_response", "reasoning") == []
    assert all(
        c.startswith("[compacted]") for c in of_type(result.events, "tool_call_response", "content")
    )


def test_later_strip_beats_earlier_omit() -> None:  # case 29
    events = [*two_turns(), comp(0, 1, tools=ToolCalls.OMIT), comp(0, 1, tools=ToolCalls.STRIP)]
    requests = of_type(project(events).events, "tool_call_request")
    assert [r["arguments"] for r in requests] == [{}, {}]


def test_summary_wins_over_mechanical_in_either_order() -> None:  # case 30
    first = [
        *two_turns(),
        comp(0, 1, reasoning=True, tools=ToolCalls.STRIP),
        comp(0, 1, summary="S"),
    ]
    second = [
        *two_turns(),
        comp(0, 1, summary="S"),
        comp(0, 1, reasoning=True, tools=ToolCalls.STRIP),
    ]
    assert len(visible(project(first).events)) == 2
    assert len(visible(project(second).events)) == 2


def test_policies_only_cover_their_range() -> None:  # case 31
    result = project([*two_turns(), comp(0, 0, reasoning=True, tools=ToolCalls.OMIT)])
    shown = visible(result.events)
    assert len(shown) == 7
    assert [e.get("content") or e.get("message") for e in shown[:2]] == [
        "set up the project",
        "Created src/main.rs",
    ]
    assert shown[3]["reasoning"] == "Modify main.rs"


def test_range_past_the_end_is_clamped() -> None:  # case 32
    result = project([*two_turns(), comp(0, 99, reasoning=True)])
    assert of_type(result.events, "chat_response", "reasoning") == []
    assert result.origins == [Kept(0), Kept(1)]


def test_config_deltas_and_unknown_entries_stay_in_place() -> None:  # case 33
    delta = {
        "type": "config_delta",
        "timestamp": stamp(1),
        "delta": {"assistant": {"model": {"id": "x"}}},
    }
    unknown = {"type": "something_new", "timestamp": stamp(2), "x": 1}
    events = [delta, *two_turns()[:6], unknown, *two_turns()[6:], comp(0, 1, summary="S")]
    result = project(events)
    assert result.events[0] is delta
    assert unknown in result.events
    assert [e["type"] for e in result.events] == [
        "config_delta",
        "turn_start",
        "chat_request",
        "chat_response",
        "something_new",
    ]


def test_projection_is_idempotent_and_composes() -> None:  # case 34
    once = project([*two_turns(), comp(0, 1, reasoning=True)]).events
    assert of_type(once, "compaction") == []
    assert project(once).events == once
    twice = project([*once, comp(0, 0, tools=ToolCalls.OMIT)]).events
    assert [r["name"] for r in of_type(twice, "tool_call_request")] == ["fs_modify_file"]
    assert of_type(twice, "chat_response", "reasoning") == []


def test_empty_stream_stays_empty() -> None:  # case 35
    result = project([comp(0, 3, summary="S")])
    assert result.events == []
    assert result.origins == []


def test_implicit_first_turn() -> None:  # case 10
    t = stamp(0)
    events = [
        {"type": "chat_request", "timestamp": t, "content": "q0"},
        {"type": "chat_response", "timestamp": t, "reasoning": "r0"},
        {"type": "turn_start", "timestamp": t},
        {"type": "chat_request", "timestamp": t, "content": "q1"},
        {"type": "chat_response", "timestamp": t, "reasoning": "r1"},
        comp(1, 1, reasoning=True),
    ]
    assert of_type(project(events).events, "chat_response", "reasoning") == ["r0"]


def test_withdrawn_overlays_do_not_apply() -> None:
    events = [*two_turns(), comp(0, 1, summary="S"), reset()]
    result = project(events)
    assert result.events == two_turns()
    partly = [*two_turns(), comp(0, 1, summary="S"), comp(0, 1, reasoning=True), reset([0])]
    result = project(partly)
    assert of_type(result.events, "chat_response", "reasoning") == []
    assert len(of_type(result.events, "chat_response", "message")) == 2
    assert of_type(result.events, "compaction_reset") == []


def test_overlay_after_a_reset_applies() -> None:
    events = [*two_turns(), comp(0, 1, summary="OLD"), reset(), comp(1, 1, summary="NEW")]
    assert of_type(project(events).events, "chat_response", "message") == [
        "Created src/main.rs",
        "NEW",
    ]
