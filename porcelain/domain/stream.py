"""A chain's events with the facts its readers need, each computed at most once.

Projection, range resolution, planning, proposal validation and coverage
all ask the same things of a stream: the turn of every event, how many
turns it has, its standing compactions.  A ``Stream`` answers each one the
first time it is asked and keeps the answer, so a caller builds one and
hands it to every function instead of passing the facts alongside the
events (where nothing checks that they belong together).

``Stream(events)`` walks the events when a fact is first asked for;
``Stream.of_view(view)`` takes a ``ChainView``'s facts from the cache, so
a long chain is known without being read.  The events must not change
while the stream is in use.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gitstore import ChainView, Event, Kind, parse_time, turns
from porcelain.domain.compaction.overlays import Overlay, standing_overlays, standing_overlays_at

_OVERLAY_KINDS = (Kind.COMPACTION, Kind.COMPACTION_RESET)


class Stream:
    """Events, their turn indices, turn count and standing overlays (all lazy)."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.events = events
        self._view = events if isinstance(events, ChainView) else None
        self._indices: Sequence[int] | None = None
        self._count: int | None = None
        self._overlays: list[Overlay] | None = None
        self._times: list[datetime] | None = None

    @staticmethod
    def of(source: Sequence[Event] | Stream) -> Stream:
        """``source`` itself when it is a stream; a view's stream reads its facts."""
        return source if isinstance(source, Stream) else Stream(source)

    @staticmethod
    def of_view(view: ChainView) -> Stream:
        """A view's stream: its turns and compactions come from its facts."""
        return Stream(view)

    @property
    def indices(self) -> Sequence[int]:
        """``turn_indices(events)``: the 0-based turn of every event."""
        if self._indices is None:
            if self._view is not None:
                self._indices = self._view.facts.indices()
            else:
                self._indices = turns.turn_indices(self.events)
        return self._indices

    @property
    def count(self) -> int:
        """``turn_count(events)``: 0 when there is no conversation event at all."""
        if self._count is None:
            if self._view is not None:
                self._count = self._view.facts.turn_count()
            else:
                self._count = turns.turn_count(self.events, indices=self.indices)
        return self._count

    @property
    def overlays(self) -> list[Overlay]:
        """``standing_overlays(events)``: the compactions not withdrawn, in stream order.

        The list is the stream's own: callers copy it before they grow it.
        """
        if self._overlays is None:
            if self._view is not None:
                placed = self._view.facts.internal_events(*_OVERLAY_KINDS)
                self._overlays = standing_overlays_at(placed)
            else:
                self._overlays = standing_overlays(self.events)
        return self._overlays

    def _derived(self, events: Sequence[Event], indices: Sequence[int]) -> Stream:
        out = Stream(events)
        out._indices, out._count = indices, self.count
        return out

    def with_overlays(self, overlays: Sequence[Overlay]) -> Stream:
        """The same events and turns read under ``overlays`` instead of the standing
        ones: a proposal tried out before it is written."""
        out = self._derived(self.events, self.indices)
        out._overlays = list(overlays)
        return out

    def without_compactions(self) -> Stream:
        """The stream with its compaction and reset events left out (no overlays).

        Compactions open no turn, so every other event keeps the turn it had.
        """
        kept: list[Event] = []
        kept_indices: list[int] = []
        for event, turn in zip(self.events, self.indices, strict=True):
            if event.get("type") not in _OVERLAY_KINDS:
                kept.append(event)
                kept_indices.append(turn)
        out = self._derived(kept, kept_indices)
        out._overlays = []
        return out

    def _turn_times(self) -> list[datetime]:
        if self._times is None:
            events = self.events
            bounds = turns.turn_bounds(events, indices=self.indices)
            self._times = [
                parse_time(str(events[start].get("timestamp", ""))) for start, _ in bounds
            ]
        return self._times

    def turn_at(self, moment: datetime) -> int | None:
        """The last turn whose first event is at or before ``moment``; None before turn 0."""
        times = self._turn_times()
        for index in range(self.count - 1, -1, -1):
            if times[index] <= moment:
                return index
        return None

    def first_time(self) -> datetime | None:
        """When the conversation's first event happened; None without events."""
        return self._turn_times()[0] if self.count else None
