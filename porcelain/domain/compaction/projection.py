"""Projection: the view of a stream a model is sent, with the overlays applied.

Pure and deterministic; the raw stream is never changed.  For every turn three
winners are chosen independently among the standing overlays that cover it and
set that policy: summary, reasoning and tool calls.  The winner is the overlay
*latest in stream order* (JP uses timestamps; we use the order of commits on
the branch, which clocks cannot disagree about).  A turn with a winning
summary is replaced whole, whatever newer mechanical overlays say.

Unchanged events are shared with the input list, not copied: treat them as
read-only.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress

from gitstore import CONVERSATION_TYPES, Event, Kind, make, turns
from porcelain.domain.compaction.overlays import Overlay, ToolCalls
from porcelain.domain.stream import Stream

SUMMARY_REQUEST = "[Summary of previous conversation]"
# the request line of a summary block, given the 0-based turns it stands for
Heading = Callable[[int, int], str]
OVERLAY_TYPES = frozenset({"compaction", "compaction_reset"})


@dataclass(frozen=True)
class Kept:
    """A projected turn that is raw turn ``index`` (possibly with parts stripped)."""

    index: int

    @property
    def from_turn(self) -> int:
        return self.index

    @property
    def to_turn(self) -> int:
        return self.index


@dataclass(frozen=True)
class Summarized:
    """A synthetic turn standing for raw turns ``from_turn..to_turn`` (0-based)."""

    from_turn: int
    to_turn: int


Origin = Kept | Summarized


@dataclass(frozen=True)
class Projection:
    events: list[Event]
    origins: list[Origin] = field(default_factory=list)


@dataclass
class _Winners:
    summary: list[Overlay | None]
    reasoning: list[bool]
    tools: list[ToolCalls | None]


def _winners(overlays: Sequence[Overlay], count: int) -> _Winners:
    won = _Winners([None] * count, [False] * count, [None] * count)
    for overlay in overlays:  # stream order: a later overlay overwrites
        for turn in range(overlay.from_turn, min(overlay.to_turn, count - 1) + 1):
            if overlay.summary is not None:
                won.summary[turn] = overlay
            if overlay.reasoning:
                won.reasoning[turn] = True
            if overlay.tool_calls is not None:
                won.tools[turn] = overlay.tool_calls
    return won


def _runs(summary: list[Overlay | None]) -> dict[int, tuple[int, int]]:
    """Start turn of every run of turns sharing one winning summary -> (start, end)."""
    runs: dict[int, tuple[int, int]] = {}
    start = 0
    for turn, winner in enumerate(summary):
        if winner is None:
            continue
        if turn == 0 or summary[turn - 1] is not winner:
            start = turn
        runs[start] = (start, turn)
    return runs


def summary_runs(overlays: Sequence[Overlay], count: int) -> list[tuple[int, int, Overlay]]:
    """(first turn, last turn, the compaction) of each run of turns a summary stands
    for now, by the rule ``project`` applies (the latest covering compaction wins),
    in turn order: what a reader of the raw stream is to see as compacted."""
    won = _winners(overlays, count)
    runs = _runs(won.summary)
    out = []
    for start in sorted(runs):
        winner = won.summary[start]
        assert winner is not None
        out.append((start, runs[start][1], winner))
    return out


def _synthetic(timestamp: str, text: str, request: str = SUMMARY_REQUEST) -> list[Event]:
    return [
        make.turn_start(timestamp),
        make.chat_request(timestamp, request),
        make.chat_message(timestamp, text),
    ]


def _origins(events: Sequence[Event], sources: Sequence[Origin | None]) -> list[Origin]:
    """One origin per projected turn: that of the turn's first conversation event."""
    origins: list[Origin] = []
    seen_in_turn = 0
    for event, source in zip(events, sources, strict=True):
        kind = event.get("type")
        if kind not in CONVERSATION_TYPES:
            continue
        if not origins or (kind == Kind.TURN_START and seen_in_turn > 0):
            assert source is not None
            origins.append(source)
            seen_in_turn = 0
        seen_in_turn += 1
    return origins


def _tool_names(events: Iterable[Event]) -> dict[str, str]:
    names: dict[str, str] = {}
    for event in events:
        if event.get("type") == Kind.TOOL_CALL_REQUEST:
            names.setdefault(str(event.get("id")), str(event.get("name")))
    return names


class _Names:
    """A stripped tool result's name: its call's latest request before it, else the
    first anywhere.  Read from ``events[start:]`` as they go by; the events before
    ``start`` and the whole stream are walked only when a name is not found so."""

    def __init__(self, events: Sequence[Event], start: int = 0) -> None:
        self._events, self._start = events, start
        self.recent: dict[str, str] = {}
        self._before: dict[str, str] | None = None
        self._any: dict[str, str] | None = None

    def name(self, key: str) -> str:
        if key in self.recent:
            found = self.recent[key]
        else:
            if self._before is None:
                self._before = _latest_names(self._events[i] for i in range(self._start))
            found = self._before.get(key, "")
        if not found:
            if self._any is None:
                self._any = _tool_names(self._events)
            found = self._any.get(key, "")
        return found or "unknown"


def _latest_names(events: Iterable[Event]) -> dict[str, str]:
    names: dict[str, str] = {}
    for event in events:
        if event.get("type") == Kind.TOOL_CALL_REQUEST:
            names[str(event.get("id"))] = str(event.get("name"))
    return names


def project(source: Sequence[Event] | Stream, heading: Heading | None = None) -> Projection:
    """Apply the standing overlays; no compaction or reset entry is left in the result.
    ``heading`` writes a summary block's request line (``SUMMARY_REQUEST`` without)."""
    stream = Stream.of(source)
    events, overlays, count = stream.events, stream.overlays, stream.count
    if not overlays:
        # C-level passes, not a Python step per event: what is not an overlay entry
        entries = map(operator.not_, map(OVERLAY_TYPES.__contains__, turns.event_kinds(events)))
        return Projection(list(compress(events, entries)), list(map(Kept, range(count))))
    indices = stream.indices
    won = _winners(overlays, count)
    out, sources = _apply(
        zip(events, indices, strict=True), won, _runs(won.summary), _Names(events), heading
    )
    return Projection(out, _origins(out, sources))


def project_part(stream: Stream, part: range) -> list[Event]:
    """``project(stream).events`` of the events at positions ``part``, whole turns of
    the stream: what they become, read without the rest of the stream."""
    events, indices = stream.events, stream.indices
    won = _winners(stream.overlays, stream.count)
    pairs = ((events[i], indices[i]) for i in part)
    return _apply(pairs, won, _runs(won.summary), _Names(events, part.start))[0]


def _apply(
    pairs: Iterable[tuple[Event, int]],
    won: _Winners,
    runs: dict[int, tuple[int, int]],
    names: _Names,
    heading: Heading | None = None,
) -> tuple[list[Event], list[Origin | None]]:
    """The projected events of (event, turn) pairs under the winners, and their origins."""
    out: list[Event] = []
    sources: list[Origin | None] = []
    injected: set[int] = set()
    for event, turn in pairs:
        kind = event.get("type")
        if kind in OVERLAY_TYPES:
            continue
        if kind not in CONVERSATION_TYPES:
            out.append(event)
            sources.append(None)
            continue
        if kind == Kind.TOOL_CALL_REQUEST:
            names.recent[str(event.get("id"))] = str(event.get("name"))
        summary = won.summary[turn]
        if summary is not None:
            if turn in runs and turn not in injected:
                injected.add(turn)
                start, end = runs[turn]
                request = heading(start, end) if heading else SUMMARY_REQUEST
                out.extend(_synthetic(str(event.get("timestamp")), summary.summary or "", request))
                sources.extend([Summarized(start, end)] * 3)
            continue
        if kind == Kind.CHAT_RESPONSE and won.reasoning[turn] and "reasoning" in event:
            continue
        mode = won.tools[turn]
        if mode is not None and kind in (Kind.TOOL_CALL_REQUEST, Kind.TOOL_CALL_RESPONSE):
            shown = _under_tool_policy(event, mode, names)
            if shown is None:
                continue
            event = shown
        out.append(event)
        sources.append(Kept(turn))
    return out, sources


def _under_tool_policy(event: Event, mode: ToolCalls, names: _Names) -> Event | None:
    """A tool call or result as its turn's tool policy leaves it (None: omitted)."""
    if mode is ToolCalls.OMIT:
        return None
    kind = event.get("type")
    if kind == Kind.TOOL_CALL_REQUEST and mode.strips_requests:
        return {**event, "arguments": {}}
    if kind == Kind.TOOL_CALL_RESPONSE and mode.strips_responses:
        name = names.name(str(event.get("id")))
        outcome = "error" if event.get("is_error") else "success"
        return {**event, "content": f"[compacted] {name}: {outcome}"}
    return event
