"""The secret check at every exit: what a push would send, scanned (docs/security.md).

``allow_list`` reads ``[secrets.allow]`` from the configuration jp was started
with (the user's file, the store's own local file, ``--cfg``), never from a
conversation's recorded settings nor from anything a remote sends.  ``PushCheck``
is the ``hold`` a push asks of each conversation it would send: it reads only the
events the remote lacks (from the tip to send down to a tip the remote has, or
to the root), so its cost is the change, not the store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from porcelain.domain.secretevents import (
    AllowList,
    conversation_findings,
    note_findings,
    redact_event,
)

if TYPE_CHECKING:
    from gitstore import Store
    from porcelain.app.session import Session

ALLOW_KEY = "secrets.allow"
ON_TOOL_RESULT = "redaction.on_tool_result"  # a tool's result redacted as it is written
_FIRST_WALK = 16  # commits read at first when looking for the remote's tip


def allow_list(session: Session) -> AllowList:
    """The user's allow-list; conversations' recorded settings never take part."""
    return AllowList.of(session.config(warn=False).get(ALLOW_KEY))


def outgoing_events(
    store: Store, tip: str, known: frozenset[str], clean: Set[str] = frozenset()
) -> tuple[list[dict[str, object]], list[str]]:
    """The events from ``tip`` down to (not including) the first commit in ``known``
    or ``clean``, or to the root: what a remote holding ``known`` lacks (less what was
    scanned already), oldest first, with their commit ids."""
    count = _FIRST_WALK
    while True:
        ids = store.log.ids_down(tip, count)  # root-most first
        stop = next(
            (i for i in range(len(ids) - 1, -1, -1) if ids[i] in known or ids[i] in clean), None
        )
        if stop is not None:
            n = len(ids) - stop - 1
            break
        if len(ids) < count:  # the root reached
            n = len(ids)
            break
        count *= 4
    if n == 0:
        return [], []
    return store.log.read_run(tip, n)


def redacted_result(event: dict[str, Any]) -> dict[str, Any]:
    """A tool result with every finding replaced (``redaction.on_tool_result``): the
    allow-list does not apply, the value never reaches the store or the model."""
    found = conversation_findings("", [event])
    return redact_event(event, found) if found else event


def kinds_line(counts: Counter[str]) -> str:
    """``2 aws access key id, private key``: kinds and counts, never a value."""
    return ", ".join(f"{n} {kind}" if n > 1 else kind for kind, n in sorted(counts.items()))


@dataclass
class PushCheck:
    """The push's ``hold``: a conversation whose outgoing events hold a finding the
    allow-list does not permit is held back."""

    store: Store
    allow: AllowList
    _seen: dict[tuple[str, str], str | None] = field(default_factory=dict)
    _clean: set[str] = field(default_factory=set)  # commits scanned without a finding

    def __call__(self, cid: str, tip: str, known: frozenset[str]) -> str | None:
        key = (cid, tip)
        if key in self._seen:  # a retried push plans again: scanned once
            return self._seen[key]
        if cid.startswith("refs/notes/"):
            self._seen[key] = self._notes(tip, known)
        else:
            # a run already scanned clean for another conversation (a fork's shared
            # history) is not read again
            events, ids = outgoing_events(self.store, tip, known, self._clean)
            located = conversation_findings(cid, events, self.allow)
            if not located:
                self._clean.update(ids)
            counts = Counter(loc.kind for loc in located)
            self._seen[key] = f"holds secrets: {kinds_line(counts)}" if located else None
        return self._seen[key]

    def _notes(self, tip: str, known: frozenset[str]) -> str | None:
        """A notes ref is held whole when a note it would send (titles, labels, any
        past value still in a note or in the notes history the remote lacks) holds a
        finding: ``metadata holds secrets: jp-c1 title (github token)``."""
        where: dict[tuple[str, str], Counter[str]] = {}
        for cid, text in self.store.notes.outgoing(tip, known):
            for loc in note_findings(cid, text, self.allow):
                where.setdefault((cid, _key(loc.path)), Counter())[loc.kind] += 1
        if not where:
            return None
        named = "; ".join(f"{cid} {key} ({kinds_line(n)})" for (cid, key), n in sorted(where.items()))
        return f"metadata holds secrets: {named}"


def _key(path: str) -> str:
    """``meta.labels[2]`` -> ``labels``: the metadata key a finding is in."""
    return path.removeprefix("meta.").split("[", 1)[0].split(".", 1)[0]
