"""The coverage report's sizes, read only where overlays are, equal the whole projection's."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstore import ChainView
from gitstore.cache.facts import ChainFacts, segment_facts
from gitstore.cache.view import Segment
from gitstore.events import Event
from gitstore.events.turns import turn_count, turn_indices
from porcelain.domain.compaction.coverage import coverage
from porcelain.domain.compaction.overlays import (
    ToolCalls,
    compaction_event,
    overlay_from_event,
    standing_overlays,
)
from porcelain.domain.compaction.projection import project, project_part
from porcelain.domain.compaction.proposal import Proposal
from porcelain.domain.stream import Stream
from porcelain.domain.tokens import PROVIDER_VISIBLE, estimate_tokens, visible_chars

from .builders import stamp
from .test_compaction_projection_props import with_overlays


@st.composite
def tangled(draw: Any) -> list[Event]:
    """Streams with overlays, and tool results far from their calls (or with no call),
    calls with an empty name or an id used twice: the names a stripped result takes."""
    events: list[Event] = draw(with_overlays())
    for _ in range(draw(st.integers(0, 8))):
        position = draw(st.integers(0, len(events)))
        key = f"c{draw(st.integers(0, 3))}"
        if draw(st.booleans()):
            event: Event = {"type": "tool_call_response", "timestamp": stamp(0), "id": key}
            event["content"] = "late"
        else:
            name = draw(st.sampled_from(["", "other"]))
            event = {"type": "tool_call_request", "timestamp": stamp(0), "id": key, "name": name}
        events.insert(position, event)
    return events


def _size(events: list[Event], overlays: Any) -> int:
    view = project(Stream(events).with_overlays(overlays)).events
    return estimate_tokens(e for e in view if e.get("type") in PROVIDER_VISIBLE)


class _Kept:
    """Segments in memory, with the values ``per_segment`` keeps."""

    def __init__(self, parts: dict[str, tuple[list[Event], list[str]]]) -> None:
        self.parts, self.kept, self.reads = parts, dict[tuple[str, str], Any](), 0

    def whole(self, segment: Segment) -> tuple[list[Event], list[str]]:
        self.reads += 1
        return self.parts[segment.last]

    def ids(self, segment: Segment) -> list[str]:
        return self.parts[segment.last][1]

    def events(self, commits: Any) -> None:
        return None

    def measured(self, segment: Segment, name: str) -> Any:
        return self.kept.get((segment.last, name))

    def keep_measure(self, segment: Segment, name: str, value: Any) -> None:
        self.kept[(segment.last, name)] = value


def _view(events: list[Event], size: int) -> tuple[ChainView, _Kept]:
    ids = [f"{n:040x}" for n in range(len(events))]
    whole = len(events) // size * size
    segments = [Segment(ids[s + size - 1], s, size) for s in range(0, whole, size)]
    parts = {
        s.last: (events[s.start : s.start + size], ids[s.start : s.start + size]) for s in segments
    }
    facts = ChainFacts.compose(
        [*(segment_facts(parts[s.last][0]) for s in segments), segment_facts(events[whole:])]
    )
    source = _Kept(parts)
    return ChainView(facts, segments, (events[whole:], ids[whole:]), source), source


def _proposal(draw: Any, count: int) -> Proposal:
    a = draw(st.integers(1, count))
    b = draw(st.integers(a, count))
    if draw(st.booleans()):
        return Proposal(a, b, draw(st.sampled_from(["S", "a longer summary"])))
    return Proposal(a, b, None, draw(st.booleans()), draw(st.sampled_from([*ToolCalls, None])))


@settings(max_examples=300, deadline=None)
@given(tangled(), st.data())
def test_coverage_sizes_are_those_of_the_whole_projection(events: list[Event], data: Any) -> None:
    count = turn_count(events)
    if count == 0:
        return
    proposal = _proposal(data.draw, count)
    standing = standing_overlays(events)
    applied = [*standing, overlay_from_event(proposal.to_compaction_event(""), len(events))]
    expected = (_size(events, standing), _size(events, applied))
    report = coverage(events, proposal)
    assert (report.before, report.after) == expected
    view, _ = _view(events, data.draw(st.integers(1, 9)))
    assert coverage(view, proposal) == report


@settings(max_examples=300, deadline=None)
@given(tangled(), st.data())
def test_a_part_of_whole_turns_projects_as_in_the_whole(events: list[Event], data: Any) -> None:
    count = turn_count(events)
    standing = standing_overlays(events)
    if count == 0 or not standing:
        return
    indices = turn_indices(events)
    lo = data.draw(st.integers(0, count - 1))
    hi = data.draw(st.integers(lo, count - 1))
    first = next(i for i, t in enumerate(indices) if t >= lo)
    stop = max(i for i, t in enumerate(indices) if t <= hi) + 1
    stream = Stream(events)
    whole = project(stream).events
    part = project_part(stream, range(first, stop))
    before = project_part(stream, range(first))
    after = project_part(stream, range(stop, len(events)))
    assert before + part + after == whole


@given(tangled(), st.integers(1, 9))
def test_a_view_counts_each_segment_once(events: list[Event], size: int) -> None:
    view, source = _view(events, size)
    chars = visible_chars(events)
    assert visible_chars(view) == chars
    reads = source.reads
    assert visible_chars(view) == chars and source.reads == reads


def test_a_stripped_result_in_a_part_is_named_by_the_latest_call_before_it() -> None:
    def turn(n: int) -> list[Event]:
        t = stamp(n)
        return [{"type": "turn_start", "timestamp": t}, {"type": "chat_request", "timestamp": t}]

    def call(name: str) -> list[Event]:
        return [
            {"type": "tool_call_request", "timestamp": stamp(0), "id": "x", "name": name},
            {"type": "tool_call_response", "timestamp": stamp(0), "id": "x", "content": "ok"},
        ]

    late: Event = {"type": "tool_call_response", "timestamp": stamp(3), "id": "x", "content": "?"}
    strip = compaction_event(stamp(4), 2, 2, tool_calls=ToolCalls.STRIP)
    events = [*turn(0), *call("first"), *turn(1), *call("second"), *turn(2), late, strip]
    part = project_part(Stream(events), range(8, len(events)))
    assert part[-1]["content"] == "[compacted] second: success"
    assert part == project(events).events[8:]
