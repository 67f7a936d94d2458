"""Events: their kinds, time stamps, canonical JSON, commit messages and turns.

This package's own names are the cheap ones (no pydantic): the schema
(``gitstore.events.schema``) is imported on the first validation.
"""

from __future__ import annotations

from typing import Any

from gitstore.events.kinds import (
    CONVERSATION_TYPES,
    INTERNAL_TYPES,
    KNOWN_TYPES,
    Event,
    canonical_json,
    format_time,
    is_conversation_event,
    now_text,
    parse_time,
    quick,
)


def validate(event: Any, where: str = "event") -> Event:
    """Check one event and return its normalised form (timestamp in RFC 3339).

    Unknown ``type`` tags are kept as they are (a newer writer's events); a
    known tag with a body that does not fit is refused.  An event of one of the
    common shapes (``plainly_valid``), or of an unknown type, is checked here;
    anything else goes to the pydantic models in ``gitstore.schema``, imported on
    first use to keep start-up cheap, which accept it or say what is wrong.
    """
    checked = quick(event)
    if checked is not None:
        return checked
    from gitstore.events.schema import validate_event  # lazy: pydantic, past the quick check

    return validate_event(event, where)


__all__ = [
    "CONVERSATION_TYPES",
    "INTERNAL_TYPES",
    "KNOWN_TYPES",
    "Event",
    "canonical_json",
    "format_time",
    "is_conversation_event",
    "now_text",
    "parse_time",
    "validate",
]
