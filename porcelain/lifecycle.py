"""Creating conversations: new, fork, import.  Each prints nothing itself."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from gitstore import ids
from gitstore.events import Event, now_text
from gitstore.store import Located, Store, record_activation

JP_WRITTEN = {"written_by": "jp"}


def fresh_id(store: Store, moment: datetime | None = None) -> str:
    return ids.new_id(moment or datetime.now(UTC), store.exists)


def start_event(cid: str, **fields: Any) -> Event:
    event: Event = {"type": "conversation_start", "timestamp": now_text(), "conversation_id": cid}
    event.update({k: v for k, v in fields.items() if v is not None})
    return event


def new_conversation(store: Store, title: str | None = None, activate: bool = True) -> str:
    cid = fresh_id(store)
    store.create(cid, [start_event(cid)], None, f"jp conversation new {cid}")
    if title:
        store.set_meta(cid, {"title": title}, f"jp: title of {cid}")
    if activate:
        store.set_active(cid)
        record_activation(store, cid)
    return cid


def fork(
    store: Store,
    source: Located,
    *,
    events: Sequence[Event] | None = None,
    extra: Sequence[Event] = (),
    title: str | None = None,
    review: dict[str, Any] | None = None,
    cid: str | None = None,
) -> str:
    """Branch ``source``: a creation commit on its tip (O(1)).

    With ``events`` (a filtered copy, e.g. `--last N`) a new chain is written
    instead, since it no longer shares the source's history.
    """
    cid = cid or fresh_id(store)
    origin = {"conversation_id": source.cid, "commit": source.tip}
    start = start_event(cid, forked_from=origin, review=review)
    if events is None:
        store.create(
            cid, [start, *extra], source.tip, f"jp conversation fork {source.cid} -> {cid}"
        )
    else:
        store.create(
            cid, [start, *events, *extra], None, f"jp conversation fork {source.cid} -> {cid}"
        )
    meta = store.meta(source.cid)
    carry: dict[str, Any] = {k: meta[k] for k in ("title", "labels") if k in meta}
    if title:
        carry["title"] = title
    if carry:
        store.set_meta(cid, carry, f"jp: metadata of fork {cid}")
    return cid


def config_delta(delta: dict[str, Any]) -> Event:
    """A configuration entry written by jp (imported JP deltas stay inert)."""
    return {
        "type": "config_delta",
        "timestamp": now_text(),
        "delta": delta,
        "metadata": dict(JP_WRITTEN),
    }


def jp_deltas(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The configuration entries jp itself recorded, in order."""
    return [
        e["delta"]
        for e in events
        if e.get("type") == "config_delta" and (e.get("metadata") or {}).get("written_by") == "jp"
    ]
