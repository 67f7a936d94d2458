"""Synthetic conversations, as design.md section 8 describes them.

A turn is eight events: ``turn_start``, the request, the model's reasoning,
two tool calls, their results (1 to 4 KB each) and the final message.  Text is
drawn word by word from a fixed vocabulary with a seeded generator, so runs
are repeatable and blobs compress like prose rather than like a repeated
pattern.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from gitstore.events import Event, format_time

EVENTS_PER_TURN = 8
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)

_SYLLABLES = [
    *("ka", "ro", "mi", "te", "su", "la", "ne", "po", "vi", "da", "gu", "ri", "sho", "ten"),
    *("ber", "lin", "quo", "fa", "zu", "mo", "ta", "ke", "nu", "pri", "cal", "den", "for"),
    *("mat", "git", "hub", "str", "ing", "par", "ser", "node", "tree", "blob", "com", "mit"),
    *("ref", "log"),
]


def _vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words = {"".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(size)}
    return sorted(words)


class Writer:
    """Deterministic text and events; one instance per conversation."""

    def __init__(self, seed: int, start: datetime = START) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(random.Random(0))
        self.moment = start
        self.calls = 0

    def text(self, size: int) -> str:
        """About ``size`` bytes of prose-like words."""
        out: list[str] = []
        length = 0
        while length < size:
            chunk = self.rng.choices(self.words, k=32)
            out.extend(chunk)
            length += sum(len(w) + 1 for w in chunk)
        return " ".join(out)[:size]

    def stamp(self, seconds: float = 1.0) -> str:
        self.moment += timedelta(seconds=seconds)
        return format_time(self.moment)

    def start(self, cid: str) -> Event:
        return {"type": "conversation_start", "timestamp": self.stamp(), "conversation_id": cid}

    def tool_result(self, call_id: str) -> Event:
        return {
            "type": "tool_call_response",
            "timestamp": self.stamp(),
            "id": call_id,
            "content": self.text(self.rng.randint(1024, 4096)),
            "is_error": False,
        }

    def message_of_size(self, size: int = 2048) -> Event:
        """An assistant message of exactly ``size`` bytes of text, never written before.

        (A lone tool result would be refused: it must answer a request of its turn.)
        """
        return {"type": "chat_response", "timestamp": self.stamp(), "message": self.text(size)}

    def turn(self) -> list[Event]:
        first, second = f"toolu_{self.calls:08d}", f"toolu_{self.calls + 1:08d}"
        self.calls += 2
        begin = self.stamp(30)
        return [
            {"type": "turn_start", "timestamp": begin},
            {"type": "chat_request", "timestamp": begin, "content": self.text(200)},
            {"type": "chat_response", "timestamp": self.stamp(), "reasoning": self.text(600)},
            {
                "type": "tool_call_request",
                "timestamp": self.stamp(),
                "id": first,
                "name": "fs_read_file",
                "arguments": {"path": f"src/{self.text(12).replace(' ', '_')}.rs"},
            },
            {
                "type": "tool_call_request",
                "timestamp": self.stamp(),
                "id": second,
                "name": "cargo_check",
                "arguments": {"package": self.text(10).replace(" ", "-")},
            },
            self.tool_result(first),
            self.tool_result(second),
            {"type": "chat_response", "timestamp": self.stamp(), "message": self.text(400)},
        ]

    def events(self, cid: str, count: int) -> Iterator[Event]:
        """``count`` events of a conversation: its creation event, then whole turns."""
        yield self.start(cid)
        made = 1
        while made < count:
            for event in self.turn()[: count - made]:
                yield event
                made += 1
