"""The offline review keeps its summary on the proposal's range.

When a directive moves the range and the text is not the user's (no
``summary:`` or ``add:`` in the review) the offline model writes the
summary again from the events of exactly the new range, read from the
review's own history: every inherited turn opens with its ``[turn N]``
marker (``[turns A-B]`` for an earlier summary that stands for them), and
the review's own discussion starts with the opening proposal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitstore import Event, Kind
from porcelain.domain.review.markers import read_marker
from porcelain.models.offline_review import PROPOSE, Directives, parse_directives
from porcelain.models.offline_summary import HEADER, summarize


def inherited_range(events: Sequence[Event], lo: int, hi: int) -> list[Event]:
    """The events of source turns ``lo..hi`` (1-based) in a review's model view."""
    out: list[Event] = []
    inside = False
    for event in events:
        if event.get("type") == Kind.TOOL_CALL_REQUEST and event.get("name") == PROPOSE:
            break  # the opening proposal: what follows is the review's own talk
        if event.get("type") == Kind.CHAT_REQUEST:
            marker = read_marker(str(event.get("content") or ""))
            if marker:
                a, b = marker
                inside = a <= hi and b >= lo
        if inside:
            out.append(event)
    return out


def review_talk(events: Sequence[Event]) -> list[str]:
    """The user's messages of the review itself (after the opening proposal)."""
    started = False
    out: list[str] = []
    for event in events:
        if event.get("type") == Kind.TOOL_CALL_REQUEST and event.get("name") == PROPOSE:
            started = True
        elif started and event.get("type") == Kind.CHAT_REQUEST:
            out.append(str(event.get("content") or ""))
    return out


def user_set_text(events: Sequence[Event]) -> bool:
    """The user wrote or added to the summary in this review (before this message)."""
    talk = review_talk(events)[:-1]
    return any(d.summary is not None or d.add is not None for d in map(parse_directives, talk))


def follow_range(
    events: Sequence[Event], before: dict[str, Any], after: dict[str, Any], found: Directives
) -> dict[str, Any]:
    """``after`` with its summary written again when the range moved under a summary of jp's."""
    summary = after.get("summary")
    moved = (before.get("from_turn"), before.get("to_turn")) != (
        after.get("from_turn"),
        after.get("to_turn"),
    )
    ours = isinstance(summary, str) and summary.startswith(HEADER)
    if not moved or not ours or found.summary is not None or found.add is not None:
        return after
    if user_set_text(events):
        return after
    lo, hi = after.get("from_turn"), after.get("to_turn")
    if not isinstance(lo, int) or not isinstance(hi, int) or lo > hi:
        return after
    picked = inherited_range(events, lo, hi)
    if not picked:
        return after
    return {**after, "summary": summarize(picked)}
