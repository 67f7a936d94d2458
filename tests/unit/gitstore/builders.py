"""Small event builders and git helpers shared by the gitstore and sync unit tests."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pygit2

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


def git(path: Path, *args: str, input: str | None = None) -> str:
    """Plain git over the bare store at ``path``; fails the test on an error."""
    return subprocess.run(
        ["git", "--git-dir", str(path), *args],
        capture_output=True,
        text=True,
        check=True,
        input=input,
    ).stdout


def signature() -> pygit2.Signature:
    return pygit2.Signature("t", "t@example.invalid")
