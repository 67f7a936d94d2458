"""The ref layout: the contract that plain git and the sync rely on.

| ref                                  | holds                                   |
| ------------------------------------ | --------------------------------------- |
| refs/conversations/<id>              | a live conversation's tip               |
| refs/archive/conversations/<id>      | an archived conversation's tip          |
| refs/notes/meta                      | metadata notes on each anchor blob      |
| refs/notes/source                    | a review's source id on its anchor blob |
| JP_HEAD (symbolic, local only)       | the active conversation                 |
"""

from __future__ import annotations

from gitstore import ids

LIVE_PREFIX = "refs/conversations/"
ARCHIVE_PREFIX = "refs/archive/conversations/"
NOTES_META = "refs/notes/meta"
NOTES_SOURCE = "refs/notes/source"
ACTIVE = "JP_HEAD"


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
