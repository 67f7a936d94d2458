"""Passing precomputed turn indices and standing overlays changes no result.

Review start walks a long source once for its turn indices and once for its
standing overlays, then hands them to every pure function that needs them;
each must answer exactly as if it had computed them itself.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitstore.events import CONVERSATION_TYPES, Event
from gitstore.events.turns import turn_bounds, turn_count, turn_indices
from porcelain.app.compaction.summarize import choose_reading, range_events
from porcelain.app.review.start import _without_compactions, fits_tokens
from porcelain.domain.compaction.bounds import Ago, Count, FromEnd, LastCompaction, Position
from porcelain.domain.compaction.overlays import ToolCalls, standing_overlays
from porcelain.domain.compaction.plan import plan_compaction
from porcelain.domain.compaction.projection import Projection, project
from porcelain.domain.compaction.proposal import ProposalError, validate_proposal
from porcelain.domain.compaction.ranges import RangeOverrides, StreamFacts, resolve_rule_range
from porcelain.domain.compaction.rules import Rule, SummarySpec
from porcelain.domain.tokens import estimate_tokens
from porcelain.domain.view import PROVIDER_VISIBLE

from .builders import comp, turns
from .test_compaction_projection_props import with_overlays


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


@settings(max_examples=200, deadline=None)
@given(with_overlays())
def test_projection_with_precomputed_facts_is_the_same(events: list[Event]) -> None:
    given_facts = project(events, indices=turn_indices(events), overlays=standing_overlays(events))
    assert given_facts == project(events)


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
@given(with_overlays(), st.sampled_from(_OVERRIDES))
def test_range_resolution_with_precomputed_facts_is_the_same(
    events: list[Event], overrides: RangeOverrides
) -> None:
    def resolve(**facts: Any) -> tuple[int, int] | None | str:
        try:
            return resolve_rule_range(events, Count(1), Count(1), overrides, _NOW, **facts)
        except Exception as exc:  # the same refusal either way
            return f"{type(exc).__name__}: {exc}"

    plain = resolve()
    assert resolve(indices=turn_indices(events)) == plain
    assert resolve(overlays=standing_overlays(events)) == plain
    assert resolve(indices=turn_indices(events), overlays=standing_overlays(events)) == plain


def test_stream_facts_read_turn_times_only_for_durations() -> None:
    events = turns(3)
    facts = StreamFacts(events, indices=turn_indices(events), overlays=[])
    assert facts.count == 3 and facts.after_last == 0
    assert facts._times is None  # nothing asked for a time yet
    assert facts.first_time() == datetime(2026, 1, 1, tzinfo=UTC)
    assert facts.turn_at(datetime(2026, 1, 1, 0, 0, 4, tzinfo=UTC)) == 1


_ARGS: list[dict[str, Any]] = [
    {"from_turn": 2, "to_turn": 3, "summary": "S"},
    {"from_turn": 1, "to_turn": 1, "summary": "S"},
    {"from_turn": 1, "to_turn": 2, "reasoning": "strip"},
    {"from_turn": 1, "to_turn": 9, "tool_calls": "omit"},
    {"from_turn": 3, "to_turn": 2, "summary": ""},
    {"from_turn": 0},
]


@settings(max_examples=100, deadline=None)
@given(with_overlays(), st.sampled_from(_ARGS))
def test_validation_with_precomputed_facts_is_the_same(
    events: list[Event], args: dict[str, Any]
) -> None:
    def check(**facts: Any) -> object:
        try:
            return validate_proposal(args, events, **facts)
        except ProposalError as exc:
            return str(exc)

    plain = check()
    count, overlays = turn_count(events), standing_overlays(events)
    assert check(count=count) == plain
    assert check(overlays=overlays) == plain
    assert check(count=count, overlays=overlays) == plain


@settings(max_examples=200, deadline=None)
@given(with_overlays(), st.integers(0, 7), st.integers(0, 7))
def test_range_events_with_indices_are_the_same(events: list[Event], a: int, b: int) -> None:
    from0, to0 = min(a, b), max(a, b)
    reference = [
        e
        for e, t in zip(events, turn_indices(events), strict=True)
        if from0 <= t <= to0 and e.get("type") in PROVIDER_VISIBLE
    ]
    assert range_events(events, from0, to0) == reference
    assert range_events(events, from0, to0, indices=turn_indices(events)) == reference


def test_range_events_refuse_indices_of_another_list() -> None:
    with pytest.raises(ValueError):
        range_events(turns(3), 0, 1, indices=[0, 0, 0])


def test_the_projection_is_made_only_when_the_raw_range_does_not_fit() -> None:
    events = [*turns(4), comp(0, 1, summary="short")]
    made: list[Projection] = []

    def making() -> Projection:
        made.append(project(events))
        return made[-1]

    raw = range_events(events, 0, 2)
    assert choose_reading(events, making, 0, 2, window=10_000) == raw
    assert made == []
    small = choose_reading(events, making, 0, 2, window=2, indices=turn_indices(events))
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
@given(with_overlays())
def test_dropping_compactions_keeps_each_event_its_turn(events: list[Event]) -> None:
    kept, kept_indices = _without_compactions(events, turn_indices(events))
    assert kept == [e for e in events if e["type"] not in ("compaction", "compaction_reset")]
    assert kept_indices == turn_indices(kept)


@settings(max_examples=100, deadline=None)
@given(with_overlays(), st.sampled_from(_ARGS[:4]))
def test_continue_checks_with_precomputed_facts_are_the_same(
    events: list[Event], args: dict[str, Any]
) -> None:
    from porcelain.app.review.finish import _already_applied
    from porcelain.domain.review.state import proposal_from_args, revalidate

    proposal = proposal_from_args(args)
    assert proposal is not None
    standing = standing_overlays(events)
    assert _already_applied(events, proposal, standing=standing) == _already_applied(
        events, proposal
    )

    def check(**facts: Any) -> object:
        try:
            return revalidate(proposal, events, **facts)
        except ProposalError as exc:
            return str(exc)

    assert check(count=turn_count(events), overlays=standing) == check()


def test_an_applied_proposal_is_found_with_precomputed_overlays() -> None:
    from porcelain.app.review.finish import _already_applied
    from porcelain.domain.review.state import proposal_from_args

    proposal = proposal_from_args({"from_turn": 1, "to_turn": 2, "summary": "S"})
    assert proposal is not None
    events = [*turns(3), proposal.to_compaction_event("2026-01-02T00:00:00.000000Z")]
    standing = standing_overlays(events)
    assert _already_applied(events, proposal, standing=standing) is True
    assert _already_applied(turns(3), proposal, standing=[]) is False


_RULES = [
    Rule(Count(1), Count(1), summary=SummarySpec()),
    Rule(Count(0), Count(2), reasoning=True),
    Rule(LastCompaction(), Count(1), tool_calls=ToolCalls.OMIT),
]


@settings(max_examples=100, deadline=None)
@given(with_overlays(), st.sampled_from(_OVERRIDES[:5]))
def test_planning_with_precomputed_facts_is_the_same(
    events: list[Event], overrides: RangeOverrides
) -> None:
    def plan(**facts: Any) -> object:
        try:
            return plan_compaction(events, _RULES, overrides, _NOW, **facts)
        except Exception as exc:  # the same refusal either way
            return f"{type(exc).__name__}: {exc}"

    overlays = standing_overlays(events)
    before = list(overlays)
    assert plan(indices=turn_indices(events), overlays=overlays) == plan()
    assert overlays == before  # the caller's list is not grown with planned overlays
