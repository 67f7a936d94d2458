"""A conversation shared on a remote the user named (`jp conversation share --remote`).

What is shared is a chain of its own: the events the caller gives (porcelain
redacts them) written as commits from a new root, never the conversation's
ref.  On the remote it is the branch ``refs/heads/jp-shared/<id>``: ``git
clone`` of the remote fetches it, and jp's pull never does (its refspecs name
``refs/conversations``, ``refs/archive`` and two notes refs), so a share remote
that is also a sync remote keeps the copy apart: no pull brings it back as a
fork.  Here ``refs/jp/shared/<remote>/<id>`` names what was shared last: it
keeps the commits from a prune while they are sent, it is moved as an
operation (``jp undo`` takes back this record, never the remote's copy), and
it is never pushed or fetched.

The order makes a kill harmless: the commits are written, the local ref moves,
then one push sets the branch (leased on what the remote held); a share killed
before the push leaves the ref here and nothing there, and the next share sends
it.  An unshare deletes the branch (leased) before the local ref.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

from gitstore import faults
from gitstore.errors import SyncError
from gitstore.events import Event
from gitstore.git import pruned
from gitstore.git.refs import transaction
from gitstore.git.refs.transaction import RefUpdate
from gitstore.store import packwrite
from gitstore.store.core import Store
from gitstore.sync.plan import RemoteUpdate
from gitstore.sync.pull import Syncer

BRANCH = "refs/heads/jp-shared/"  # on the share remote
LOCAL = "refs/jp/shared/"  # here: <remote>/<id>


def remote_ref(cid: str) -> str:
    return BRANCH + cid


def local_ref(remote: str, cid: str) -> str:
    return f"{LOCAL}{remote}/{cid}"


@dataclass(frozen=True)
class Shared:
    """The branch a share or an unshare set on the remote: what it held before and
    holds now (None: absent); what the record here held before; ``commits`` shared
    (0 for an unshare)."""

    cid: str
    remote: str
    ref: str
    before: str | None
    now: str | None
    here: str | None
    commits: int = 0


def _there(syncer: Syncer, cid: str) -> str | None:
    return syncer.transport.ls_remote(syncer.remote).get(remote_ref(cid))


def _send(syncer: Syncer, update: RemoteUpdate) -> None:
    (result,) = syncer.transport.push(syncer.remote, [update])
    if not result.ok:
        raise SyncError(syncer.remote, f"{update.ref}: {result.summary}")


@contextmanager
def _released() -> Iterator[None]:
    """A long chain's packs let go of at the end: the ref names them then."""
    try:
        yield
    finally:
        packwrite.release()


def share_on_remote(
    store: Store, syncer: Syncer, cid: str, events: Sequence[Event], reason: str
) -> Shared:
    """Write ``events`` as a chain of their own and set the remote's branch for
    ``cid`` to it (replacing what it held; the same events give the same commits, so
    sharing again what is there sends nothing)."""
    if not events:
        raise ValueError("a share needs at least one event")
    repo, gitdir = store.place.repo, store.place.gitdir
    local = local_ref(syncer.remote, cid)
    with syncer.exclusive():
        # no gc starts between the chain's objects and the ref that names them (a
        # chain shared before and then unshared is unreachable: a prune beside may
        # be taking it as it is written again)
        with pruned.shielded(gitdir), _released():
            chain = store.log.write_commits(events, None)
            tip = chain[-1]
            old = transaction.current(repo, local)
            if old != tip:
                store.refs.move([RefUpdate(local, old, tip)], reason)
            # what a prune beside took as the ref moved is written again (the same
            # events, the same commits), as a rewrite does (``Log.rewrite``)
            keep = partial(store.log._keep_written, chain, events, None, None)  # noqa: SLF001
            pruned.after_move(gitdir, keep)
        faults.point("share:before-push")
        there = _there(syncer, cid)
        if there != tip:
            try:
                _send(syncer, RemoteUpdate(remote_ref(cid), tip, there))
            except SyncError:
                if old != tip:  # nothing was shared: the record here goes back too
                    store.refs.move([RefUpdate(local, tip, old)], reason)
                raise
    return Shared(cid, syncer.remote, remote_ref(cid), there, tip, old, len(chain))


def unshare_on_remote(store: Store, syncer: Syncer, cid: str, reason: str) -> Shared:
    """Delete the remote's branch for ``cid`` (only if it still holds what was just
    listed), then the record here; ``before`` None and ``now`` None: it was not shared."""
    repo = store.place.repo
    local = local_ref(syncer.remote, cid)
    with syncer.exclusive():
        there = _there(syncer, cid)
        if there is not None:
            _send(syncer, RemoteUpdate(remote_ref(cid), None, there))
        faults.point("unshare:remote-deleted")
        old = transaction.current(repo, local)
        if old is not None:
            store.refs.move([RefUpdate(local, old, None)], reason)
    return Shared(cid, syncer.remote, remote_ref(cid), there, None, old)


def shared_record(ref: str) -> tuple[str, str] | None:
    """(remote, id) of a ref that records a share here, else None."""
    if not ref.startswith(LOCAL):
        return None
    remote, _, cid = ref[len(LOCAL) :].rpartition("/")
    return (remote, cid) if remote and cid else None
