"""gitstore.turns against the JP reference (section 1.8, acceptance cases 9-12)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from gitstore.events.turns import event_count, turn_bounds, turn_count, turn_indices
from gitstore.store.core import Store
from tests.unit.gitstore.builders import answer, at, request, start, turn

TS = {"type": "turn_start", "timestamp": at(0)}


def cr(text: str, second: int = 1) -> dict[str, Any]:
    return request(text, second)


def reasoning(text: str, second: int = 2) -> dict[str, Any]:
    return {"type": "chat_response", "timestamp": at(second), "reasoning": text}


def test_case_9_empty_and_two_started_turns() -> None:
    assert turn_count([]) == 0 and turn_indices([]) == [] and event_count([]) == 0
    two = [TS, cr("hello"), answer("hi"), TS, cr("bye")]
    assert turn_count(two) == 2
    assert turn_indices(two) == [0, 0, 0, 1, 1]
    assert event_count(two) == 5


def test_case_10_events_before_the_first_turn_start() -> None:
    stream = [cr("q0"), reasoning("r0"), TS, cr("q1"), reasoning("r1")]
    assert turn_count(stream) == 2
    assert turn_indices(stream) == [0, 0, 1, 1, 1]
    alternating = [TS, cr("a"), TS, cr("b"), TS, cr("c")]
    assert turn_indices(alternating) == [0, 0, 1, 1, 2, 2]
    assert turn_count(alternating) == 3


def test_leading_and_consecutive_turn_starts() -> None:
    assert turn_indices([TS, TS, cr("x")]) == [0, 1, 1], "[TS, TS, CR]: turn 0 [TS], turn 1 [TS, CR]"
    assert turn_count([TS]) == 1
    assert turn_count([cr("no markers"), answer("at all")]) == 1


def test_other_entries_take_the_turn_they_sit_in_and_never_open_one() -> None:
    delta = {"type": "config_delta", "timestamp": at(0), "delta": {}}
    overlay = {"type": "compaction", "timestamp": at(0), "from_turn": 0, "to_turn": 0}
    newer = {"type": "turn_rating", "timestamp": at(0)}
    stream = [start("jp-c1"), delta, TS, cr("a"), overlay, TS, newer, cr("b"), delta]
    assert turn_indices(stream) == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    assert turn_count(stream) == 2
    assert event_count(stream) == 4
    assert turn_count([start("jp-c1"), delta, overlay]) == 0


def test_turn_bounds_cover_conversation_events_only() -> None:
    delta = {"type": "config_delta", "timestamp": at(0), "delta": {}}
    stream = [start("jp-c1"), *turn(1), delta, *turn(2), delta]
    assert turn_bounds(stream) == [(1, 4), (5, 8)]
    assert turn_bounds([start("jp-c1")]) == []


def test_case_11_turn_at_time() -> None:
    from porcelain.domain.stream import Stream

    def when(hour: int) -> str:
        return f"2026-01-05T{hour:02d}:00:00.000000Z"

    stream = [
        {"type": "turn_start", "timestamp": when(10)},
        {"type": "chat_request", "timestamp": when(10), "content": "a"},
        {"type": "turn_start", "timestamp": when(12)},
        {"type": "chat_request", "timestamp": when(12), "content": "b"},
    ]
    facts = Stream(stream)

    def at_hour(hour: int) -> int | None:
        return facts.turn_at(datetime(2026, 1, 5, hour, tzinfo=UTC))

    assert at_hour(9) is None
    assert at_hour(11) == 0
    assert at_hour(12) == 1
    assert at_hour(15) == 1


def tool_request(call_id: str, second: int) -> dict[str, Any]:
    return {"type": "tool_call_request", "timestamp": at(second), "id": call_id, "name": "fs", "arguments": {}}


def tool_response(call_id: str, second: int) -> dict[str, Any]:
    return {"type": "tool_call_response", "timestamp": at(second), "id": call_id, "content": "ok", "is_error": False}


def test_case_12_gemini_style_id_reuse_is_accepted(store: Store) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1"), *turn(1)], None, "test")
    reuse = [tool_request("X", 10), tool_request("X", 11), tool_response("X", 12), tool_response("X", 13)]
    store.log.append("jp-c1", reuse, tip, "test")
    assert [e["type"] for e in store.log.load("jp-c1").events][-4:] == [e["type"] for e in reuse]


@pytest.mark.parametrize("case", ["orphan", "earlier-turn", "twice"])
def test_case_12_unmatched_tool_responses_are_refused(store: Store, case: str) -> None:
    tip = store.log.create("jp-c1", [start("jp-c1"), *turn(1), tool_request("A", 5), tool_response("A", 6)], None, "t")
    tip = store.log.append("jp-c1", turn(2, 10), tip, "t")
    bad = {
        "orphan": [tool_response("nope", 20)],
        "earlier-turn": [tool_response("A", 20)],
        "twice": [tool_request("B", 20), tool_response("B", 21), tool_response("B", 22)],
    }[case]
    with pytest.raises(Exception):  # noqa: B017 (any refusal will do; none happens today)
        store.log.append("jp-c1", bad, tip, "t")
    assert store.log.load("jp-c1").tip == tip, "nothing appended"


def _turns_step_by_step(events: list[dict[str, Any]]) -> list[int]:
    """JP's rule written out one event at a time: a ``turn_start`` opens a new turn
    once the current one holds a conversation event."""
    out, current, seen = [], 0, False
    for event in events:
        kind = event.get("type")
        if kind in {"turn_start", "chat_request", "chat_response", "tool_call_request",
                    "tool_call_response", "inquiry_request", "inquiry_response"}:
            if kind == "turn_start" and seen:
                current += 1
            seen = True
        out.append(current)
    return out


def test_turn_indices_agree_with_the_rule_step_by_step_on_random_streams() -> None:
    import random

    kinds = ["turn_start", "chat_request", "chat_response", "tool_call_request",
             "config_delta", "compaction", "conversation_start", None, 5]
    rng = random.Random(7)
    for _ in range(2000):
        events = [{"type": rng.choice(kinds)} if rng.random() > 0.05 else {}
                  for _ in range(rng.randrange(0, 12))]
        got = turn_indices(events)
        assert got == _turns_step_by_step(events), events
        assert all(type(n) is int for n in got)  # never a bool from the counting
