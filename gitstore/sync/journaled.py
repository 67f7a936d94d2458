"""Pulling through the remote's journal (``gitstore.sync.journal``): fetch it,
fetch exactly the refs it names, and move the copy a pull starts from once
everything it named is in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.git.refs import files as refread
from gitstore.git.refs import quarantine
from gitstore.sync import beside, fetching, journal, remotes
from gitstore.sync.transport import GitCli

SCOPED_MAX = 2000  # conversations whose copies are read by name, not by a listing of all

if TYPE_CHECKING:
    from gitstore.sync.pull import Syncer


def accept(syncer: Syncer, reconciled: bool) -> None:
    """The pull is done: the journal as fetched is where the next one starts (a
    pull killed before this point walks the same entries again)."""
    tip = syncer.journal_tip(journal.INCOMING)
    if tip is None:
        syncer.transport.delete_refs([syncer.tracking + journal.COPY])
    else:
        values: dict[str, str | None] = {}  # the copy moves first, then the incoming goes
        if tip != syncer.journal_tip():
            values[syncer.tracking + journal.COPY] = tip
        values[syncer.tracking + journal.INCOMING] = None
        transport, gitdir = syncer.transport, syncer.here.place.gitdir
        if not isinstance(transport, GitCli) or not beside.write_copies(transport, gitdir, values):
            for name, value in values.items():
                remotes.set_copy(syncer.repo, name, value)
    found = len(syncer.inbound.conversations) if reconciled else None
    journal.record_pull(syncer.here.place.gitdir, syncer.remote, reconciled, found)


def set_aside(syncer: Syncer) -> None:
    """The journal as just fetched, checked before anything reads it: one that is
    not a journal entry at all (anyone who can push can point ``refs/jp/journal`` at
    a blob, a tree or another commit) is set aside.  Its copy goes, so the pull
    lists everything and no pull or push builds on it; its tip is kept for this
    run only, as the lease of the push that replaces it (``push.send``); the pull
    names it in one warning."""
    syncer.journal_aside = None
    tip = syncer.journal_tip(journal.INCOMING)
    if tip is None:
        return
    why = journal.problem(syncer.repo, tip)
    if why is None:
        return
    syncer.journal_aside = tip
    syncer.transport.delete_refs([syncer.tracking + journal.INCOMING])
    detail = f"{why}; set aside: every ref was fetched, and a push from here starts a new journal"
    syncer.journal_note = syncer.warning(journal.REMOTE_REF, detail)


def usable(syncer: Syncer) -> bool:
    if syncer.journal_tip() is None:
        return False  # no copy: reconcile first
    gitdir = syncer.here.place.gitdir
    return (
        journal.refs_at_reconcile(gitdir, syncer.remote) >= syncer.journal_from
        and journal.pulls_since_reconcile(gitdir, syncer.remote) < journal.RECONCILE_EVERY
    )


def fetch(syncer: Syncer) -> set[str] | None:
    """Fetch the journal, then the refs it names; the copies to check, or None
    when the journal cannot say (the caller fetches everything)."""
    before = syncer.journal_tip()
    fetching.fetch_journal(syncer.transport, syncer.remote, syncer.here.place.gitdir)
    set_aside(syncer)
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
        for ref, e in quarantine.recorded(syncer.here.place.gitdir, syncer.remote).items()
        if e.stage == "check" and e.limit != syncer.limits.max_event_bytes
    }
    if not names:
        return set()
    syncer.progress("fetching", 0, len(names))
    return fetching.fetch_moved(syncer.transport, syncer.remote, syncer.here.place.gitdir, names)


def complete(syncer: Syncer, cids: set[str] | None = None) -> None:
    """After a fetch of what moved: every other copy too, as it was accepted
    before (a push compares them with this store).  The conversations' copies
    are read as names and ids only (``_listed``: no object is looked up for each of
    100,000), or with ``cids`` only theirs, each found by name; the few notes copies
    with their type."""
    if syncer.scope is None:
        return
    notes = syncer.tracking + "notes/"
    listed = _named(syncer, cids) if cids is not None else None
    syncer.partial = listed is not None
    for name, oid in (listed if listed is not None else _listed(syncer)).items():
        rest = name[len(syncer.tracking) :]
        if name.startswith(notes) or rest in syncer.scope or rest.startswith(fetching.JOURNAL):
            continue
        if fetching.name_problem(rest) is None:
            syncer.inbound.conversations.setdefault(rest, oid)
    for row in syncer.transport.list_refs([notes]):
        rest = row.name[len(syncer.tracking) :]
        if rest in syncer.scope or fetching.name_problem(rest) is not None:
            continue
        if row.kind == "commit":
            syncer.inbound.notes.setdefault(rest[len("notes/") :], row.oid)
    syncer.scope = None


def _named(syncer: Syncer, cids: set[str]) -> dict[str, str] | None:
    """The fetched copies of ``cids``' conversations, each found by name (None: too
    many to look up one by one, or a store git must list)."""
    plain = refread.plain_gitdir(syncer.here.place.gitdir)
    if plain is None or len(cids) > SCOPED_MAX:
        return None
    spaces = ("conversations/", "archive/conversations/")
    names = [syncer.tracking + space + c for c in sorted(cids) for space in spaces]
    return refread.matching_refs(plain, names) if names else {}


def _listed(syncer: Syncer) -> dict[str, str]:
    """Every fetched copy of the remote's refs, name -> id, read as files where the
    store allows it."""
    plain = refread.plain_gitdir(syncer.here.place.gitdir)
    if plain is not None:
        return refread.list_refs(plain, [syncer.tracking])
    return {r.name: r.oid for r in syncer.transport.list_refs([syncer.tracking])}


def copies(syncer: Syncer) -> dict[str, str]:
    """The fetched copies of the remote's refs (not the journal's own), by name."""
    own = syncer.tracking + "jp/"
    return {name: oid for name, oid in _listed(syncer).items() if not name.startswith(own)}


def drift(syncer: Syncer, before: dict[str, str], since: str | None) -> set[str]:
    """After a reconcile: the remote refs whose copies it moved that no journal entry
    since ``since`` (the copy the last pull finished with) named: moves of plain git,
    an older jp.  Empty when the journal cannot tell (none
    here or there, rewritten, refused)."""
    incoming = syncer.journal_tip(journal.INCOMING)
    if since is None or incoming is None:
        return set()
    after = copies(syncer)
    moved = {n for n in before.keys() | after.keys() if before.get(n) != after.get(n)}
    if not moved:
        return set()
    named: set[str] | None = set()
    if incoming != since:
        named = journal.read(syncer.repo, incoming, since).names
    if named is None:
        return set()
    remote = {"refs/" + n[len(syncer.tracking) :] for n in moved}
    return remote - named


def drift_line(remote: str, unnamed: set[str], shown: int = 3) -> str:
    """``drift`` in one line."""
    listed = sorted(unnamed)
    names = ", ".join(listed[:shown]) + (
        f" and {len(listed) - shown} more" if len(listed) > shown else ""
    )
    n = len(listed)
    return (
        f"{n} ref{'s' if n != 1 else ''} moved on {remote} without a journal entry "
        f"(plain git or an older jp): {names}; "
        "this reconcile fetched and checked them"
    )
