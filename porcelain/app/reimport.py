"""Importing a JP folder that is already in the store: said, never a silent copy.

A folder whose JP id names a conversation here that was imported from the
same events (it may have grown since) is not imported again.  If the id is
taken by a different conversation, the folder goes in under a new id and the
import says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from gitstore import Event, Kind, Store, ids


def _canonical(event: Event) -> str:
    return json.dumps(event, sort_keys=True, ensure_ascii=False)


def same_import(existing: Iterable[Event], jp_id: str, events: Iterable[Event]) -> bool:
    """Whether ``existing`` (a stored chain) began as an import of ``events`` from ``jp_id``.

    Both are read one event at a time, side by side, up to the first difference."""
    stored = iter(existing)
    first = next(stored, None)
    if first is None or first.get("type") != Kind.CONVERSATION_START:
        return False
    imported = first.get("imported")
    if not isinstance(imported, dict) or imported.get("jp_id") != jp_id:
        return False
    for event in events:
        other = next(stored, None)
        if other is None or _canonical(other) != _canonical(event):
            return False
    return True


def already_there(store: Store, jp_id: str | None, events: Iterable[Event]) -> str | None:
    """The id of the conversation this folder was imported as, if it is here."""
    if not jp_id or not ids.is_valid(jp_id):
        return None
    found = store.refs.locate(jp_id)  # one look-up (not whether it exists, then where)
    if found is None:
        return None
    chain = store.log.iter_chain(found.tip)
    return jp_id if same_import(chain, jp_id, events) else None


def outcome(wanted: str | None, cid: str, kept: str | None) -> dict[str, Any]:
    """What one folder's import did: ``unchanged``, ``imported`` or ``renamed``."""
    if kept:
        return {"action": "unchanged"}
    if wanted and ids.is_valid(wanted) and wanted != cid:
        return {"action": "renamed", "jp_id": wanted}
    return {"action": "imported"}
