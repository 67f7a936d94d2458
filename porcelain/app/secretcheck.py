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
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from porcelain.domain.secretevents import (
    AllowList,
    conversation_findings,
    event_findings,
    note_findings,
    redact_event,
)
from porcelain.domain.secretscan import may_hold

if TYPE_CHECKING:
    from gitstore import Store
    from porcelain.app.session import Session
    from porcelain.domain.secretscan import Finding

ALLOW_KEY = "secrets.allow"
ON_TOOL_RESULT = "redaction.on_tool_result"  # a tool's result redacted as it is written


def allow_list(session: Session) -> AllowList:
    """The user's allow-list; conversations' recorded settings never take part."""
    return AllowList.of(session.config(warn=False).get(ALLOW_KEY))


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
    allow-list does not permit is held back.

    One push reads each commit it would send once and scans each distinct event
    once: a commit's ``event.json`` is found by its blob id (the same event in two
    conversations, a rewritten chain that kept its events, is one blob), and the
    findings of a blob, taken before the allow-list, are kept for the push."""

    store: Store
    allow: AllowList
    _seen: dict[tuple[str, str], str | None] = field(default_factory=dict)
    # commits whose run down to what the remote has holds no finding the allow-list's
    # kinds and hashes leave (its conversations part is one conversation's own)
    _clean: set[str] = field(default_factory=set)
    _found: dict[str, tuple[Finding, ...]] = field(default_factory=dict)  # blob id -> findings

    def __call__(self, cid: str, tip: str, known: frozenset[str]) -> str | None:
        key = (cid, tip)
        if key in self._seen:  # a retried push plans again: scanned once
            return self._seen[key]
        if cid.startswith("refs/notes/"):
            self._seen[key] = self._notes(tip, known)
        else:
            self._seen[key] = self._conversation(cid, tip, known)
        return self._seen[key]

    def _conversation(self, cid: str, tip: str, known: frozenset[str]) -> str | None:
        """The events from ``tip`` down to a commit the remote has, or to one a run
        already scanned clean for another conversation (a fork's shared history), or
        to the root."""
        run = self.store.log.event_blobs_down(tip, _Either(known, self._clean))
        left = [f for commit, blob in run for f in self._findings(blob, commit) if not self.allow.permits(f)]
        if not left:
            self._clean.update(commit for commit, _ in run)
            return None
        if cid in self.allow.conversations:
            return None
        return f"holds secrets: {kinds_line(Counter(f.kind for f in left))}"

    def _findings(self, blob: str, commit: str) -> tuple[Finding, ...]:
        found = self._found.get(blob)
        if found is None:
            event = self.store.log.blob_event(blob, commit)
            found = self._found[blob] = tuple(f for _, f in event_findings(event))
        return found

    def _notes(self, tip: str, known: frozenset[str]) -> str | None:
        """A notes ref is held whole when a note it would send (titles, labels, any
        past value still in a note or in the notes history the remote lacks) holds a
        finding: ``metadata holds secrets: jp-c1 title (github token)``."""
        where: dict[tuple[str, str], Counter[str]] = {}
        for cid, text in self.store.notes.outgoing(tip, known, may_hold):
            for loc in note_findings(cid, text, self.allow):
                where.setdefault((cid, _key(loc.path)), Counter())[loc.kind] += 1
        if not where:
            return None
        named = "; ".join(f"{cid} {key} ({kinds_line(n)})" for (cid, key), n in sorted(where.items()))
        return f"metadata holds secrets: {named}"


def _key(path: str) -> str:
    """``meta.labels[2]`` -> ``labels``: the metadata key a finding is in."""
    return path.removeprefix("meta.").split("[", 1)[0].split(".", 1)[0]


@dataclass(frozen=True)
class _Either:
    """In either of two collections (the remote's tips, the commits scanned clean),
    without copying them."""

    first: Collection[str]
    second: Collection[str]

    def __contains__(self, item: object) -> bool:
        return item in self.first or item in self.second
