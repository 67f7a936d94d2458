"""The offline review writes its summary again when the range moves (and only then)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstore.events import Event
from porcelain.models.offline_range import follow_range, inherited_range
from porcelain.models.offline_review import parse_directives
from porcelain.models.offline_summary import HEADER, summarize

T = "2026-01-05T09:00:00.000000Z"


def review(n: int, *talk: str) -> list[Event]:
    """A review's model view: n marked source turns, the opening proposal, then talk."""
    events: list[Event] = []
    for i in range(1, n + 1):
        events += [
            {
                "timestamp": T,
                "type": "chat_request",
                "content": f"[turn {i}] Edit src/f{i}_x.py now.",
            },
            {"timestamp": T, "type": "chat_response", "message": f"Edited src/f{i}_x.py; 1{i} ms."},
        ]
    events += [
        {
            "timestamp": T,
            "type": "tool_call_request",
            "id": "o",
            "name": "propose_compaction",
            "arguments": {},
        },
        {
            "timestamp": T,
            "type": "tool_call_response",
            "id": "o",
            "content": "ok",
            "is_error": False,
        },
    ]
    for text in talk:
        events.append({"timestamp": T, "type": "chat_request", "content": text})
    return events


def opening(events: list[Event], lo: int, hi: int) -> dict[str, Any]:
    return {"from_turn": lo, "to_turn": hi, "summary": summarize(inherited_range(events, lo, hi))}


@settings(max_examples=50, deadline=None)
@given(
    st.integers(2, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n), st.integers(1, n)))
)
def test_a_moved_range_gets_a_summary_of_exactly_that_range(case: tuple[int, int, int]) -> None:
    n, a, b = case
    lo, hi = min(a, b), max(a, b)
    events = review(n, f"turns {lo}-{hi}")
    before = opening(events, 1, n)
    after = follow_range(
        events,
        before,
        {**before, "from_turn": lo, "to_turn": hi},
        parse_directives(f"turns {lo}-{hi}"),
    )
    summary = after["summary"]
    assert summary.startswith(HEADER)
    for i in range(1, n + 1):
        assert (f"src/f{i}_x.py" in summary) == (lo <= i <= hi), (lo, hi, i, summary)


def test_text_the_user_set_is_kept() -> None:
    events = review(4, "summary: my own words", "turns 2-3")
    before = {"from_turn": 1, "to_turn": 4, "summary": "my own words"}
    moved = {**before, "from_turn": 2, "to_turn": 3}
    assert follow_range(events, before, moved, parse_directives("turns 2-3")) == moved
    events = review(4, "add: keep this", "turns 2-3")
    generated = opening(events, 1, 4)
    moved = {**generated, "from_turn": 2, "to_turn": 3}
    assert follow_range(events, generated, moved, parse_directives("turns 2-3")) == moved


def test_the_same_range_keeps_the_summary() -> None:
    events = review(3, "strip reasoning")
    before = opening(events, 1, 3)
    assert follow_range(events, before, dict(before), parse_directives("strip reasoning")) == before
