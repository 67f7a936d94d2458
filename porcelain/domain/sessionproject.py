"""Where an imported session ran: its project, the folder the tool worked in (pure).

Claude Code writes ``cwd`` on its records; Codex writes it in ``session_meta``
and ``turn_context`` payloads.  An import keeps those records, whole, in
``source_record`` events and in a turn start's ``metadata.source_record``, so the
project is the first ``cwd`` found there.  A conversation of jp's own has none.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gitstore import Event, Kind

SOURCE_RECORD = "source_record"  # an imported record jp keeps whole (no Kind of its own)

LONGEST = 4096  # characters: a folder's path, not a document


def _cwd(record: Any) -> str | None:
    if not isinstance(record, dict):
        return None
    found = record.get("cwd")
    if found is None and isinstance(record.get("payload"), dict):
        found = record["payload"].get("cwd")  # codex: session_meta, turn_context
    return found if isinstance(found, str) and 0 < len(found) <= LONGEST else None


def project_of(events: Iterable[Event]) -> str | None:
    """The first working folder an imported session's records name, else None."""
    for event in events:
        kind = event.get("type")
        if kind == SOURCE_RECORD:
            found = _cwd(event.get("record"))
        elif kind == Kind.TURN_START:
            metadata = event.get("metadata")
            found = _cwd(metadata.get("source_record")) if isinstance(metadata, dict) else None
        else:
            continue
        if found is not None:
            return found
    return None
