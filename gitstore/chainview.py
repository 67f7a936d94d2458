"""A chain's events as a sequence that reads its segments only when they are asked for.

``Store.view`` returns one: its facts (``ChainFacts``) are known at once, and
an event's position names the segment that holds it, so a caller that asks
for a few turns of a 100,000-event conversation parses only those.
Iterating it reads every segment once, in order, like a list.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from gitstore.chainfacts import ChainFacts
from gitstore.events import Event


@dataclass(frozen=True)
class Segment:
    """Events ``start .. start + count`` of a chain, ending at commit ``last``."""

    last: str
    start: int
    count: int


# reads one segment: its events and their commit ids, root first
SegmentReader = Callable[[Segment], tuple[list[Event], list[str]]]


class ChainView(Sequence[Event]):
    def __init__(
        self,
        facts: ChainFacts,
        segments: Sequence[Segment],
        tail: tuple[list[Event], list[str]],
        read: SegmentReader,
    ) -> None:
        self.facts = facts
        self._segments = list(segments)
        self._starts = [s.start for s in self._segments]
        self._tail_start = segments[-1].start + segments[-1].count if segments else 0
        self._tail_events, self._tail_ids = tail
        self._read = read
        self._loaded: dict[int, tuple[list[Event], list[str]]] = {}
        if self._tail_start + len(self._tail_events) != facts.length:
            raise ValueError("the facts do not describe these segments")

    @staticmethod
    def of_list(events: list[Event], commits: list[str]) -> ChainView:
        """A view of a chain already in memory (the cache was not usable)."""

        def unused(segment: Segment) -> tuple[list[Event], list[str]]:
            raise LookupError(segment.last)

        return ChainView(ChainFacts.of(events), [], (events, commits), unused)

    def __len__(self) -> int:
        return self.facts.length

    def _locate(self, index: int) -> tuple[list[Event], list[str], int]:
        if index < 0:
            index += self.facts.length
        if not 0 <= index < self.facts.length:
            raise IndexError("event index out of range")
        if index >= self._tail_start:
            return self._tail_events, self._tail_ids, index - self._tail_start
        k = bisect_right(self._starts, index) - 1
        if k not in self._loaded:
            self._loaded[k] = self._read(self._segments[k])
        events, ids = self._loaded[k]
        return events, ids, index - self._segments[k].start

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.facts.length))]
        events, _, offset = self._locate(index)
        return events[offset]

    def commit(self, index: int) -> str:
        """The commit id of the event at ``index``."""
        _, ids, offset = self._locate(index)
        return ids[offset]

    def __iter__(self) -> Iterator[Event]:
        for k, segment in enumerate(self._segments):
            if k in self._loaded:
                yield from self._loaded[k][0]
            else:  # a full pass keeps no segment it has read: memory stays one segment
                yield from self._read(segment)[0]
        yield from self._tail_events

    def segments_read(self) -> int:
        """How many segments random access has parsed so far (for tests and benchmarks)."""
        return len(self._loaded)
