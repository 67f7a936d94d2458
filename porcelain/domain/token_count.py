"""A conversation's size in tokens as jp reports it: a provider's count, or the
estimate (characters / 4).  Pure: `show` reads and prints one without loading
the model modules (``porcelain.models.tokens`` asks providers)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitstore import Event
from porcelain.domain.tokens import estimate_tokens


@dataclass(frozen=True)
class TokenCount:
    tokens: int
    counted_by: str | None = None  # the provider that counted; None: estimated

    @property
    def estimated(self) -> bool:
        return self.counted_by is None

    def label(self) -> str:
        """``~12,300 (estimated)`` or ``12,345 (counted by anthropic)``."""
        if self.counted_by is None:
            return f"~{self.tokens:,} (estimated)"
        return f"{self.tokens:,} (counted by {self.counted_by})"

    def to_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "counted_by": self.counted_by, "estimated": self.estimated}

    @classmethod
    def from_json(cls, data: Any) -> TokenCount | None:
        if not isinstance(data, dict) or not isinstance(data.get("tokens"), int):
            return None
        by = data.get("counted_by")
        return cls(int(data["tokens"]), str(by) if isinstance(by, str) else None)


def estimate(events: Sequence[Event]) -> TokenCount:
    return TokenCount(estimate_tokens(events))
