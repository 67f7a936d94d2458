"""Refs: their names (the layout, below), reading them (``files``), and moving
several at once (``transaction``, ``update``).

| ref                                  | holds                                   |
| ------------------------------------ | --------------------------------------- |
| refs/conversations/<id>              | a live conversation's tip               |
| refs/archive/conversations/<id>      | an archived conversation's tip          |
| refs/notes/meta                      | metadata notes on each anchor blob      |
| refs/notes/source                    | a review's source id on its anchor blob |
| JP_HEAD (symbolic, local only)       | the active conversation                 |

The notes refs depend on the kind of store: a store of its own (``jp init``)
uses the names above; a store in a project's repository (``jp init --here``)
keeps its notes under ``refs/notes/jp/`` (``refs/notes/jp/meta``,
``refs/notes/jp/source``), so that the project's own notes
(``refs/notes/commits`` or any other) are never jp's.  ``store.notes.refs``
says which; on every remote the names are those of a store of its own.
"""

from __future__ import annotations

from typing import NamedTuple

from gitstore import ids

LIVE_PREFIX = "refs/conversations/"
ARCHIVE_PREFIX = "refs/archive/conversations/"
ACTIVE = "JP_HEAD"


class NotesRefs(NamedTuple):
    """The notes refs of one kind of store (a named tuple: no dataclasses, which load
    ``inspect``, at start-up)."""

    meta: str
    source: str

    def synced(self) -> tuple[tuple[str, str], ...]:
        """Each notes ref that travels: (its name here, its name on a remote)."""
        return ((self.meta, ON_REMOTES.meta), (self.source, ON_REMOTES.source))


STANDALONE = NotesRefs("refs/notes/meta", "refs/notes/source")  # `jp init`
PROJECT = NotesRefs("refs/notes/jp/meta", "refs/notes/jp/source")  # `jp init --here`
ON_REMOTES = STANDALONE  # the names on every remote, whatever the store

# a store of its own (the names most tools and tests know)
NOTES_META = STANDALONE.meta
NOTES_SOURCE = STANDALONE.source


def live(cid: str) -> str:
    return LIVE_PREFIX + ids.check(cid)


def archived(cid: str) -> str:
    return ARCHIVE_PREFIX + ids.check(cid)


def conversation_id(refname: str) -> tuple[str, bool] | None:
    """``(id, archived)`` for one of our conversation refs, else None."""
    for prefix, is_archived in ((LIVE_PREFIX, False), (ARCHIVE_PREFIX, True)):
        if refname.startswith(prefix):
            cid = refname[len(prefix) :]
            if ids.is_valid(cid):
                return cid, is_archived
    return None
