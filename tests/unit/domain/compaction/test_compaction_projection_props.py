"""Properties of projection over random streams and overlays (reference case 36)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstore.events import CONVERSATION_TYPES, Event
from gitstore.events.turns import turn_count, turn_indices
from porcelain.domain.compaction.overlays import ToolCalls, compaction_event, standing_overlays
from porcelain.domain.compaction.projection import Kept, project

from .builders import stamp


@st.composite
def streams(draw: Any) -> list[Event]:
    """Sanitized-looking turns (each with a request), tool pairs, deltas, unknown entries."""
    events: list[Event] = []
    n_turns = draw(st.integers(0, 6))
    implicit_first = draw(st.booleans())
    clock = 0
    call = 0
    for turn in range(n_turns):
        if turn > 0 or not implicit_first:
            events.append({"type": "turn_start", "timestamp": stamp(clock)})
        events.append({"type": "chat_request", "timestamp": stamp(clock), "content": f"q{turn}"})
        for part in draw(
            st.lists(st.sampled_from(["reason", "tools", "message", "delta", "new"]), max_size=5)
        ):
            clock += 1
            t = stamp(clock)
            if part == "reason":
                events.append({"type": "chat_response", "timestamp": t, "reasoning": f"r{clock}"})
            elif part == "message":
                events.append({"type": "chat_response", "timestamp": t, "message": f"m{clock}"})
            elif part == "delta":
                events.append({"type": "config_delta", "timestamp": t, "delta": {"k": clock}})
            elif part == "new":
                events.append({"type": "something_new", "timestamp": t})
            else:
                ids = [f"c{call + i}" for i in range(draw(st.integers(1, 2)))]
                call += len(ids)
                events += [
                    {
                        "type": "tool_call_request",
                        "timestamp": t,
                        "id": i,
                        "name": "tool",
                        "arguments": {"a": i},
                    }
                    for i in ids
                ]
                events += [
                    {
                        "type": "tool_call_response",
                        "timestamp": t,
                        "id": i,
                        "content": "out",
                        "is_error": draw(st.booleans()),
                    }
                    for i in ids
                ]
    return events


@st.composite
def overlay_events(draw: Any) -> Event:
    a = draw(st.integers(0, 7))
    b = draw(st.integers(a, 9))
    summary = draw(st.one_of(st.none(), st.sampled_from(["S1", "S2"])))
    reasoning = draw(st.booleans())
    tools = draw(st.one_of(st.none(), st.sampled_from(list(ToolCalls))))
    return compaction_event(
        stamp(draw(st.integers(0, 99))),
        a,
        b,
        summary=summary,
        reasoning=reasoning,
        tool_calls=tools,
    )


@st.composite
def with_overlays(draw: Any) -> list[Event]:
    events: list[Event] = draw(streams())
    for _ in range(draw(st.integers(0, 4))):
        position = draw(st.integers(0, len(events)))
        if draw(st.integers(0, 5)) == 0:
            withdraw = draw(st.one_of(st.none(), st.lists(st.integers(0, 3), max_size=2)))
            events.insert(
                position, {"type": "compaction_reset", "timestamp": stamp(0), "withdraw": withdraw}
            )
        else:
            events.insert(position, draw(overlay_events()))
    return events


def _turn_events(events: list[Event]) -> dict[int, list[Event]]:
    out: dict[int, list[Event]] = {}
    for event, turn in zip(events, turn_indices(events), strict=True):
        if event["type"] in CONVERSATION_TYPES:
            out.setdefault(turn, []).append(event)
    return out


@settings(max_examples=200, deadline=None)
@given(with_overlays())
def test_projection_keeps_the_stream_valid(events: list[Event]) -> None:
    result = project(events)
    assert not [e for e in result.events if e["type"] in ("compaction", "compaction_reset")]
    requested: set[str] = set()
    for event in result.events:
        if event["type"] == "tool_call_request":
            requested.add(event["id"])
        if event["type"] == "tool_call_response":
            assert event["id"] in requested
    assert len(result.origins) == turn_count(result.events)
    # a turn's policies apply to both halves of a pair: none is left alone
    requests = {e["id"] for e in result.events if e["type"] == "tool_call_request"}
    responses = {e["id"] for e in result.events if e["type"] == "tool_call_response"}
    assert requests == responses


@settings(max_examples=200, deadline=None)
@given(with_overlays())
def test_turns_outside_every_overlay_are_unchanged(events: list[Event]) -> None:
    covered = {t for o in standing_overlays(events) for t in range(o.from_turn, o.to_turn + 1)}
    raw = _turn_events(events)
    result = project(events)
    projected = _turn_events(result.events)
    for out_turn, origin in enumerate(result.origins):
        if isinstance(origin, Kept) and origin.index not in covered:
            assert projected[out_turn] == raw[origin.index]
    kept = {o.index for o in result.origins if isinstance(o, Kept)}
    assert set(raw) - covered <= kept


@settings(max_examples=200, deadline=None)
@given(streams())
def test_projection_of_an_overlay_free_stream_is_identity(events: list[Event]) -> None:
    result = project(events)
    assert result.events == events
    assert result.origins == [Kept(i) for i in range(turn_count(events))]


@settings(max_examples=200, deadline=None)
@given(with_overlays())
def test_mechanical_overlays_keep_turns_one_to_one(events: list[Event]) -> None:
    mechanical = [e for e in events if not (e["type"] == "compaction" and "summary" in e)]
    result = project(mechanical)
    assert result.origins == [Kept(i) for i in range(turn_count(mechanical))]
    assert project(result.events).events == result.events
