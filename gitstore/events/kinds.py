"""Events: the unit of a conversation, one per commit.

In memory an event is a plain JSON object (``dict``) with JP's ``type`` tag and
field names (see docs/data-model.md).  Two differences from JP's files: nothing
is base64-encoded, and ``timestamp`` is RFC 3339 in UTC with microseconds
(``2026-01-05T09:00:07.000000Z``).  Plain dicts keep loading 10,000 events
cheap; ``schema.py`` checks every event that enters the store (import, append)
against its kind's shape, and ``canonical_json`` gives the bytes of ``event.json``.

Conversation events (counted, turn-scoped): ``turn_start``, ``chat_request``,
``chat_response``, ``tool_call_request``, ``tool_call_response``,
``inquiry_request``, ``inquiry_response``.  Internal events (never sent to a
model): ``config_delta``, ``compaction``, ``compaction_reset`` and
``conversation_start``.  Any other tag is kept verbatim and ignored.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from typing import Any

from gitstore.events import canonical

Event = dict[str, Any]


class Kind(StrEnum):
    """Every event ``type`` jp knows: the names are written here once.

    A ``StrEnum``: ``Kind.TURN_START == "turn_start"``, and an event stored
    with either is the same JSON.
    """

    TURN_START = "turn_start"
    CHAT_REQUEST = "chat_request"
    CHAT_RESPONSE = "chat_response"
    TOOL_CALL_REQUEST = "tool_call_request"
    TOOL_CALL_RESPONSE = "tool_call_response"
    INQUIRY_REQUEST = "inquiry_request"
    INQUIRY_RESPONSE = "inquiry_response"
    CONFIG_DELTA = "config_delta"
    COMPACTION = "compaction"
    COMPACTION_RESET = "compaction_reset"
    CONVERSATION_START = "conversation_start"


# the built-in tool whose calls record a review's proposals (their commits are named for it)
PROPOSE_COMPACTION = "propose_compaction"

# plain strings: membership tests on loaded events stay as cheap as they were
CONVERSATION_TYPES = frozenset(
    k.value
    for k in (
        Kind.TURN_START,
        Kind.CHAT_REQUEST,
        Kind.CHAT_RESPONSE,
        Kind.TOOL_CALL_REQUEST,
        Kind.TOOL_CALL_RESPONSE,
        Kind.INQUIRY_REQUEST,
        Kind.INQUIRY_RESPONSE,
    )
)
INTERNAL_TYPES = frozenset(k.value for k in Kind) - CONVERSATION_TYPES
KNOWN_TYPES = frozenset(k.value for k in Kind)


def is_conversation_event(event: Event) -> bool:
    """True for the events JP counts and turns are made of."""
    return event.get("type") in CONVERSATION_TYPES


# -- time ---------------------------------------------------------------------


def format_time(moment: datetime) -> str:
    """RFC 3339, UTC, microseconds: the one form stored in events."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01 east of UTC, 9999-12-31 west of it
        raise ValueError("the time is outside years 1 to 9999 in UTC") from None
    # isoformat pads the year to four digits (strftime's %Y does not on glibc)
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


_STORED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{6})?Z", re.ASCII)
_JP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{6})?", re.ASCII)  # JP's files


@lru_cache(maxsize=256)  # an import's events share their record's time: parsed once
def parse_time(text: str) -> datetime:
    """Accept RFC 3339 and JP's ``YYYY-MM-DD HH:MM:SS.<fraction>`` (UTC)."""
    if _STORED.fullmatch(text) is not None:  # the form jp writes: read at every check
        return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)
    if _JP.fullmatch(text) is not None:  # what the general form below makes of it, sooner
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    raw = text.strip()
    if not raw:
        raise ValueError("empty timestamp")
    norm = raw.replace(" ", "T", 1)
    if norm.endswith(("Z", "z")):
        norm = norm[:-1] + "+00:00"
    head, sep, frac = norm.partition(".")
    if sep:
        digits = ""
        rest = ""
        for i, ch in enumerate(frac):
            if not ch.isdigit():
                rest = frac[i:]
                break
            digits += ch
        norm = f"{head}.{(digits + '000000')[:6]}{rest}"
    moment = datetime.fromisoformat(norm)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01 east of UTC, 9999-12-31 west of it
        raise ValueError(f"{text!r} is outside years 1 to 9999 in UTC") from None


def now_text() -> str:
    return format_time(datetime.now(UTC))


def normalised(event: Event) -> Event:
    """A valid event in the form ``events.validate`` gives it (a copy; a known type's
    time in RFC 3339 and an empty ``metadata`` left out), without checking it again."""
    out = dict(event)
    if out.get("type") in KNOWN_TYPES:
        out["timestamp"] = stored_time(out["timestamp"])
        if not out.get("metadata"):
            out.pop("metadata", None)
    return out


_PLAIN = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{6})?Z?", re.ASCII)


def stored_time(text: str) -> str:
    """``format_time(parse_time(text))`` of a time stamp known to read (checked before):
    JP's form and the stored one, to the microsecond, are rewritten as text, not
    parsed (a date that does not exist was refused by the check)."""
    found = _PLAIN.fullmatch(text)
    if found is None or (text[10] == " ") == text.endswith("Z"):  # JP's has no Z, ours has
        return format_time(parse_time(text))
    head = text[:10] + "T" + text[11:19]
    return f"{head}{found.group(1) or '.000000'}Z"


def canonical_json(event: Event) -> bytes:
    """The bytes of ``event.json``: sorted keys, UTF-8, one trailing newline.

    Changing this changes every object id written from then on.  The text is
    ``json.dumps(event, sort_keys=True, ensure_ascii=False, indent=1)``, written by
    ``canonical.dumps`` (the same text, faster).
    """
    return (canonical.dumps(event) + "\n").encode()
