"""Segment facts compose into the facts of the whole chain, however it is cut."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitstore.cache.facts import ChainFacts, Run, segment_facts
from gitstore.cache.view import ChainView, Segment
from gitstore.events import CONVERSATION_TYPES
from gitstore.events.turns import turn_count, turn_indices

KINDS = [
    "turn_start",
    "chat_request",
    "chat_response",
    "tool_call_request",
    "tool_call_response",
    "config_delta",
    "compaction",
    "compaction_reset",
    "conversation_start",
    "something_newer",
]

streams = st.lists(
    st.sampled_from(KINDS).map(lambda k: {"type": k, "timestamp": "2026-01-01T00:00:00.000000Z"}),
    max_size=60,
)


def split(events: list[dict[str, Any]], cuts: list[int]) -> list[list[dict[str, Any]]]:
    points = sorted({min(c, len(events)) for c in cuts})
    out, last = [], 0
    for point in [*points, len(events)]:
        out.append(events[last:point])
        last = point
    return out


@given(streams, st.lists(st.integers(min_value=0, max_value=60), max_size=6))
def test_facts_of_any_cut_equal_the_facts_of_the_whole(
    events: list[dict[str, Any]], cuts: list[int]
) -> None:
    parts = split(events, cuts)
    read: list[int] = []

    def reader(k: int) -> dict[str, Any]:
        read.append(k)
        return segment_facts(parts[k])

    runs, start = [], 0
    for part in parts:
        runs.append(Run.of(start, segment_facts(part)))
        start += len(part)
    composed = ChainFacts(runs, reader)
    assert composed.length == len(events)
    assert composed.turn_count() == turn_count(events)
    assert not read, "counting turns reads no run's facts"
    assert list(composed.indices()) == turn_indices(events)
    assert ChainFacts.compose(segment_facts(p) for p in parts).turn_count() == turn_count(events)
    first = next((p for p, e in enumerate(events) if e["type"] in CONVERSATION_TYPES), None)
    assert composed.first == first
    internal = [
        (p, e)
        for p, e in enumerate(events)
        if e["type"] in {"config_delta", "compaction", "compaction_reset", "conversation_start"}
    ]
    assert composed.internal_events() == internal
    assert composed.internal_events("compaction") == [
        x for x in internal if x[1]["type"] == "compaction"
    ]


class InMemory:
    """Segments held in dicts; ``by_id`` empty: no single event is cached."""

    def __init__(self, store: dict[str, Any], by_id: dict[str, Any]) -> None:
        self.store, self.by_id = store, by_id

    def whole(self, segment: Segment) -> Any:
        return self.store[segment.last]

    def ids(self, segment: Segment) -> list[str]:
        return list(self.store[segment.last][1])

    def events(self, commits: Any) -> Any:
        return [self.by_id[c] for c in commits] if all(c in self.by_id for c in commits) else None


@given(streams, st.integers(min_value=1, max_value=9), st.booleans())
def test_a_view_over_segments_reads_as_the_list(
    events: list[dict[str, Any]], size: int, cached: bool
) -> None:
    ids = [f"{n:040x}" for n in range(len(events))]
    whole = len(events) // size * size
    segments = [Segment(ids[s + size - 1], s, size) for s in range(0, whole, size)]
    store = {
        s.last: (events[s.start : s.start + size], ids[s.start : s.start + size]) for s in segments
    }
    by_id = dict(zip(ids, events, strict=True)) if cached else {}
    facts = ChainFacts.compose(
        [*(segment_facts(store[s.last][0]) for s in segments), segment_facts(events[whole:])]
    )
    view = ChainView(facts, segments, (events[whole:], ids[whole:]), InMemory(store, by_id))
    assert list(view) == events and len(view) == len(events)
    assert [view[i] for i in range(-len(events), len(events))] == events + events
    assert [view.commit(i) for i in range(len(events))] == ids
    assert view[2:-1] == events[2:-1]


def test_turn_indices_refuse_positions_outside_the_chain() -> None:
    stream = [{"type": t} for t in ("config_delta", "turn_start", "chat_request", "turn_start")]
    indices = ChainFacts.of(stream + stream[1:]).indices()
    assert list(indices) == [0, 0, 0, 1, 2, 2, 3] and indices[-1] == 3 and indices[1:4] == [0, 0, 1]
    with pytest.raises(IndexError):
        indices[7]
    with pytest.raises(IndexError):
        ChainView.of_list([], [])[0]


def test_facts_that_do_not_match_the_segments_are_refused() -> None:
    with pytest.raises(ValueError):
        ChainView(ChainFacts.of([{"type": "turn_start"}]), [], ([], []), InMemory({}, {}))
