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
    normalised,
    now_text,
    parse_time,
    quick,
)
from gitstore.values import Vouched

_VOUCH = object()  # held by this module: a ``Valid`` is made by ``validate`` only


class Valid(Vouched):
    """An event ``validate`` returned: checked and normalised, so ``validate`` (and so
    every writer of the store) takes it as it is, not checked a second time (an
    import's events, checked as its file is read, are not checked again as they are
    written).  Nothing else can make one (the constructor wants this module's token),
    and it cannot be changed at its top level (``dict(event)`` is a copy that can);
    what it holds must not be changed either.  A changed copy is a plain ``dict``,
    checked again by whoever writes it."""

    __slots__ = ()
    _what = "a Valid event"

    def __init__(self, value: dict[str, Any], vouch: object) -> None:
        if vouch is not _VOUCH:
            raise TypeError("a Valid event is made only by gitstore.events.validate")
        super().__init__(value)


def validate(event: Any, where: str = "event", seen: bool = False) -> Event:
    """Check one event and return its normalised form (timestamp in RFC 3339), a
    ``Valid``; one already ``Valid`` is returned as it is.

    Unknown ``type`` tags are kept as they are (a newer writer's events); a
    known tag with a body that does not fit is refused.  An event of one of the
    common shapes (``plainly_valid``), or of an unknown type, is checked here;
    anything else goes to the pydantic models in ``gitstore.schema``, imported on
    first use to keep start-up cheap, which accept it or say what is wrong.

    ``seen``: the caller had this same value checked here before and knows it is
    unchanged (a file read a second time whose bytes it compared with the first
    read's, block by block, before parsing them): only normalised, as the check
    normalised it, not checked again.
    """
    if type(event) is Valid:
        return event
    if seen:
        return Valid(normalised(event), _VOUCH)
    checked = quick(event)
    if checked is None:
        from gitstore.events.schema import validate_event  # lazy: pydantic, past the quick check

        checked = validate_event(event, where)
    return Valid(checked, _VOUCH)


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
    "Valid",
    "validate",
]
