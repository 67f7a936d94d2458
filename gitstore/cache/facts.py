"""Facts about runs of events that compose, so a long chain is known without reading it.

The cache cuts every chain, from its root, into segments of ``SEGMENT``
events.  Each segment keeps a few facts about itself (``segment_facts``):
where its conversation events begin, where its ``turn_start`` events are,
and its internal events (``config_delta``, ``compaction``,
``compaction_reset``, ``conversation_start``) with their positions; and
three counts of them (``Run``) that are read with the segment's link.

``ChainFacts`` composes the runs of a chain into what the whole chain is:
its length, its turns (JP's counting, ``gitstore.turns``) and its internal
events.  It works from the counts, and reads a run's full facts only when a
question lands in that run, so asking a 100,000-event chain for its turn
count or its compactions costs a few hundred additions, not a pass over it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, overload

from gitstore.events import CONVERSATION_TYPES, INTERNAL_TYPES, Event
from gitstore.events.kinds import Kind

SEGMENT = 1000

Facts = dict[str, Any]  # segment_facts: {"n", "first", "starts", "internal"}


def segment_facts(events: Sequence[Event]) -> Facts:
    """The facts of one run of events, positions relative to its first event (JSON-able)."""
    first: int | None = None
    starts: list[int] = []
    internal: list[list[Any]] = []
    conversation, internal_types = CONVERSATION_TYPES, INTERNAL_TYPES
    turn_start = Kind.TURN_START.value  # a plain string: this loop runs per event
    for pos, event in enumerate(events):
        kind = event.get("type")
        if kind in conversation:
            if first is None:
                first = pos
            if kind == turn_start:
                starts.append(pos)
        elif kind in internal_types:
            internal.append([pos, event])
    return {"n": len(events), "first": first, "starts": starts, "internal": internal}


class Run(NamedTuple):
    """A run's counts: enough to compose a chain without reading the run's facts."""

    start: int  # position of the run's first event in the chain
    count: int  # type: ignore[assignment]  # the field hides tuple.count, never called
    first: int | None  # relative position of its first conversation event
    starts: int  # how many turn_start events it holds
    lead: bool  # its first conversation event is a turn_start
    internal: int  # how many internal events it holds

    @staticmethod
    def of(start: int, facts: Facts) -> Run:
        first = facts["first"]
        lead = bool(facts["starts"]) and facts["starts"][0] == first
        return Run(start, facts["n"], first, len(facts["starts"]), lead, len(facts["internal"]))


class ChainFacts:
    """What a whole chain is, in turns and internal events, from its runs."""

    def __init__(self, runs: Sequence[Run], read: Callable[[int], Facts]) -> None:
        """``runs``: root first, each starting where the previous one ends;
        ``read(k)``: the full facts of run ``k``, asked for only when needed."""
        self._runs = list(runs)
        self._read = read
        self._facts: dict[int, Facts] = {}
        self._run_starts = [r.start for r in self._runs]
        self.length = self._runs[-1].start + self._runs[-1].count if self._runs else 0
        self._first_run: int | None = None
        self.first: int | None = None  # position of the first conversation event
        self._opened_before: list[int] = []  # turns opened before each run
        opened = 0
        for k, run in enumerate(self._runs):
            self._opened_before.append(opened)
            if self._first_run is None and run.first is not None:
                self._first_run, self.first = k, run.start + run.first
                # a turn_start opens a turn once any conversation event precedes it
                opened += run.starts - run.lead
            elif self._first_run is not None:
                opened += run.starts
        self._opened = opened

    @staticmethod
    def compose(parts: Iterable[Facts]) -> ChainFacts:
        """The facts of consecutive runs (``segment_facts``, root first) as one chain."""
        facts = list(parts)
        runs: list[Run] = []
        start = 0
        for part in facts:
            runs.append(Run.of(start, part))
            start += part["n"]
        return ChainFacts(runs, facts.__getitem__)

    @staticmethod
    def of(events: Sequence[Event]) -> ChainFacts:
        return ChainFacts.compose([segment_facts(events)])

    def _run_facts(self, k: int) -> Facts:
        if k not in self._facts:
            self._facts[k] = self._read(k)
        return self._facts[k]

    def turn_count(self) -> int:
        """As ``turn_count``: 0 when there is no conversation event at all."""
        return 0 if self.first is None else self._opened + 1

    def turn_at(self, index: int) -> int:
        """The 0-based turn of the event at ``index`` (``turn_indices(events)[index]``)."""
        k = bisect_right(self._run_starts, index) - 1
        run = self._runs[k]
        if self._first_run is None or k < self._first_run or not run.starts:
            return self._opened_before[k]
        starts = self._run_facts(k)["starts"]
        local = index - run.start
        opened = bisect_right(starts, local)
        if k == self._first_run and run.lead and local >= starts[0]:
            opened -= 1  # the turn_start that begins the conversation opens no turn
        return self._opened_before[k] + opened

    def indices(self) -> TurnIndices:
        """As ``turn_indices``: the turn of every position, without a list of them."""
        return TurnIndices(self)

    def internal_events(self, *types: str) -> list[tuple[int, Event]]:
        """Internal events (of ``types``, or all) with their positions, in order."""
        out: list[tuple[int, Event]] = []
        for k, run in enumerate(self._runs):
            if run.internal:
                for pos, event in self._run_facts(k)["internal"]:
                    if not types or event.get("type") in types:
                        out.append((run.start + pos, event))
        return out


class TurnIndices(Sequence[int]):
    """``turn_indices`` of a chain, answered from its facts (no list of its length)."""

    def __init__(self, facts: ChainFacts) -> None:
        self._facts = facts

    def __len__(self) -> int:
        return self._facts.length

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...
    def __getitem__(self, index: int | slice) -> int | list[int]:
        length = self._facts.length
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(length))]
        if index < 0:
            index += length
        if not 0 <= index < length:
            raise IndexError("turn index out of range")
        return self._facts.turn_at(index)
