"""Small event streams for the compaction tests (the reference's T(k) and 2TS)."""

from __future__ import annotations

from typing import Any

from gitstore.events import Event
from porcelain.domain.compaction.overlays import ToolCalls, compaction_event


def stamp(n: int) -> str:
    """A distinct, increasing RFC 3339 timestamp."""
    hours, rest = divmod(n, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"2026-01-{1 + hours // 24:02d}T{hours % 24:02d}:{minutes:02d}:{seconds:02d}.000000Z"


def turns(k: int, start: int = 0) -> list[Event]:
    """T(k): each turn is turn_start, request qI, message mI."""
    out: list[Event] = []
    for i in range(k):
        t = stamp(start + 3 * i)
        out += [
            {"type": "turn_start", "timestamp": t},
            {"type": "chat_request", "timestamp": t, "content": f"q{i}"},
            {"type": "chat_response", "timestamp": t, "message": f"m{i}"},
        ]
    return out


def two_turns() -> list[Event]:
    """2TS: two turns, each with reasoning, one tool call and its ok response."""
    t = stamp
    return [
        {"type": "turn_start", "timestamp": t(0)},
        {"type": "chat_request", "timestamp": t(1), "content": "set up the project"},
        {"type": "chat_response", "timestamp": t(2), "reasoning": "I should create a file"},
        {
            "type": "tool_call_request",
            "timestamp": t(3),
            "id": "tc1",
            "name": "fs_create_file",
            "arguments": {"path": "src/main.rs"},
        },
        {
            "type": "tool_call_response",
            "timestamp": t(4),
            "id": "tc1",
            "content": "file created",
            "is_error": False,
        },
        {"type": "chat_response", "timestamp": t(5), "message": "Created src/main.rs"},
        {"type": "turn_start", "timestamp": t(6)},
        {"type": "chat_request", "timestamp": t(7), "content": "add error handling"},
        {"type": "chat_response", "timestamp": t(8), "reasoning": "Modify main.rs"},
        {
            "type": "tool_call_request",
            "timestamp": t(9),
            "id": "tc2",
            "name": "fs_modify_file",
            "arguments": {"path": "src/main.rs", "old": "a", "new": "b"},
        },
        {
            "type": "tool_call_response",
            "timestamp": t(10),
            "id": "tc2",
            "content": "file modified",
            "is_error": False,
        },
        {"type": "chat_response", "timestamp": t(11), "message": "Added error handling"},
    ]


def comp(
    a: int,
    b: int,
    *,
    summary: str | None = None,
    reasoning: bool = False,
    tools: ToolCalls | None = None,
    at: int = 10_000,
) -> Event:
    """C(a,b) with the given policies."""
    return compaction_event(stamp(at), a, b, summary=summary, reasoning=reasoning, tool_calls=tools)


def reset(withdraw: list[int] | None = None, at: int = 20_000) -> Event:
    return {"type": "compaction_reset", "timestamp": stamp(at), "withdraw": withdraw}


def visible(events: list[Event]) -> list[Event]:
    """Provider-visible events only."""
    kinds = {"chat_request", "chat_response", "tool_call_request", "tool_call_response"}
    return [e for e in events if e["type"] in kinds]


def of_type(events: list[Event], kind: str, key: str | None = None) -> list[Any]:
    found = [e for e in events if e["type"] == kind and (key is None or key in e)]
    return [e[key] for e in found] if key else found
