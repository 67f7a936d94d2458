"""Moving conversations between JP's folder layout and the store."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore import Event, EventSource, Kind, Located, Store, ids, turns
from porcelain.app.lifecycle import publish, start_event
from porcelain.jpformat import JpConversation, JpFolder, write_conversation

if TYPE_CHECKING:
    from porcelain.domain.secretevents import AllowList

META_KEYS = ("title", "pinned_at", "labels")


class _Chain:
    """The creation event, then the imported events (read again from their source on
    each pass, never copied into a list)."""

    def __init__(self, start: Event, events: EventSource) -> None:
        self.start = start
        self.events = events

    def __iter__(self) -> Iterator[Event]:
        yield self.start
        yield from self.events

    def __len__(self) -> int:
        return 1 + len(self.events)


def store_imported(
    store: Store,
    conv: JpConversation | JpFolder,
    metas: dict[str, dict[str, Any]] | None = None,
) -> str:
    """Write one read JP conversation as a new chain (into the store's batch, when one
    is open); returns its id.  Its metadata (title, pin, labels) is set now, or put
    in ``metas`` for the caller to set with the others (``Notes.set_metas``)."""
    wanted = conv.jp_id if conv.jp_id and ids.is_valid(conv.jp_id) else None
    imported: dict[str, Any] = {"format": "jp"}
    if conv.jp_id:
        imported["jp_id"] = conv.jp_id
    if conv.base_config is not None:
        imported["base_config"] = conv.base_config
    if isinstance(conv, JpFolder):
        first = conv.first
    else:
        first = conv.events[0] if conv.events else None

    def chain(cid: str) -> EventSource:
        start = start_event(cid, imported=imported)
        if first is not None:
            start["timestamp"] = first["timestamp"]
        return _Chain(start, conv.events)

    cid = publish(store, chain, None, "jp conversation import", cid=wanted, packed=True)
    meta = {k: conv.metadata[k] for k in META_KEYS if conv.metadata.get(k)}
    if meta and metas is not None:
        metas[cid] = meta
    elif meta:
        store.notes.set_meta(cid, meta, f"jp: metadata of imported {cid}")
    return cid


def unfinished_metas(
    store: Store, kept: dict[str, JpConversation | JpFolder]
) -> dict[str, dict[str, Any]]:
    """The metadata (title, pin, labels) of folders found imported already, for the
    conversations here that have no metadata at all: an import killed after its
    refs and before its titles' note is finished by the next (one read of the notes
    for all of them)."""
    wanted = {
        cid: meta
        for cid, conv in kept.items()
        if (meta := {k: conv.metadata[k] for k in META_KEYS if conv.metadata.get(k)})
    }
    have = store.notes.metas(wanted) if wanted else {}
    return {cid: meta for cid, meta in wanted.items() if not have.get(cid)}


def export_conversation(
    store: Store, loc: Located, dest: Path, allow: AllowList | None = None, redact: bool = False
) -> tuple[int, Counter[str]]:
    """Write ``loc`` in JP's layout; the event count, and the kinds of the findings
    ``allow`` does not permit (with ``redact``, replaced in what is written)."""
    conv = store.log.load(loc.cid)
    base_config = None
    for event in conv.events:
        if event.get("type") == Kind.CONVERSATION_START:
            imported = event.get("imported") or {}
            if "base_config" in imported:
                base_config = imported["base_config"]
            break
    events: list[Event] = [e for e in conv.events if e.get("type") != Kind.CONVERSATION_START]
    # lazy: the scanner loads for an export, not for an import
    from porcelain.app.redaction import redacted_copy
    from porcelain.domain.secretevents import conversation_findings

    if redact:
        events, found = redacted_copy(loc.cid, events, allow)
    else:
        found = Counter(f.kind for f in conversation_findings(loc.cid, events, allow))
    meta = store.notes.meta(loc.cid)
    metadata: dict[str, Any] = {k: meta[k] for k in META_KEYS if meta.get(k)}
    last = next((e["timestamp"] for e in reversed(events)), None)
    metadata["last_activated_at"] = last or conv.events[0]["timestamp"]
    if loc.archived:
        metadata["archived_at"] = meta.get("archived_at") or metadata["last_activated_at"]
    parts = JpConversation(
        jp_id=loc.cid,
        title=metadata.get("title"),
        metadata=metadata,
        base_config=base_config,
        events=events,
    )
    write_conversation(dest, parts)
    return turns.event_count(events), found
