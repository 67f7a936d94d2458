"""Token usage per turn, as the provider reported it.

Each model response of a turn records the provider's usage fields in the
metadata of its last event (``metadata.usage``: ``input_tokens``,
``output_tokens``, and the cache counts when there are any); a turn's usage
is the sum over its responses.  Values come from the store, so anything that
is not a non-negative integer is ignored.  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitstore import Event
from gitstore import turns as store_turns

FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
MAX_COUNT = 10**12  # far above any real count; keeps hostile numbers from growing sums
# a summarizer's call (a compaction's, a review's draft): counted by `jp usage`, never
# read as the conversation's size (``last_context``)
SUMMARY_KEY = "summary_usage"


def usage_metadata(usage: dict[str, int], model: str | None, key: str = "usage") -> dict[str, Any]:
    """``{key: counts, "model": model}`` for an event's metadata; {} without counts."""
    counts = {k: v for k, v in usage.items() if k in FIELDS and isinstance(v, int) and v >= 0}
    if not counts:
        return {}
    return {key: counts, **({"model": model} if model else {})}


def with_usage(events: list[Event], usage: dict[str, int], model: str | None = None) -> list[Event]:
    """``events`` with ``usage`` (and the model that reported it) recorded on the last one
    (when there is any)."""
    recorded = usage_metadata(usage, model)
    if not events or not recorded:
        return events
    last = dict(events[-1])
    last["metadata"] = {**(last.get("metadata") or {}), **recorded}
    return [*events[:-1], last]


def _counts(event: Event) -> dict[str, int]:
    metadata = event.get("metadata")
    usage = metadata.get("usage") if isinstance(metadata, dict) else None
    if not isinstance(usage, dict):
        return {}
    return {
        k: v
        for k, v in usage.items()
        if k in FIELDS and type(v) is int and 0 <= v <= MAX_COUNT
    }


def total(events: Sequence[Event]) -> dict[str, int]:
    """The usage summed over ``events`` (one turn's, for `jp q -F json`)."""
    out: dict[str, int] = {}
    for event in events:
        for key, value in _counts(event).items():
            out[key] = out.get(key, 0) + value
    return out


def per_turn(events: Sequence[Event]) -> list[dict[str, Any]]:
    """``[{"turn": N (1-based), "input_tokens": .., "output_tokens": .., ...}]`` for
    each turn that has reported usage."""
    indices = store_turns.turn_indices(events)
    turns: dict[int, dict[str, int]] = {}
    for event, index in zip(events, indices, strict=False):
        counts = _counts(event)
        if counts:
            total = turns.setdefault(index, {})
            for key, value in counts.items():
                total[key] = total.get(key, 0) + value
    return [{"turn": i + 1, **turns[i]} for i in sorted(turns)]


def summary_line(usage: Sequence[dict[str, Any]]) -> str:
    """`in 1,234, out 567 over 3 turns; turn 3: in 500, out 80`."""
    if not usage:
        return "not reported"
    total_in = sum(int(u.get("input_tokens", 0)) for u in usage)
    total_out = sum(int(u.get("output_tokens", 0)) for u in usage)
    last = usage[-1]
    turns = f"{len(usage)} turn{'s' if len(usage) != 1 else ''}"
    return (
        f"in {total_in:,}, out {total_out:,} over {turns}; "
        f"turn {last['turn']}: in {int(last.get('input_tokens', 0)):,}, "
        f"out {int(last.get('output_tokens', 0)):,}"
    )


def last_context(events: Sequence[Event]) -> int | None:
    """What the provider counted of the latest call and its answer (input, cache
    reads and writes, output): about what the next call is sent, or None when no
    response reported usage."""
    for event in reversed(events):
        counts = _counts(event)
        if counts:
            return sum(counts.values())
    return None
