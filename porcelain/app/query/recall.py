"""The built-in `recall` tool: the model reads the raw events of compacted turns.

Offered only when the query sends a compacted view (a standing overlay covers
some turn), never inside a compaction review (it has its own tool and the
whole source), and not when `conversation.compaction.recall.enable` is false
(a conversation may set it only to false: porcelain/config/trust.py).  The
work is the pure `porcelain/domain/recall.py`; a call reads the events the
turn already holds, so it costs no read of the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from gitstore import Event
from porcelain.app.query.registry import BuiltinTool, ToolCall, ToolOutcome, builtin
from porcelain.config import Config
from porcelain.domain.recall import (
    DEFAULT_MAX_BYTES,
    RECALL,
    RECALL_DESCRIPTION,
    RECALL_SCHEMA,
    RecallError,
    compacted_turns,
    recall,
)
from porcelain.domain.review.markers import review_record
from porcelain.domain.stream import Stream
from porcelain.models.base import ToolSpec

ENABLE_KEY = "conversation.compaction.recall.enable"
MAX_BYTES_KEY = "conversation.compaction.recall.max_bytes"

T = TypeVar("T")


@builtin(RECALL)
def recall_tool() -> BuiltinTool:
    # on by default: `offered` decides, per query, whether the model sees it
    return BuiltinTool(ToolSpec(RECALL, RECALL_DESCRIPTION, RECALL_SCHEMA), run, True)


def max_bytes(config: Config) -> int:
    value = config.get(MAX_BYTES_KEY, DEFAULT_MAX_BYTES)
    return value if isinstance(value, int) and value > 0 else DEFAULT_MAX_BYTES


def run(call: ToolCall, ctx: Any) -> ToolOutcome:
    try:
        text = recall(call.arguments, Stream(ctx.events), max_bytes(ctx.config))
    except RecallError as exc:
        return ToolOutcome(str(exc), True)
    return ToolOutcome(text)


def offered(config: Config, events: Sequence[Event]) -> bool:
    """The query sends a compacted view, outside a review, with recall enabled."""
    if config.get(ENABLE_KEY, True) is False or review_record(events) is not None:
        return False
    return bool(compacted_turns(Stream(events)))


def with_recall(tools: dict[str, T], config: Config, events: Sequence[Event]) -> dict[str, T]:
    """``tools`` without `recall` unless this query offers it."""
    if RECALL not in tools or offered(config, events):
        return tools
    return {name: tool for name, tool in tools.items() if name != RECALL}
