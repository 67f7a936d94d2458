"""Counting as JP counts: events by kind, turns and conversation events (an oracle
written from the reference, section 1.8), and a JP folder's entries."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def event_counts(events: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in events:
        counts[str(e["type"])] = counts.get(str(e["type"]), 0) + 1
    return counts


# -- an oracle for JP's counting, written from the reference (section 1.8) ---------

CONVERSATION_KINDS = frozenset(
    {
        "turn_start",
        "chat_request",
        "chat_response",
        "tool_call_request",
        "tool_call_response",
        "inquiry_request",
        "inquiry_response",
    }
)


def jp_turns(entries: Sequence[Mapping[str, Any]]) -> int:
    """Turns as JP counts them: a turn_start opens one only after an event."""
    turns, in_turn = 0, 0
    for entry in entries:
        if entry["type"] not in CONVERSATION_KINDS:
            continue
        if entry["type"] == "turn_start" and in_turn:
            turns += 1
            in_turn = 0
        in_turn += 1
    return turns + 1 if in_turn else turns


def jp_events(entries: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for e in entries if e["type"] in CONVERSATION_KINDS)


def entries_of(folder: Path) -> list[dict[str, Any]]:
    """The entries of a JP folder, minus a legacy leading base-config delta."""
    entries: list[dict[str, Any]] = json.loads((folder / "events.json").read_text())
    legacy = not (folder / "base_config.json").exists()
    if legacy and entries and entries[0]["type"] == "config_delta":
        entries = entries[1:]
    return entries
