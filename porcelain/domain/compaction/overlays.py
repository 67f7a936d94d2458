"""Compaction overlays as stored in a conversation, and which of them still stand.

A ``compaction`` event is an overlay over a range of turns (0-based, inclusive)
with up to three policies: a summary that replaces the turns, stripping of
reasoning, and a tool-call policy.  An absent policy means "no opinion".

A ``compaction_reset`` event withdraws overlays instead of deleting them:
``withdraw: null`` withdraws every compaction earlier in the stream, a list
withdraws the compactions with those 0-based ordinals, counted among all
compaction events earlier in the stream (withdrawn or not).  What remains are
the *standing* overlays; their stream order is their precedence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import compress, count
from typing import Any

from gitstore import Event, Kind, turns
from porcelain.errors import UsageError


class ToolCalls(StrEnum):
    """What an overlay does to the tool calls of its turns; values are the CLI names."""

    STRIP = "strip"
    STRIP_REQUESTS = "strip-requests"
    STRIP_RESPONSES = "strip-responses"
    OMIT = "omit"

    @property
    def strips_requests(self) -> bool:
        return self in (ToolCalls.STRIP, ToolCalls.STRIP_REQUESTS)

    @property
    def strips_responses(self) -> bool:
        return self in (ToolCalls.STRIP, ToolCalls.STRIP_RESPONSES)

    def to_event(self) -> dict[str, Any]:
        """The stored form: ``{"policy": "strip", "request": .., "response": ..}`` or omit."""
        if self is ToolCalls.OMIT:
            return {"policy": "omit"}
        return {
            "policy": "strip",
            "request": self.strips_requests,
            "response": self.strips_responses,
        }

    @staticmethod
    def from_event(value: Any) -> ToolCalls | None:
        """Read the stored form.  A strip that strips neither half is no opinion (None)."""
        if not isinstance(value, dict):
            return None
        if value.get("policy") == "omit":
            return ToolCalls.OMIT
        if value.get("policy") != "strip":
            return None
        request = value.get("request") is not False
        response = value.get("response") is not False
        if request and response:
            return ToolCalls.STRIP
        if request:
            return ToolCalls.STRIP_REQUESTS
        if response:
            return ToolCalls.STRIP_RESPONSES
        return None


_TOOL_MODES = {
    "strip": ToolCalls.STRIP,
    "s": ToolCalls.STRIP,
    "strip-requests": ToolCalls.STRIP_REQUESTS,
    "strip_requests": ToolCalls.STRIP_REQUESTS,
    "sreq": ToolCalls.STRIP_REQUESTS,
    "strip-responses": ToolCalls.STRIP_RESPONSES,
    "strip_responses": ToolCalls.STRIP_RESPONSES,
    "sres": ToolCalls.STRIP_RESPONSES,
    "omit": ToolCalls.OMIT,
    "o": ToolCalls.OMIT,
}

TOOL_MODES: tuple[str, ...] = tuple(m.value for m in ToolCalls)  # the names, in this order
TOOL_MODE_WORDS: tuple[str, ...] = tuple(_TOOL_MODES)  # the names and their short forms
TOOL_MODE_HELP = "use " + ", ".join(TOOL_MODES[:-1]) + " or " + TOOL_MODES[-1]


def lookup_tool_mode(text: str) -> ToolCalls | None:
    """The mode a name or alias stands for, or None when it is not one."""
    return _TOOL_MODES.get(text.strip().lower())


def parse_tool_mode(text: str) -> ToolCalls:
    """A ``--tools`` mode: strip/s, strip-requests/sreq, strip-responses/sres, omit/o."""
    mode = lookup_tool_mode(text)
    if mode is None:
        raise UsageError(f"unknown tool call mode '{text}' ({TOOL_MODE_HELP})")
    return mode


def tool_mode_name(tool_calls: ToolCalls) -> str:
    """The canonical name: strip, strip-requests, strip-responses or omit."""
    return tool_calls.value


@dataclass(frozen=True)
class Overlay:
    """One standing ``compaction`` event, read from a stream."""

    position: int  # index of the event in the stream
    ordinal: int  # 0-based among all compaction events of the stream
    from_turn: int  # 0-based, inclusive
    to_turn: int  # 0-based, inclusive
    summary: str | None = None
    reasoning: bool = False
    tool_calls: ToolCalls | None = None
    timestamp: str = ""

    @property
    def has_summary(self) -> bool:
        return self.summary is not None


def overlay_from_event(event: Event, position: int = -1, ordinal: int = -1) -> Overlay:
    """Read a ``compaction`` event (assumed validated by the store)."""
    summary = event.get("summary")
    text = summary.get("summary") if isinstance(summary, dict) else None
    return Overlay(
        position=position,
        ordinal=ordinal,
        from_turn=int(event["from_turn"]),
        to_turn=int(event["to_turn"]),
        summary=text if isinstance(text, str) else None,
        reasoning=event.get("reasoning") == "strip",
        tool_calls=ToolCalls.from_event(event.get("tool_calls")),
        timestamp=str(event.get("timestamp", "")),
    )


def compaction_event(
    timestamp: str,
    from_turn: int,
    to_turn: int,
    *,
    summary: str | None = None,
    reasoning: bool = False,
    tool_calls: ToolCalls | None = None,
) -> Event:
    """A ``compaction`` event; absent policies are left out of it."""
    if from_turn < 0 or to_turn < from_turn:
        raise ValueError(f"bad compaction range {from_turn}..{to_turn}")
    event: Event = {
        "type": "compaction",
        "timestamp": timestamp,
        "from_turn": from_turn,
        "to_turn": to_turn,
    }
    if summary is not None:
        event["summary"] = {"summary": summary}
    if reasoning:
        event["reasoning"] = "strip"
    if tool_calls is not None:
        event["tool_calls"] = tool_calls.to_event()
    return event


def overlay_to_event(overlay: Overlay, timestamp: str | None = None) -> Event:
    """The ``compaction`` event for an overlay (its own timestamp unless one is given)."""
    return compaction_event(
        overlay.timestamp if timestamp is None else timestamp,
        overlay.from_turn,
        overlay.to_turn,
        summary=overlay.summary,
        reasoning=overlay.reasoning,
        tool_calls=overlay.tool_calls,
    )


def reset_event(timestamp: str, withdraw: Sequence[int] | None = None) -> Event:
    """A ``compaction_reset``: None withdraws every earlier overlay, a list those ordinals."""
    return {
        "type": "compaction_reset",
        "timestamp": timestamp,
        "withdraw": None if withdraw is None else sorted(set(withdraw)),
    }


def all_overlays(events: Sequence[Event]) -> list[tuple[Overlay, bool]]:
    """Every compaction event in stream order, with whether it was withdrawn."""
    kinds = map(_OVERLAY_KINDS.__contains__, turns.event_kinds(events))  # C-level, not per event
    return all_overlays_at((at, events[at]) for at in compress(count(), kinds))


_OVERLAY_KINDS = frozenset({Kind.COMPACTION.value, Kind.COMPACTION_RESET.value})


def all_overlays_at(placed: Iterable[tuple[int, Event]]) -> list[tuple[Overlay, bool]]:
    """``all_overlays`` of a stream given as (position, event) pairs in stream order.

    Only compaction and reset events matter, so a caller that knows where they
    are (``ChainFacts.internal_events``) passes just those.
    """
    found: list[Overlay] = []
    withdrawn: set[int] = set()
    for position, event in placed:
        kind = event.get("type")
        if kind == Kind.COMPACTION:
            found.append(overlay_from_event(event, position, len(found)))
        elif kind == Kind.COMPACTION_RESET:
            which = event.get("withdraw")
            if which is None:
                withdrawn.update(range(len(found)))
            elif isinstance(which, list):
                withdrawn.update(n for n in which if isinstance(n, int) and 0 <= n < len(found))
    return [(o, o.ordinal in withdrawn) for o in found]


def standing_overlays(events: Sequence[Event]) -> list[Overlay]:
    """The compactions not withdrawn, in stream order (later = higher precedence)."""
    return [o for o, gone in all_overlays(events) if not gone]


def standing_overlays_at(placed: Iterable[tuple[int, Event]]) -> list[Overlay]:
    """``standing_overlays`` of a stream given as (position, event) pairs."""
    return [o for o, gone in all_overlays_at(placed) if not gone]


def mechanical_label(reasoning: bool, tool_calls: ToolCalls | None) -> str | None:
    """``reasoning``, ``tools``, ``reasoning + tool requests``...; None without a policy."""
    parts: list[str] = []
    if reasoning:
        parts.append("reasoning")
    if tool_calls is not None:
        parts.append(
            {
                ToolCalls.STRIP: "tools",
                ToolCalls.STRIP_REQUESTS: "tool requests",
                ToolCalls.STRIP_RESPONSES: "tool responses",
                ToolCalls.OMIT: "tools omitted",
            }[tool_calls]
        )
    return " + ".join(parts) or None


def overlay_label(overlay: Overlay) -> str | None:
    """``summary`` when the overlay has one (it wins), else the mechanical label."""
    if overlay.has_summary:
        return "summary"
    return mechanical_label(overlay.reasoning, overlay.tool_calls)


def overlay_json(overlay: Overlay) -> dict[str, Any]:
    """The form ``conversation show`` prints: 1-based turns, policy names."""
    return {
        "from_turn": overlay.from_turn + 1,
        "to_turn": overlay.to_turn + 1,
        "summary": overlay.summary,
        "reasoning": "strip" if overlay.reasoning else None,
        "tool_calls": None if overlay.tool_calls is None else tool_mode_name(overlay.tool_calls),
    }
