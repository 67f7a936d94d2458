"""Pulling through the remote's journal (``gitstore.sync.journal``): fetch it,
fetch exactly the refs it names, and move the copy a pull starts from once
everything it named is in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.refs import quarantine
from gitstore.sync import fetching, journal, remotes

if TYPE_CHECKING:
    from gitstore.sync.pull import Syncer


def accept(syncer: Syncer, reconciled: bool) -> None:
    """The pull is done: the journal as fetched is where the next one starts (a
    pull killed before this point walks the same entries again)."""
    tip = syncer.journal_tip(journal.INCOMING)
    if tip is None:
        syncer.transport.delete_refs([syncer.tracking + journal.COPY])
    else:
        if tip != syncer.journal_tip():
            remotes.set_copy(syncer.repo, syncer.tracking + journal.COPY, tip)
        remotes.set_copy(syncer.repo, syncer.tracking + journal.INCOMING, None)
    found = len(syncer.inbound.conversations) if reconciled else None
    journal.record_pull(syncer.store.gitdir, syncer.remote, reconciled, found)


def usable(syncer: Syncer) -> bool:
    if syncer.transport.name != "git" or syncer.journal_tip() is None:
        return False  # libgit2 asks for every ref anyway; no copy: reconcile first
    gitdir = syncer.store.gitdir
    return (
        journal.refs_at_reconcile(gitdir, syncer.remote) >= syncer.journal_from
        and journal.pulls_since_reconcile(gitdir, syncer.remote) < journal.RECONCILE_EVERY
    )


def fetch(syncer: Syncer) -> set[str] | None:
    """Fetch the journal, then the refs it names; the copies to check, or None
    when the journal cannot say (the caller fetches everything)."""
    before = syncer.journal_tip()
    fetching.fetch_journal(syncer.transport, syncer.remote, syncer.store.gitdir)
    after = syncer.journal_tip(journal.INCOMING)
    if after is None:
        return None  # the remote lost its journal
    names: set[str] = set()
    if after != before:
        reading = journal.read(syncer.repo, after, before)
        if reading.names is None:
            if reading.problem:
                detail = f"{reading.problem}; every ref was fetched instead"
                syncer.journal_note = syncer.warning(journal.REMOTE_REF, detail)
            return None
        names = reading.names
    # refused against another size limit: fetched and checked again, as a full pull does
    names |= {
        ref
        for ref, e in quarantine.recorded(syncer.store.gitdir, syncer.remote).items()
        if e.stage == "check" and e.limit != syncer.limits.max_event_bytes
    }
    if not names:
        return set()
    syncer.progress("fetching", 0, len(names))
    return fetching.fetch_moved(syncer.transport, syncer.remote, syncer.store.gitdir, names)


def complete(syncer: Syncer) -> None:
    """After a fetch of what moved: every other copy too, as it was accepted
    before (a push compares them all with this store)."""
    if syncer.scope is None:
        return
    for row in syncer.transport.list_refs([syncer.tracking]):
        rest = row.name[len(syncer.tracking) :]
        if rest in syncer.scope or fetching.name_problem(rest) is not None:
            continue
        if rest.startswith("notes/"):
            if row.kind == "commit":
                syncer.inbound.notes.setdefault(rest[len("notes/") :], row.oid)
        else:
            syncer.inbound.conversations.setdefault(rest, row.oid)
    syncer.scope = None
