"""Deleting a conversation on a remote (`jp push --delete`).

Each of the conversation's refs there (live, archived) is deleted only if it is
still the copy just fetched (a lease): a machine that pushed to it since wins,
and nothing of it is deleted.  Nothing here deletes anything in this store, and
nothing a remote sends ever deletes a local conversation: deletion travels only
from this store to a remote, by the user's own command.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygit2

from gitstore.git import refs
from gitstore.store.core import Store
from gitstore.sync import remotes
from gitstore.sync.plan import RemoteUpdate
from gitstore.sync.pull import Syncer
from gitstore.sync.push import send
from gitstore.sync.sending import Sending


@dataclass(frozen=True)
class Deleted:
    """What the remote did: the refs it deleted, and those it refused (with git's reason)."""

    deleted: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]


def remote_has(syncer: Syncer, cid: str) -> bool:
    """Whether the remote, fetched now, holds ``cid`` (live or archived)."""
    syncer.fetch()
    syncer.complete()
    there = syncer.remote_tips().get(cid)
    return there is not None and (there.live is not None or there.archived is not None)


def delete_on_remote(sending: Sending, cid: str) -> Deleted:
    """Delete ``cid``'s refs on the remote as they were at the last fetch
    (``Syncer.sending``, after ``remote_has``)."""
    fetched = sending.inbound.conversations  # by the name after ``refs/``
    updates = [
        RemoteUpdate(name, None, fetched[name[len("refs/") :]])
        for name in (refs.live(cid), refs.archived(cid))
        if name[len("refs/") :] in fetched
    ]
    if not updates:
        return Deleted((), ())
    results = send(sending, updates, {u.ref for u in updates})
    return Deleted(
        tuple(r.ref for r in results if r.ok),
        tuple((r.ref, r.summary) for r in results if not r.ok),
    )


def remotes_holding(store: Store, cid: str) -> list[str]:
    """The remotes whose last fetched copy holds ``cid`` (live or archived)."""
    held = []
    for info in remotes.all_remotes(store.place.repo):
        prefix = remotes.tracking_prefix(info.name)
        names = (prefix + refs.live(cid)[5:], prefix + refs.archived(cid)[5:])
        if any(name in store.place.repo.references for name in names):
            held.append(info.name)
    return held


def remotes_containing(store: Store, commit: str) -> list[str]:
    """The remotes whose last fetched copies hold ``commit``: a copy whose chain has
    it (the conversation's own, or a fork's pushed from it).  A rewrite from
    ``commit`` on (``jp conversation redact``) would leave those copies as they are."""
    repo = store.place.repo
    if repo.get(commit) is None:
        return []
    target = pygit2.Oid(hex=commit)
    prefixes = {remotes.tracking_prefix(info.name): info.name for info in remotes.all_remotes(repo)}
    found: list[str] = []
    for name in repo.listall_references():
        remote = next((r for p, r in prefixes.items() if name.startswith(p)), None)
        if remote is None or remote in found:
            continue
        tip = repo.references[name].resolve().target
        if not isinstance(tip, pygit2.Oid):
            continue
        if tip == target or repo.descendant_of(tip, target):
            found.append(remote)
    return sorted(found)
