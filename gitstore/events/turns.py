"""Turns, counted exactly as JP counts them (reference section 1.8).

A turn is a run of conversation events that starts at a ``turn_start``; a
``turn_start`` opens a new turn only when the current turn already holds an
event, and events before the first ``turn_start`` form an implicit turn 0.
Other entries (config deltas, compactions, unknown tags) take the index of the
turn they sit in and never open one.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import accumulate, compress, repeat
from typing import Any

from gitstore.errors import InvalidEvent
from gitstore.events import CONVERSATION_TYPES, Event
from gitstore.events.kinds import Kind


def turn_indices(events: Sequence[Event]) -> list[int]:
    """The 0-based turn index of every entry, in order (never decreasing).

    Callers that need several turn facts about one list compute this once
    and pass it on as ``indices=`` (to ``turn_count`` and ``turn_bounds``); it
    must be the indices of that same list.
    """
    # C-level passes, not a Python step per event (a load of 10,000 events walks it):
    # the index is the number of ``turn_start`` entries so far, less the first one
    # when it is the first conversation event (it opens turn 0, not turn 1)
    kinds = event_kinds(events)
    starts = map(operator.eq, kinds, repeat(_TURN_START))
    counts = list(accumulate(starts, initial=0))
    del counts[0]
    first = next(compress(kinds, map(CONVERSATION_TYPES.__contains__, kinds)), None)
    if first == _TURN_START:
        return list(map(operator.sub, counts, map(bool, counts)))
    return counts


_TURN_START = Kind.TURN_START.value  # a plain string


def event_kinds(events: Sequence[Event]) -> list[Any]:
    """Every entry's ``type``, in order: dict's own ``get`` in one C-level pass when
    every entry is a dict, as every stored event is.  The passes over a whole chain
    (turns, compactions, what the model is sent) filter on these instead of taking
    a Python step per event."""
    try:
        return list(map(dict.get, events, repeat("type")))
    except TypeError:
        return [e.get("type") for e in events]


def turn_count(events: Sequence[Event], *, indices: Sequence[int] | None = None) -> int:
    """Number of turns; 0 when there is no conversation event at all.

    ``indices``: ``turn_indices(events)``, when the caller already has it.
    """
    if not any(e.get("type") in CONVERSATION_TYPES for e in events):
        return 0
    return (turn_indices(events) if indices is None else indices)[-1] + 1


def event_count(events: Sequence[Event]) -> int:
    """Conversation events only, as JP's ``len()``."""
    return sum(1 for e in events if e.get("type") in CONVERSATION_TYPES)


def turn_bounds(
    events: Sequence[Event], *, indices: Sequence[int] | None = None
) -> list[tuple[int, int]]:
    """For each turn, the [start, end) entry positions of its conversation events.

    ``indices``: ``turn_indices(events)``, when the caller already has it.
    """
    idx = turn_indices(events) if indices is None else indices
    starts: list[int] = []
    ends: list[int] = []
    conversation = CONVERSATION_TYPES
    # the turns of conversation events run 0, 0, .., 1, 1, ..: each new one is the next
    for pos, (event, t) in enumerate(zip(events, idx, strict=True)):
        if event.get("type") in conversation:
            if t == len(starts):
                starts.append(pos)
                ends.append(pos + 1)
            else:
                ends[t] = pos + 1
    return list(zip(starts, ends, strict=True))


def check_tool_responses(current_turn: Sequence[Event], new: Sequence[Event]) -> None:
    """JP's rule for appends: a response answers a request of the same turn, once.

    ``current_turn`` holds the conversation's events since its last
    ``turn_start``; ``new`` is what is being appended.  Raises ``InvalidEvent``.
    """
    asked: dict[str, int] = {}
    answered: dict[str, int] = {}
    in_turn = 0
    for pos, event in enumerate([*current_turn, *new]):
        kind = event.get("type")
        if kind not in CONVERSATION_TYPES:
            continue
        if kind == Kind.TURN_START and in_turn:
            asked, answered, in_turn = {}, {}, 0
        in_turn += 1
        key = str(event.get("id"))
        if kind == Kind.TOOL_CALL_REQUEST:
            asked[key] = asked.get(key, 0) + 1
        elif kind == Kind.TOOL_CALL_RESPONSE:
            answered[key] = answered.get(key, 0) + 1
            if answered[key] > asked.get(key, 0) and pos >= len(current_turn):
                raise InvalidEvent(
                    "tool_call_response",
                    f"no unanswered tool_call_request with id {key!r} in the current turn",
                )
