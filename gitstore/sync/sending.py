"""What a push plans and sends with (``sync/push.py``) and a delete sends
(``sync/delete.py``): the few parts of its pull they need, as one record made by
``Syncer.sending``, never the whole ``Syncer``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitstore.fs.place import Place
from gitstore.git import refs
from gitstore.sync import remotes
from gitstore.sync.inbound import Inbound
from gitstore.sync.transport import Transport

if TYPE_CHECKING:
    import pygit2


@dataclass(frozen=True, slots=True)
class Sending:
    """The store's place and notes refs, the remote and its transport, the
    signature of a journal entry, and what the last fetch found on the remote."""

    place: Place
    notes: refs.NotesRefs  # this store's notes refs, each with its name on the remote
    remote: str
    transport: Transport
    signature: pygit2.Signature
    inbound: Inbound
    partial: bool  # ``inbound`` holds only some of the remote's copies
    aside: str | None  # the remote's journal, set aside as unusable

    @property
    def tracking(self) -> str:
        """The prefix of this store's copies of the remote's refs."""
        return remotes.tracking_prefix(self.remote)
