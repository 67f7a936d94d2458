"""Keep some turns of a stream (fork --first/--last), as JP's `retain` does.

Compactions survive only when they end before the first removed turn; the
other global entries are kept; earlier creation records are left out because
the kept events become a chain of their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from gitstore import CONVERSATION_TYPES, Event, Kind, turns


def keep_turns(events: Sequence[Event], first: int | None, last: int | None) -> list[Event]:
    count = turns.turn_count(events)
    keep: set[int] = set()
    if first is not None:
        keep.update(range(min(first, count)))
    if last is not None:
        keep.update(range(max(0, count - last), count))
    if first is None and last is None:
        keep = set(range(count))
    removed = [t for t in range(count) if t not in keep]
    cut = min(removed) if removed else None
    out: list[Event] = []
    for event, turn in zip(events, turns.turn_indices(events), strict=True):
        kind = event.get("type")
        if kind == Kind.CONVERSATION_START:
            continue
        if kind in CONVERSATION_TYPES:
            if turn in keep:
                out.append(event)
        elif kind == Kind.COMPACTION:
            if cut is None or int(event.get("to_turn", 0)) < cut:
                out.append(event)
        else:
            out.append(event)
    return out
