"""Conversation ids: ``jp-c<deciseconds since the epoch>`` with an optional suffix.

An id is validated here before it becomes part of a ref name or a path, so
nothing a user or a remote types can reach the ref namespace unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from gitstore.errors import InvalidId

if TYPE_CHECKING:
    from datetime import datetime

_ID = re.compile(r"jp-c[0-9]{1,20}(?:-[0-9a-z]{1,32})?")


def is_valid(text: str) -> bool:
    return isinstance(text, str) and _ID.fullmatch(text) is not None


def check(text: str) -> str:
    """Return ``text`` if it is a conversation id, else raise ``InvalidId``."""
    if not is_valid(text):  # fullmatch: "$" alone would let a trailing newline through
        raise InvalidId(text)
    return text


def from_deciseconds(value: int) -> str:
    return f"jp-c{value}"


def deciseconds(moment: datetime) -> int:
    from datetime import UTC  # lazy: checking an id needs no datetime (start-up)

    return int(moment.astimezone(UTC).timestamp() * 10)


def new_id(moment: datetime, taken: Callable[[str], bool]) -> str:
    """A fresh id for ``moment``; on a collision, the next free decisecond."""
    value = deciseconds(moment)
    while taken(from_deciseconds(value)):
        value += 1
    return from_deciseconds(value)


def created_at(cid: str) -> datetime:
    """The creation time an id encodes."""
    from datetime import UTC, datetime  # lazy: checking an id needs no datetime (start-up)

    digits = check(cid)[4:].split("-", 1)[0]
    try:
        return datetime.fromtimestamp(int(digits) / 10, tz=UTC)
    except (OverflowError, OSError, ValueError):  # a valid id past year 9999
        return datetime.max.replace(tzinfo=UTC)


def anchor_bytes(cid: str) -> bytes:
    """The content of a conversation's anchor blob, which its notes hang on."""
    return f"jp-conversation {check(cid)}\n".encode()
