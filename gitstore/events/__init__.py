"""Events: their kinds, time stamps, canonical JSON, commit messages and turns.

The shapes of the kinds jp knows, and the check of an event against its
shape, are ``gitstore.events.schema``.
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
)
from gitstore.events.schema import check_event
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


def validate(event: Any, where: str = "event", seen: bool = False, walked: bool = False) -> Event:
    """Check one event and return its normalised form (timestamp in RFC 3339), a
    ``Valid``; one already ``Valid`` is returned as it is.

    Unknown ``type`` tags are kept as they are (a newer writer's events); a
    known tag with a body that does not fit is refused (``schema.check_event``).

    ``seen``: the caller had this same value checked here before and knows it is
    unchanged (a file read a second time whose bytes it compared with the first
    read's, block by block, before parsing them): only normalised, as the check
    normalised it, not checked again.  ``walked``: its nesting and strings were
    checked as it was parsed (``schema.check_event``).
    """
    if type(event) is Valid:
        return event
    if not seen:
        check_event(event, where, walked)
    return Valid(normalised(event), _VOUCH)


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
