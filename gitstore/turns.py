"""Turns, counted exactly as JP counts them (reference section 1.8).

A turn is a run of conversation events that starts at a ``turn_start``; a
``turn_start`` opens a new turn only when the current turn already holds an
event, and events before the first ``turn_start`` form an implicit turn 0.
Other entries (config deltas, compactions, unknown tags) take the index of the
turn they sit in and never open one.
"""

from __future__ import annotations

from collections.abc import Sequence

from gitstore.events import CONVERSATION_TYPES, Event


def turn_indices(events: Sequence[Event]) -> list[int]:
    """The 0-based turn index of every entry, in order."""
    out: list[int] = []
    current = 0
    seen_in_turn = 0
    for event in events:
        kind = event.get("type")
        if kind in CONVERSATION_TYPES:
            if kind == "turn_start" and seen_in_turn > 0:
                current += 1
                seen_in_turn = 0
            seen_in_turn += 1
        out.append(current)
    return out


def turn_count(events: Sequence[Event]) -> int:
    """Number of turns; 0 when there is no conversation event at all."""
    if not any(e.get("type") in CONVERSATION_TYPES for e in events):
        return 0
    return turn_indices(events)[-1] + 1


def event_count(events: Sequence[Event]) -> int:
    """Conversation events only, as JP's ``len()``."""
    return sum(1 for e in events if e.get("type") in CONVERSATION_TYPES)


def turn_bounds(events: Sequence[Event]) -> list[tuple[int, int]]:
    """For each turn, the [start, end) entry positions of its conversation events."""
    idx = turn_indices(events)
    bounds: dict[int, list[int]] = {}
    for pos, (event, t) in enumerate(zip(events, idx, strict=True)):
        if event.get("type") in CONVERSATION_TYPES:
            b = bounds.setdefault(t, [pos, pos + 1])
            b[1] = pos + 1
    return [(b[0], b[1]) for _, b in sorted(bounds.items())]


def check_tool_responses(current_turn: Sequence[Event], new: Sequence[Event]) -> None:
    """JP's rule for appends: a response answers a request of the same turn, once.

    ``current_turn`` holds the conversation's events since its last
    ``turn_start``; ``new`` is what is being appended.  Raises ``InvalidEvent``.
    """
    from gitstore.errors import InvalidEvent

    asked: dict[str, int] = {}
    answered: dict[str, int] = {}
    in_turn = 0
    for pos, event in enumerate([*current_turn, *new]):
        kind = event.get("type")
        if kind not in CONVERSATION_TYPES:
            continue
        if kind == "turn_start" and in_turn:
            asked, answered, in_turn = {}, {}, 0
        in_turn += 1
        key = str(event.get("id"))
        if kind == "tool_call_request":
            asked[key] = asked.get(key, 0) + 1
        elif kind == "tool_call_response":
            answered[key] = answered.get(key, 0) + 1
            if answered[key] > asked.get(key, 0) and pos >= len(current_turn):
                raise InvalidEvent(
                    "tool_call_response",
                    f"no unanswered tool_call_request with id {key!r} in the current turn",
                )
