"""Small event builders shared by the gitstore unit tests."""

from __future__ import annotations

from typing import Any

T0 = "2026-01-05T09:00:00.000000Z"


def at(second: int) -> str:
    """A timestamp ``second`` seconds after 09:00 on 2026-01-05 (RFC 3339, UTC)."""
    return f"2026-01-05T09:{second // 60:02d}:{second % 60:02d}.000000Z"


def start(cid: str, second: int = 0, **fields: Any) -> dict[str, Any]:
    return {"type": "conversation_start", "timestamp": at(second), "conversation_id": cid, **fields}


def request(text: str, second: int = 1) -> dict[str, Any]:
    return {"type": "chat_request", "timestamp": at(second), "content": text}


def answer(text: str, second: int = 2) -> dict[str, Any]:
    return {"type": "chat_response", "timestamp": at(second), "message": text}


def turn(n: int, second: int = 0) -> list[dict[str, Any]]:
    """One turn: turn_start, request Qn, answer An."""
    return [
        {"type": "turn_start", "timestamp": at(second)},
        request(f"Q{n}", second + 1),
        answer(f"A{n}", second + 2),
    ]
