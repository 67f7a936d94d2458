"""A ``Stream``'s facts are those of its events, however they were found.

Review start, ``compact`` and ``--continue`` build one stream of a long
source and hand it to every pure function that needs its turns or its
compactions; each must answer exactly as it does given the bare events, and
a view's stream (facts from the cache) exactly as its events' stream.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstore.events import CONVERSATION_TYPES, Event
from gitstore.events.turns import turn_bounds, turn_count, turn_indices
from porcelain.app.compaction.summarize import choose_reading, range_events
from porcelain.app.review.start import fits_tokens
from porcelain.domain.compaction.bounds import Ago, Count, FromEnd, LastCompaction, Position
from porcelain.domain.compaction.overlays import ToolCalls, standing_overlays
from porcelain.domain.compaction.plan import plan_compaction
from porcelain.domain.compaction.projection import Projection, project
from porcelain.domain.compaction.proposal import ProposalError, validate_proposal
from porcelain.domain.compaction.ranges import RangeOverrides, resolve_rule_range
from porcelain.domain.compaction.rules import Rule, SummarySpec
from porcelain.domain.stream import Stream
from porcelain.domain.tokens import estimate_tokens
from porcelain.domain.view import PROVIDER_VISIBLE

from .compaction.builders import comp, turns
from .compaction.test_compaction_projection_props import with_overlays
from .compaction.test_compaction_sizes import _view


def _reference_bounds(events: list[Event]) -> list[tuple[int, int]]:
    """turn_bounds as first written (a dict per turn, sorted)."""
    bounds: dict[int, list[int]] = {}
    for pos, (event, t) in enumerate(zip(events, turn_indices(events), strict=True)):
        if event.get("type") in CONVERSATION_TYPES:
            b = bounds.setdefault(t, [pos, pos + 1])
            b[1] = pos + 1
    return [(b[0], b[1]) for _, b in sorted(bounds.items())]


def _with_prefix(events: list[Event], prefix: int) -> list[Event]:
    """Entries that are not conversation events before the first turn (deltas, overlays)."""
    delta: Event = {"type": "config_delta", "timestamp": "2026-01-01T00:00:00.000000Z"}
    return [dict(delta, delta={"n": n}) for n in range(prefix)] + events


@settings(max_examples=200, deadline=None)
@given(with_overlays(), st.integers(0, 2))
def test_turn_facts_with_indices_are_the_same(events: list[Event], prefix: int) -> None:
    events = _with_prefix(events, prefix)
    idx = turn_indices(events)
    assert turn_bounds(events) == _reference_bounds(events)
    assert turn_bounds(events, indices=idx) == turn_bounds(events)
    assert turn_count(events, indices=idx) == turn_count(events)
    assert turn_count(events) == len(turn_bounds(events))


def _facts(stream: Stream) -> tuple[list[int], int, list[Any]]:
    return list(stream.indices), stream.count, stream.overlays


@settings(max_examples=200, deadline=None)
@given(with_overlays(), st.integers(0, 2), st.integers(1, 9))
def test_a_stream_has_the_facts_of_its_events(events: list[Event], prefix: int, size: int) -> None:
    events = _with_prefix(events, prefix)
    expected = (turn_indices(events), turn_count(events), standing_overlays(events))
    assert _facts(Stream(events)) == expected
    view, _ = _view(events, size)
    assert _facts(Stream.of_view(view)) == expected
    assert _facts(Stream.of(view)) == expected  # a view's stream reads its facts either way


def test_a_stream_is_its_own_stream() -> None:
    stream = Stream(turns(2))
    assert Stream.of(stream) is stream


@settings(max_examples=100, deadline=None)
@given(with_overlays(), st.integers(1, 9))
def test_projection_of_a_view_stream_is_the_same(events: list[Event], size: int) -> None:
    view, _ = _view(events, size)
    assert project(Stream.of_view(view)) == project(events) == project(Stream(events))


_NOW = datetime(2026, 1, 2, tzinfo=UTC)
_OVERRIDES = [
    RangeOverrides(),
    RangeOverrides(turn=(2, 5)),
    RangeOverrides(first=3),
    RangeOverrides(last=2),
    RangeOverrides(from_=LastCompaction()),
    RangeOverrides(from_=Ago(timedelta(hours=30)), to=FromEnd(1)),
    RangeOverrides(keep_first=Ago(timedelta(seconds=5)), keep_last=Count(1)),
    RangeOverrides(keep_first=LastCompaction(), to=Position(4)),
]


@settings(max_examples=100, deadline=None)
@given(with_overlays(), st.sampled_from(_OVERRIDES), st.integers(1, 9))
def test_range_resolution_over_a_view_stream_is_the_same(
    events: list[Event], overrides: RangeOverrides, size: int
) -> None:
    def resolve(source: Any) -> tuple[int, int] | None | str:
        try:
            return resolve_rule_range(source, Count(1), Count(1), overrides, _NOW)
        except Exception as exc:  # the same refusal either way
            return f"{type(exc).__name__}: {exc}"

    plain = resolve(events)
    assert resolve(Stream(events)) == plain
    assert resolve(Stream.of_view(_view(events, size)[0])) == plain


def test_stream_reads_turn_times_only_for_durations() -> None:
    stream = Stream(turns(3))
    assert stream.count == 3 and stream.overlays == []
    assert stream._times is None  # nothing asked for a time yet
    assert stream.first_time() == datetime(2026, 1, 1, tzinfo=UTC)
    assert stream.turn_at(datetime(2026, 1, 1, 0, 0, 4, tzinfo=UTC)) == 1


_ARGS: list[dict[str, Any]] = [
    {"from_turn": 2, "to_turn": 3, "summary": "S"},
    {"from_turn": 1, "to_turn": 1, "summary": "S"},
    {"from_turn": 1, "to_turn": 2, "reasoning": "strip"},
    {"from_turn": 1, "to_turn": 9, "tool_calls": "omit"},
    {"from_turn": 3, "to_turn": 2, "summary": ""},
    {"from_turn": 0},
]


@settings(max_examples=100, deadline=None)
@given(with_overlays(), st.sampled_from(_ARGS), st.integers(1, 9))
def test_validation_over_a_view_stream_is_the_same(
    events: list[Event], args: dict[str, Any], size: int
) -> None:
    def check(source: Any) -> object:
        try:
            return validate_proposal(args, source)
        except ProposalError as exc:
            return str(exc)

    plain = check(events)
    assert check(Stream(events)) == plain
    assert check(Stream.of_view(_view(events, size)[0])) == plain


@settings(max_examples=200, deadline=None)
@given(with_overlays(), st.integers(0, 7), st.integers(0, 7))
def test_range_events_are_those_of_the_turns(events: list[Event], a: int, b: int) -> None:
    from0, to0 = min(a, b), max(a, b)
    reference = [
        e
        for e, t in zip(events, turn_indices(events), strict=True)
        if from0 <= t <= to0 and e.get("type") in PROVIDER_VISIBLE
    ]
    assert range_events(events, from0, to0) == reference
    assert range_events(Stream(events), from0, to0) == reference


def test_the_projection_is_made_only_when_the_raw_range_does_not_fit() -> None:
    events = [*turns(4), comp(0, 1, summary="short")]
    made: list[Projection] = []

    def making() -> Projection:
        made.append(project(events))
        return made[-1]

    raw = range_events(events, 0, 2)
    assert choose_reading(events, making, 0, 2, window=10_000) == raw
    assert made == []
    small = choose_reading(Stream(events), making, 0, 2, window=2)
    assert len(made) == 1
    assert small == choose_reading(events, project(events), 0, 2, window=2)
    assert small != raw


@given(
    st.lists(st.tuples(st.sampled_from(["chat_request", "config_delta"]), st.integers(0, 40))),
    st.integers(-2, 60),
)
def test_fits_tokens_agrees_with_estimate_tokens(parts: list[tuple[str, int]], budget: int) -> None:
    events: list[Event] = [
        {"type": kind, "timestamp": "t", "content": "x" * size} for kind, size in parts
    ]
    visible = [e for e in events if e["type"] in PROVIDER_VISIBLE]
    assert fits_tokens(events, budget) == (estimate_tokens(visible) <= budget)


@settings(max_examples=200, deadline=None)
@given(with_overlays(), st.integers(1, 9))
def test_dropping_compactions_keeps_each_event_its_turn(events: list[Event], size: int) -> None:
    for stream in (Stream(events), Stream.of_view(_view(events, size)[0])):
        dropped = stream.without_compactions()
        kept = [e for e in events if e["type"] not in ("compaction", "compaction_reset")]
        assert dropped.events == kept
        assert _facts(dropped) == (turn_indices(kept), turn_count(kept), [])
        assert project(dropped) == project(kept)


@settings(max_examples=100, deadline=None)
@given(with_overlays())
def test_other_overlays_leave_the_turns_and_the_stream_alone(events: list[Event]) -> None:
    stream = Stream(events)
    standing = list(stream.overlays)
    tried = stream.with_overlays([])
    bare = [e for e in events if e["type"] not in ("compaction", "compaction_reset")]
    assert project(tried) == project(bare)
    assert (list(tried.indices), tried.count) == (turn_indices(events), turn_count(events))
    assert stream.overlays == standing


@settings(max_examples=100, deadline=None)
@given(with_overlays(), st.sampled_from(_ARGS[:4]))
def test_continue_checks_share_one_stream(events: list[Event], args: dict[str, Any]) -> None:
    from porcelain.app.review.finish import _already_applied
    from porcelain.domain.review.state import proposal_from_args, revalidate

    proposal = proposal_from_args(args)
    assert proposal is not None
    stream = Stream(events)
    applied = _already_applied(stream, proposal)

    def check(source: Any) -> object:
        try:
            return revalidate(proposal, source)
        except ProposalError as exc:
            return str(exc)

    assert check(stream) == check(events)  # the facts the first check found, reused
    assert applied == _already_applied(Stream(events), proposal)


def test_an_applied_proposal_is_found() -> None:
    from porcelain.app.review.finish import _already_applied
    from porcelain.domain.review.state import proposal_from_args

    proposal = proposal_from_args({"from_turn": 1, "to_turn": 2, "summary": "S"})
    assert proposal is not None
    events = [*turns(3), proposal.to_compaction_event("2026-01-02T00:00:00.000000Z")]
    assert _already_applied(Stream(events), proposal) is True
    assert _already_applied(Stream(turns(3)), proposal) is False


_RULES = [
    Rule(Count(1), Count(1), summary=SummarySpec()),
    Rule(Count(0), Count(2), reasoning=True),
    Rule(LastCompaction(), Count(1), tool_calls=ToolCalls.OMIT),
]


@settings(max_examples=100, deadline=None)
@given(with_overlays(), st.sampled_from(_OVERRIDES[:5]))
def test_planning_over_a_stream_is_the_same(events: list[Event], overrides: RangeOverrides) -> None:
    def plan(source: Any) -> object:
        try:
            return plan_compaction(source, _RULES, overrides, _NOW)
        except Exception as exc:  # the same refusal either way
            return f"{type(exc).__name__}: {exc}"

    stream = Stream(events)
    before = list(stream.overlays)
    assert plan(stream) == plan(events)
    assert stream.overlays == before  # the stream's list is not grown with planned overlays
