"""What the store hands out: where a conversation is, a conversation as read, who writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple, Protocol

from gitstore.events import Event
from gitstore.git import refs


class Located(NamedTuple):
    """A conversation's id, its tip, and whether it is archived."""

    cid: str
    tip: str
    archived: bool

    @property
    def ref(self) -> str:
        return refs.archived(self.cid) if self.archived else refs.live(self.cid)


class Conversation(NamedTuple):
    """A conversation as read: its events in order, and each event's commit."""

    cid: str
    tip: str
    archived: bool
    events: list[Event]
    commits: list[str]


class Identity(NamedTuple):
    """The name and address on the commits and notes the store writes."""

    name: str = "jp"
    email: str = "jp@localhost"


class EventSource(Protocol):
    """Events that may be read more than once, the same each time, and counted without
    being read: a list, or a file read again on each pass (an import that never
    holds all its events).  A pass may raise, should the source change meanwhile."""

    def __iter__(self) -> Iterator[Event]: ...

    def __len__(self) -> int: ...
