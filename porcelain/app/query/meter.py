"""The context meter: after an answer, how much of the model's window the
conversation fills, once it passes ``conversation.compaction.warn_at``.

The count is the provider's own (the latest response's usage) when there is
one, else jp's estimate of what the model is sent; the projection is only
computed when the raw events could reach the share at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitstore import Event
from porcelain.config import Config
from porcelain.domain.token_usage import last_context
from porcelain.domain.tokens import estimate_tokens
from porcelain.models.base import context_window

DEFAULT_WARN_AT = 0.8


@dataclass(frozen=True)
class Fill:
    """``tokens`` of a ``window``; ``counted`` when the provider counted them."""

    tokens: int
    window: int
    counted: bool

    @property
    def share(self) -> float:
        return self.tokens / self.window


def fill_to_report(events: Sequence[Event], model_id: str, config: Config) -> Fill | None:
    """The fill of the window after this answer, when it is worth saying."""
    warn_at = config.warn_at()
    share = DEFAULT_WARN_AT if warn_at is None else warn_at
    if share <= 0:
        return None
    window = context_window(model_id, config.context_window())
    counted = last_context(events)
    if counted is not None:
        fill = Fill(counted, window, True)
    else:
        if estimate_tokens(events) < share * window:  # the projection can only be smaller
            return None
        # lazy: the projection is only needed near a full window
        from porcelain.domain.view import model_events

        fill = Fill(estimate_tokens(model_events(events)), window, False)
    return fill if fill.share >= share else None
