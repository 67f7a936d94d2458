"""How a review conversation reads its inherited history.

A review shares every commit of its source.  Its creation event records how
many source turns it inherited and whether the source's earlier compactions
are dropped (the raw source fits the review model) or kept.  The `[turn N]`
markers are added when the conversation is read, for the model and for
`print`, never written into the shared commits.  This module writes them
(``label``, ``marked``) and is the one that reads them back (``read_marker``,
``strip_marker``, ``turn_numbers``): the offline model and the summarizer's
facts ask it, never a pattern of their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gitstore import Event, Kind, turns


def review_record(events: Sequence[Event]) -> tuple[int, dict[str, Any]] | None:
    """Position and `review` table of the review's creation event, if this is a review."""
    kinds = turns.event_kinds(events)  # one C-level pass; the starts are found by list.index
    starts: list[int] = []
    at = -1
    while True:
        try:
            at = kinds.index(_START, at + 1)
        except ValueError:
            break
        starts.append(at)
    for pos in reversed(starts):
        review = events[pos].get("review")
        if isinstance(review, dict):
            return pos, review
    return None


_START = Kind.CONVERSATION_START.value  # a plain string


Record = tuple[int, dict[str, Any]] | None
_UNREAD: Any = object()


def review_view(events: Sequence[Event], found: Record = _UNREAD) -> list[Event]:
    """The events whose compactions apply here: a review may drop the source's
    (``found``: the ``review_record`` of ``events``, when the caller has it)."""
    if found is _UNREAD:
        found = review_record(events)
    if found is None or found[1].get("prior_compactions") != "drop":
        return list(events)
    pos = found[0]
    return [
        e
        for i, e in enumerate(events)
        if i >= pos or e.get("type") not in (Kind.COMPACTION, Kind.COMPACTION_RESET)
    ]


def inherited_turns(events: Sequence[Event], found: Record = _UNREAD) -> int:
    if found is _UNREAD:
        found = review_record(events)
    return int(found[1].get("inherited_turns", 0)) if found else 0


_MARKER = re.compile(r"^\s*\[turns? (\d+)(?:[-\u2013](\d+))?\]\s*")
_TURN = re.compile(r"\[turn (\d+)\]")


def label(first: int, last: int | None = None) -> str:
    """A marker's label: ``turn 3`` for a kept turn, ``turns 2-6`` for a summary
    standing for source turns ``first..last`` (1-based; ``turns 3-3`` too)."""
    return f"turn {first}" if last is None else f"turns {first}-{last}"


def read_marker(text: str) -> tuple[int, int] | None:
    """The 1-based (first, last) source turns of the marker that opens ``text``."""
    found = _MARKER.match(text)
    if found is None:
        return None
    first = int(found.group(1))
    return first, int(found.group(2) or first)


def strip_marker(text: str) -> str:
    """``text`` without the marker that opens it."""
    return _MARKER.sub("", text)


def turn_numbers(text: str) -> list[int]:
    """Every single-turn marker's number in ``text``, wherever it stands."""
    return [int(n) for n in _TURN.findall(text)]


def marked(event: Event, label: str) -> Event:
    out = dict(event)
    out["content"] = f"[{label}] {event.get('content', '')}"
    return out


def add_markers(events: Sequence[Event], turn_of: Sequence[str | None]) -> list[Event]:
    """Prefix the first request of each turn with its label (None: no marker).

    ``turn_of`` gives, per turn of ``events`` (JP's turn rule), the label to
    show, e.g. `turn 17` or `turns 2-9` for a summary standing for them.
    """
    out: list[Event] = []
    done: set[int] = set()
    for event, turn in zip(events, turns.turn_indices(events), strict=True):
        label = turn_of[turn] if turn < len(turn_of) else None
        if event.get("type") == Kind.CHAT_REQUEST and label and turn not in done:
            done.add(turn)
            out.append(marked(event, label))
        else:
            out.append(event)
    return out
