"""What a model is sent from a conversation: the one place the stored events
become a request's history (projection, review markers, visibility)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress

from gitstore import Event, turns
from porcelain.domain.compaction.projection import Heading, Kept, project
from porcelain.domain.interrupted import for_the_model
from porcelain.domain.review.markers import (
    add_markers,
    inherited_turns,
    label,
    review_record,
    review_view,
)
from porcelain.domain.tokens import PROVIDER_VISIBLE as PROVIDER_VISIBLE


def projected(events: Sequence[Event], heading: Heading | None = None) -> list[Event]:
    """The projected view with review markers (all kinds)."""
    return _projected(events, heading, headers=False)[0]


def projected_with_headers(
    events: Sequence[Event], heading: Heading | None = None
) -> tuple[list[Event], list[str]]:
    """The projected view, and for each projected turn the raw turns it shows
    (``heading``: a summary block's request line, see ``project``)."""
    return _projected(events, heading, headers=True)


def _projected(
    events: Sequence[Event], heading: Heading | None, headers: bool
) -> tuple[list[Event], list[str]]:
    """``projected_with_headers``; the headers only when asked (a model's view of
    10,000 events would make a thousand labels for nothing)."""
    found = review_record(events)  # one scan for both questions
    inherited = inherited_turns(events, found)
    result = project(review_view(events, found), heading)
    shown = [
        label(o.index + 1) if isinstance(o, Kept) else _header(o.from_turn + 1, o.to_turn + 1)
        for o in (result.origins if headers else ())
    ]
    if not inherited:
        return result.events, shown
    labels: list[str | None] = []
    for origin in result.origins:
        if isinstance(origin, Kept):
            labels.append(label(origin.index + 1) if origin.index < inherited else None)
        elif origin.from_turn < inherited:
            labels.append(label(origin.from_turn + 1, origin.to_turn + 1))
        else:
            labels.append(None)
    return add_markers(result.events, labels), shown


def _header(first: int, last: int) -> str:
    """A summary's header for a person: `turn 3` for one turn (the model's marker
    keeps `turns 3-3`, which says a summary stands there)."""
    return label(first) if first == last else label(first, last)


def model_events(events: Sequence[Event], heading: Heading | None = None) -> list[Event]:
    """Provider-visible events, in order, as the model is to read them (a cut-off
    answer left out or marked as such: porcelain/domain/interrupted.py); ``heading``
    writes each summary block's request line (the recall tool's note)."""
    shown = projected(events, heading)
    visible = map(PROVIDER_VISIBLE.__contains__, turns.event_kinds(shown))  # C-level passes
    return for_the_model(list(compress(shown, visible)))


def raw_with_markers(events: Sequence[Event]) -> list[Event]:
    """The raw stream, with review markers on inherited turns (for print)."""
    inherited = inherited_turns(events)
    if not inherited:
        return list(events)
    return add_markers(events, [f"turn {n + 1}" for n in range(inherited)])
