"""A chain's events as a sequence that reads them only where they are asked for.

``store.log.view`` returns one: its facts (``ChainFacts``) are known at once, and
an event's position names the segment that holds it and, inside it, a page
of ``PAGE`` events, so a caller that asks for a few turns of a
100,000-event conversation parses only the pages that hold them.
Iterating it reads every segment once, in order, like a list.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, Protocol, overload

from gitstore.cache.facts import ChainFacts, Facts, Run
from gitstore.events import Event


class Segment(NamedTuple):
    """Events ``start .. start + count`` of a chain, ending at commit ``last``."""

    last: str
    start: int
    count: int  # type: ignore[assignment]  # the field hides tuple.count, never called


PAGE = 50  # events read together when one of them is asked for


class SegmentSource(Protocol):
    """Where a view reads its segments from (the store: its cache, else git)."""

    def whole(self, segment: Segment) -> tuple[list[Event], list[str]]:
        """The segment's events and commit ids, root first."""
        ...

    def ids(self, segment: Segment) -> list[str]:
        """The segment's commit ids, root first."""
        ...

    def events(self, commits: Sequence[str]) -> list[Event] | None:
        """The events of these commits, in that order (None: not all are at hand)."""
        ...

    def measured(self, segment: Segment, name: str) -> Any:
        """The value kept for ``segment`` under ``name`` (None: none is)."""
        ...

    def keep_measure(self, segment: Segment, name: str, value: Any) -> None:
        """Keep ``value`` (JSON) for ``segment`` under ``name``."""
        ...


class _Nothing:
    def whole(self, segment: Segment) -> tuple[list[Event], list[str]]:
        raise LookupError(segment.last)

    def ids(self, segment: Segment) -> list[str]:
        raise LookupError(segment.last)

    def events(self, commits: Sequence[str]) -> list[Event] | None:
        return None

    def measured(self, segment: Segment, name: str) -> Any:
        return None

    def keep_measure(self, segment: Segment, name: str, value: Any) -> None:
        return None


class ChainView(Sequence[Event]):
    def __init__(
        self,
        facts: ChainFacts,
        segments: Sequence[Segment],
        tail: tuple[list[Event], list[str]],
        source: SegmentSource,
    ) -> None:
        self.facts = facts
        self._segments = list(segments)
        self._starts = [s.start for s in self._segments]
        self._tail_start = segments[-1].start + segments[-1].count if segments else 0
        self._tail_events, self._tail_ids = tail
        self._source = source
        self._ids: dict[int, list[str]] = {}
        self._pages: dict[tuple[int, int], list[Event]] = {}
        if self._tail_start + len(self._tail_events) != facts.length:
            raise ValueError("the facts do not describe these segments")

    @staticmethod
    def of_list(events: list[Event], commits: list[str]) -> ChainView:
        """A view of a chain already in memory (the cache was not usable)."""
        return ChainView(ChainFacts.of(events), [], (events, commits), _Nothing())

    def __len__(self) -> int:
        return self.facts.length

    def _where(self, index: int) -> tuple[int, int]:
        """(segment, offset in it) of ``index``; segment -1 is the tail."""
        if index < 0:
            index += self.facts.length
        if not 0 <= index < self.facts.length:
            raise IndexError("event index out of range")
        if index >= self._tail_start:
            return -1, index - self._tail_start
        k = bisect_right(self._starts, index) - 1
        return k, index - self._segments[k].start

    def _segment_ids(self, k: int) -> list[str]:
        if k not in self._ids:
            self._ids[k] = self._source.ids(self._segments[k])
        return self._ids[k]

    def _event(self, k: int, offset: int) -> Event:
        page = offset // PAGE
        if (k, page) not in self._pages:
            ids = self._segment_ids(k)[page * PAGE : (page + 1) * PAGE]
            found = self._source.events(ids)
            if found is not None:
                self._pages[(k, page)] = found
            else:  # not all in the cache: the whole segment (from git), every page kept
                events, self._ids[k] = self._source.whole(self._segments[k])
                for n in range(0, len(events), PAGE):
                    self._pages[(k, n // PAGE)] = events[n : n + PAGE]
        return self._pages[(k, page)][offset - page * PAGE]

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.facts.length))]
        k, offset = self._where(index)
        return self._tail_events[offset] if k < 0 else self._event(k, offset)

    def commit(self, index: int) -> str:
        """The commit id of the event at ``index``."""
        k, offset = self._where(index)
        return self._tail_ids[offset] if k < 0 else self._segment_ids(k)[offset]

    def __iter__(self) -> Iterator[Event]:
        for segment in self._segments:  # keeps no segment: memory stays one segment
            yield from self._source.whole(segment)[0]
        yield from self._tail_events

    def per_segment(self, name: str, measure: Callable[[list[Event]], Any]) -> list[Any]:
        """``measure`` of each segment's events, then of the tail's.

        ``measure`` must be a pure function of the events, named by ``name``
        (a new name when what it computes changes): a segment never changes, so
        its value is kept in the cache and a long chain is read once, not at
        every call.
        """
        out: list[Any] = []
        for segment in self._segments:
            value = self._source.measured(segment, name)
            if value is None:
                value = measure(self._source.whole(segment)[0])
                self._source.keep_measure(segment, name, value)
            out.append(value)
        out.append(measure(self._tail_events))
        return out

    def pages_read(self) -> int:
        """How many pages random access has parsed so far (for tests and benchmarks)."""
        return len(self._pages)


class CachedChain(NamedTuple):
    """A chain as the cache holds it: its segments and the events above the last one."""

    segments: list[Segment]
    runs: list[Run]  # one per segment, then the tail's
    tail_events: list[Event]
    tail_ids: list[str]
    tail_facts: Facts
    # the segments this read cut from rows it had parsed: last commit -> events, ids
    cut: dict[str, tuple[list[Event], list[str]]]
