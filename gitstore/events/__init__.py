"""Events: their kinds, time stamps, canonical JSON, commit messages and turns.

This package's own names are the cheap ones (no pydantic): the schema
(``gitstore.events.schema``) is imported on the first validation.
"""

from __future__ import annotations

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
    validate,
)

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
