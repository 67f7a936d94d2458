"""Answers that were cut off: marked where they are stored, never sent as complete.

When a stream breaks or the user presses Ctrl-C, the part of the answer that
had arrived is kept (it was shown, and it may be all there is), with
``metadata.interrupted`` naming what cut it (``stream`` or ``user``).  Older
versions of jp ignore the field: to them it is an answer like any other.

What the model is sent of a cut-off answer:

- nothing, when it is the newest thing in the conversation or another answer
  follows it (`jp q --retry` answers the request again, in place);
- its text ending in ``INTERRUPTED_NOTE``, when the user went on to a new
  request instead: the model knows what was said and that it stopped there.

Reasoning of a cut-off answer is never sent (its signature covers a whole
block, and a cut-off thought is no answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Literal

from gitstore import Event, Kind

INTERRUPTED = "interrupted"  # the metadata key
Cause = Literal["stream", "user"]
INTERRUPTED_NOTE = "[interrupted: this answer was cut off here and never completed]"


def cause(event: Event) -> str | None:
    """What cut ``event`` off (``stream``, ``user``), or None for a complete event."""
    meta = event.get("metadata")
    value = meta.get(INTERRUPTED) if isinstance(meta, dict) else None
    return value if isinstance(value, str) and value else None


def is_interrupted(event: Event) -> bool:
    return cause(event) is not None


def mark(events: Sequence[Event], why: Cause) -> list[Event]:
    """Copies of the answer events that arrived before the cut, each marked."""
    out: list[Event] = []
    for event in events:
        if event.get("type") != Kind.CHAT_RESPONSE:
            continue
        marked = dict(event)
        marked["metadata"] = {**(event.get("metadata") or {}), INTERRUPTED: why}
        out.append(marked)
    return out


def for_the_model(events: Sequence[Event]) -> list[Event]:
    """``events`` (provider-visible, in order) with cut-off answers as the model reads
    them: left out unless a new request follows, then their text marked as cut off."""
    # the common case (nothing cut off) found without a Python step per event: only
    # the events that carry metadata at all are looked at
    metas = filter(None, map(dict.get, events, repeat("metadata")))
    if not any(isinstance(m, dict) and INTERRUPTED in m for m in metas):
        return list(events)
    out: list[Event] = []
    for i, event in enumerate(events):
        if not is_interrupted(event):
            out.append(event)
            continue
        if "message" not in event or not _user_goes_on(events, i + 1):
            continue
        shown = dict(event)
        shown["metadata"] = {k: v for k, v in event["metadata"].items() if k != INTERRUPTED}
        shown["message"] = f"{str(event['message']).rstrip()}\n\n{INTERRUPTED_NOTE}"
        out.append(shown)
    return out


def _user_goes_on(events: Sequence[Event], start: int) -> bool:
    """Whether the first event after the cut-off ones is a new request."""
    for event in events[start:]:
        if is_interrupted(event):
            continue
        return event.get("type") == Kind.CHAT_REQUEST
    return False
