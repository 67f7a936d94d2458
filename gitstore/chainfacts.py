"""Facts about a run of events that compose, so a long chain is known without reading it.

The cache cuts every chain, from its root, into segments of ``SEGMENT``
events.  Each segment keeps a few facts about itself (``segment_facts``):
where its conversation events begin, where its ``turn_start`` events are,
and its internal events (``config_delta``, ``compaction``,
``compaction_reset``, ``conversation_start``) with their positions.  Facts
of consecutive runs compose (``ChainFacts.compose``) into the facts of the
whole chain: its length, its turns (JP's counting, ``gitstore.turns``) and
its internal events, which is what compaction and the review ask of a
source before they read the few turns they work on.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, overload

from gitstore.events import CONVERSATION_TYPES, INTERNAL_TYPES, Event

SEGMENT = 1000


def segment_facts(events: Sequence[Event]) -> dict[str, Any]:
    """The facts of one run of events, positions relative to its first event (JSON-able)."""
    first: int | None = None
    starts: list[int] = []
    internal: list[list[Any]] = []
    conversation, internal_types = CONVERSATION_TYPES, INTERNAL_TYPES
    for pos, event in enumerate(events):
        kind = event.get("type")
        if kind in conversation:
            if first is None:
                first = pos
            if kind == "turn_start":
                starts.append(pos)
        elif kind in internal_types:
            internal.append([pos, event])
    return {"n": len(events), "first": first, "starts": starts, "internal": internal}


class TurnIndices(Sequence[int]):
    """``turn_indices`` of a chain, answered from its turn openings (no list of its length)."""

    def __init__(self, openings: Sequence[int], length: int) -> None:
        self._openings = openings
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...
    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("turn index out of range")
        return bisect_right(self._openings, index)


@dataclass(frozen=True)
class ChainFacts:
    """What a whole chain is, in turns and internal events."""

    length: int  # events in the chain
    first: int | None  # position of the first conversation event
    openings: tuple[int, ...]  # positions of the turn_starts that open turns 1, 2, ..
    internal: tuple[tuple[int, Event], ...]  # internal events with their positions

    @staticmethod
    def compose(parts: Iterable[dict[str, Any]]) -> ChainFacts:
        """The facts of consecutive runs (``segment_facts``, root first) as one chain."""
        length = 0
        first: int | None = None
        openings: list[int] = []
        internal: list[tuple[int, Event]] = []
        for part in parts:
            base = length
            if first is None and part["first"] is not None:
                first = base + part["first"]
            if first is not None:
                # a turn_start opens a turn once any conversation event precedes it
                openings.extend(base + p for p in part["starts"] if base + p > first)
            internal.extend((base + p, e) for p, e in part["internal"])
            length += part["n"]
        return ChainFacts(length, first, tuple(openings), tuple(internal))

    @staticmethod
    def of(events: Sequence[Event]) -> ChainFacts:
        return ChainFacts.compose([segment_facts(events)])

    def turn_count(self) -> int:
        """As ``turn_count``: 0 when there is no conversation event at all."""
        return 0 if self.first is None else len(self.openings) + 1

    def indices(self) -> TurnIndices:
        """As ``turn_indices``: the turn of every position, without a list of them."""
        return TurnIndices(self.openings, self.length)

    def internal_events(self, *types: str) -> list[tuple[int, Event]]:
        """Internal events (of ``types``, or all) with their positions, in order."""
        return [(p, e) for p, e in self.internal if not types or e.get("type") in types]
