"""What the model layer's tests share: a request, a recorder of deltas, the key."""

from __future__ import annotations

from typing import Any

from porcelain.models import ModelRequest

KEY = "sk-ant-test-SECRET-0123456789"
T = "2026-01-05T09:00:00.000000Z"


def request(**kw: Any) -> ModelRequest:
    events = [{"timestamp": T, "type": "chat_request", "content": "Hello?"}]
    base: dict[str, Any] = {
        "model_id": "anthropic/claude-test",
        "system": "Be brief.",
        "events": events,
    }
    return ModelRequest(**(base | kw))


class Deltas:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def __call__(self, kind: str, text: str) -> None:
        self.seen.append((kind, text))

    def joined(self, kind: str) -> str:
        return "".join(t for k, t in self.seen if k == kind)
