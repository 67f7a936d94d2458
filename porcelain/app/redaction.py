"""`jp conversation redact` and `scan`: a conversation's findings, and its chain
written again without them (docs/security.md).

A redaction rewrites the chain from the first event that holds a finding: the
events before it keep their commits, that event and every later one are written
again (each finding replaced by ``[redacted: KIND]``, every other byte as it was),
and the ref moves to the new tip in one journaled transaction, recorded in the
operation log like any move: ``jp undo`` puts the original tip back.  The new
commits are written before the ref moves, so a kill leaves the conversation as it
was (the new objects unreferenced).  A chain whose first rewritten event is already
on a remote (a remote-tracking copy holds it) is refused: the remote would keep
the original and the next pull would bring it back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitstore import syncing
from porcelain.app.secretcheck import allow_list, kinds_line
from porcelain.domain.secretevents import (
    AllowList,
    Located,
    conversation_findings,
    note_findings,
    redact_event,
    redact_note,
    redact_value,
)
from porcelain.errors import UserError

if TYPE_CHECKING:
    from gitstore import Store
    from porcelain.app.session import Session
    from porcelain.jpformat import JpFolder


@dataclass(frozen=True)
class Redacted:
    """What one conversation's redaction did (``count`` 0: nothing to do)."""

    cid: str
    counts: Counter[str]
    first_event: int = -1
    old_tip: str = ""
    new_tip: str = ""

    @property
    def count(self) -> int:
        return sum(self.counts.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.cid, "redacted": self.count, "kinds": dict(sorted(self.counts.items())),
            "from_event": self.first_event if self.count else None,
            "old_tip": self.old_tip or None, "new_tip": self.new_tip or None,
        }  # fmt: skip


def findings(store: Store, cid: str, allow: AllowList | None = None) -> list[Located]:
    """Every finding of the conversation's chain (the allow-list's left out)."""
    where = store.refs.require(cid)
    events, _ = store.log.read_chain(where.tip)
    return conversation_findings(cid, events, allow)


def chosen_allow(session: Session, all_findings: bool) -> AllowList:
    """The allow-list a redaction honours: the user's, or none with ``--all-findings``."""
    return AllowList() if all_findings else allow_list(session)


def redact(store: Store, cid: str, allow: AllowList, kinds: Collection[str] = ()) -> Redacted:
    """Rewrite ``cid``'s chain without its findings (of ``kinds`` only, when given)."""
    with store.refs.hold(cid):
        where = store.refs.require(cid)
        events, commits = store.log.read_chain(where.tip)
        found = [f for f in conversation_findings(cid, events, allow) if not kinds or f.kind in kinds]
        if not found:
            return Redacted(cid, Counter())
        first = min(f.event for f in found)
        holders = syncing.remotes_containing(store, commits[first])
        if holders:
            raise UserError(
                f"{cid} is already on {', '.join(holders)} from event {first + 1} on, where its "
                f"first finding is ({kinds_line(Counter(f.kind for f in found))}); "
                "redacting here would leave the remote's copy as it is",
                "the remote's copy must be rewritten by hand (docs/security.md, "
                "'A secret that reached a remote'); `jp conversation scan "
                f"{cid}` shows where the findings are",
            )
        by_event: dict[int, list[Located]] = {}
        for f in found:
            by_event.setdefault(f.event, []).append(f)
        rewritten = [redact_event(e, by_event.get(first + i, ())) for i, e in enumerate(events[first:])]
        names = {str(e.get("id")): str(e.get("name")) for e in events[:first] if e.get("type") == "tool_call_request"}
        parent = commits[first - 1] if first > 0 else None
        new_tip = store.log.rewrite(cid, rewritten, parent, where.tip, f"jp conversation redact {cid}", names)
    return Redacted(cid, Counter(f.kind for f in found), first, where.tip, new_tip)


def redact_meta(store: Store, cid: str, allow: AllowList, kinds: Collection[str] = ()) -> Counter[str]:
    """Take the findings out of ``cid``'s metadata note (titles, labels, the old values
    the note keeps) and fold the notes history no remote has into one commit, so
    that nothing of the old note is left to push (``replace_unsent_meta``); the kinds
    taken out.  What a remote has already stays there."""
    text = store.notes.note(store.notes.refs.meta, cid)
    if not text:
        return Counter()
    found = [f for f in note_findings(cid, text, allow) if not kinds or f.kind in kinds]
    if not found:
        return Counter()
    syncing.replace_unsent_meta(store, cid, redact_note(text, found), f"jp conversation redact {cid}: metadata")
    return Counter(f.kind for f in found)


def redacted_copy(cid: str, events: list[dict[str, Any]], allow: AllowList | None = None) -> tuple[list[dict[str, Any]], Counter[str]]:
    """``events`` with every finding replaced (none is let through unless ``allow``
    says so), and the kinds taken out: for what leaves the store without a rewrite
    (a shared page, an export with ``--redact``)."""
    found = conversation_findings(cid, events, allow or AllowList())
    by_event: dict[int, list[Located]] = {}
    for f in found:
        by_event.setdefault(f.event, []).append(f)
    out = [redact_event(e, by_event.get(i, ())) for i, e in enumerate(events)]
    return out, Counter(f.kind for f in found)


def redacted_import(
    records: list[dict[str, Any]], side: list[tuple[str, bytes]] | None = None
) -> tuple[list[dict[str, Any]], list[tuple[str, bytes]]]:
    """A session file's records (and side files) as ``redaction.on_import`` stores
    them: every finding replaced, whatever the allow-list says, so that the same
    file always gives the same records (a re-import compares these, finds them
    equal, and writes nothing)."""
    out, files, _found = redacted_records("", records, dict(side or ()), AllowList())
    return out, list(files.items())


def redacted_folder(conv: JpFolder) -> JpFolder:
    """A read JP folder as ``redaction.on_import`` stores it: every string of its
    events, metadata and base configuration with every finding replaced (the same
    folder always gives the same events, so a re-import compares equal).  The events
    are held as a list, since each is written changed."""
    events = [redact_value(e)[0] for e in conv.events]
    return conv._replace(
        title=redact_value(conv.title)[0],
        metadata=redact_value(conv.metadata)[0],
        base_config=redact_value(conv.base_config)[0],
        events=events,
        first=events[0] if events else None,
    )


def redacted_records(
    cid: str, records: list[dict[str, Any]], side: dict[str, bytes], allow: AllowList
) -> tuple[list[dict[str, Any]], dict[str, bytes], Counter[str]]:
    """A session's records and side files (``export --to ... --redact``) with every
    finding replaced in every string (the placeholder holds no quote, so a JSON text
    inside a string stays JSON), those ``allow`` permits kept; and the kinds taken out."""
    out, found = redact_value(records, allow, cid)
    files: dict[str, bytes] = {}
    for name, data in side.items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            files[name] = data  # not text: nothing the scanner reads
            continue
        new, kinds = redact_value(text, allow, cid)
        files[name] = str(new).encode("utf-8")
        found.update(kinds)
    return list(out), files, found
