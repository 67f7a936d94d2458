"""The offline model and the `recall` tool: a plain directive becomes a call.

When `recall` is offered, the last user message may ask for it in plain
words: ``recall turns 3-5``, ``recall turn 4``, ``recall "text"`` (a search
of every compacted turn) or both (``recall turns 3-5 "text"``).  The model
then calls the tool, and once its result is back answers with what came
back, so recall can be shown and tested without a key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gitstore import Event, Kind
from porcelain.domain.recall import RECALL

_TURNS = re.compile(
    r"\brecall\s+turns?\s+(\d{1,9})(?:\s*(?:-|–|to|\.\.)\s*(\d{1,9}))?", re.IGNORECASE
)
_QUERY = re.compile(r"\brecall\b[^\"“”\n]*[\"“]([^\"“”\n]+)[\"”]", re.IGNORECASE)


def directive(text: str) -> dict[str, Any] | None:
    """The tool arguments a message asks for, or None when it names no recall."""
    args: dict[str, Any] = {}
    turns = _TURNS.search(text)
    if turns:
        args["from_turn"] = int(turns.group(1))
        args["to_turn"] = int(turns.group(2) or turns.group(1))
    query = _QUERY.search(text)
    if query:
        args["query"] = query.group(1)
    return args or None


def recall_calls(events: Sequence[Event]) -> set[str]:
    return {
        str(e.get("id"))
        for e in events
        if e.get("type") == Kind.TOOL_CALL_REQUEST and e.get("name") == RECALL
    }


def answer_to(result: Event) -> str:
    """The answer once a recall's result is back: what came back, said plainly."""
    content = str(result.get("content") or "").strip()
    if result.get("is_error"):
        return f"The recall was refused: {content}"
    return f"Recalled from the store:\n\n{content}"


def after_recall(events: Sequence[Event]) -> Event | None:
    """The last event, when it is the result of this model's own recall call."""
    last = events[-1] if events else {}
    if last.get("type") == Kind.TOOL_CALL_RESPONSE and str(last.get("id")) in recall_calls(events):
        return last
    return None
