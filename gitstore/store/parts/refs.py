"""A store's refs: which conversations there are, where their tips stand, moving them.

Conversations are ``refs/jp/live/<id>`` and ``refs/jp/archive/<id>``, the
active one is ``JP_HEAD`` (symbolic); several refs move together through the
journaled transaction of ``gitstore.git.refs.transaction``, each move recorded in
the operation log (``Ops.moving``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from gitstore import ids, intake
from gitstore.errors import (
    ConcurrentUpdate,
    ConversationBusy,
    ConversationNotFound,
    EnvironmentFault,
    RefBusy,
    StoreError,
)
from gitstore.fs import flock, retry
from gitstore.git import refs
from gitstore.git.refs import files, packedform, transaction
from gitstore.git.refs.transaction import ANY, RefUpdate
from gitstore.store.transaction import Transaction
from gitstore.store.types import Located

if TYPE_CHECKING:
    import pygit2

    from gitstore.git.refs import packed, quarantine
    from gitstore.git.refs.quarantine import Quarantined
    from gitstore.store.ground import Ground
    from gitstore.store.parts.ops import Ops
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # loaded by the first command that touches git objects
    # loaded by a damaged packed-refs, a quarantine listing or a sync, never by a plain read
    packed = lazy_module("gitstore.git.refs.packed")
    quarantine = lazy_module("gitstore.git.refs.quarantine")

RETRIES = 60  # tries of a move that a concurrent append keeps spoiling


class Refs:
    """The conversations' refs, ``JP_HEAD``, and the locks and holds around moving them."""

    def __init__(self, ground: Ground, ops: Ops) -> None:
        self._g = ground
        self._ops = ops
        # the tip of an id a batch of creations took, its ref not yet written (``Log.batch``)
        self._pending: Callable[[str], str | None] | None = None
        # inside a batch, the conversations' refs as read at its first look-up
        # (``files.Held``): an id in neither ref (an import's check that a folder is
        # here already, then the creation's own) is told absent with no file read,
        # one that is there is read as always.  Read again after every ref this
        # process moves (the batch's creations, a transaction, an archive); a name
        # another process takes meanwhile is refused by the creation's
        # compare-and-swap anyway.
        self._held: files.Held | None = None

    def batching(self, pending: Callable[[str], str | None] | None) -> None:
        """Inside ``Log.batch`` (``pending``: the tip an id its creations took will
        have, None when not created there), or out of it (None)."""
        self._pending, self._held = pending, None

    def list(self, archived: bool | None = False) -> builtins.list[Located]:
        """Conversations (live, archived, or both with None), in ref-name order."""
        wanted = {refs.LIVE_PREFIX: False, refs.ARCHIVE_PREFIX: True}
        if archived is not None:
            wanted = {refs.ARCHIVE_PREFIX if archived else refs.LIVE_PREFIX: archived}
        out: builtins.list[Located] = []
        for name, oid in self._g.reader.listing(tuple(wanted)).items():
            prefix = (
                refs.ARCHIVE_PREFIX if name.startswith(refs.ARCHIVE_PREFIX) else refs.LIVE_PREFIX
            )
            cid = name[len(prefix) :]
            if ids.is_valid(cid):
                out.append(Located(cid, oid, wanted[prefix]))
        out.sort(key=lambda loc: (not loc.archived, loc.cid))  # ref-name order
        return out

    def state(self) -> str | None:
        """A fingerprint of every conversation ref, cheaper than ``list`` (None: this
        layout has none): a ref moved by anyone changes it."""
        return self._g.reader.state((refs.LIVE_PREFIX, refs.ARCHIVE_PREFIX))

    def moved_since(self, old: str, new: str) -> builtins.list[str] | None:
        """The conversations whose refs may have moved between two fingerprints of
        ``state`` (a superset; each to ``locate`` again), in id order; None when only
        ``list`` can tell (``packed-refs`` was rewritten, or another layout)."""
        names = files.moved_names(old, new)
        if names is None:
            return None
        out = set()
        for name in names:
            for prefix in (refs.ARCHIVE_PREFIX, refs.LIVE_PREFIX):
                if name.startswith(prefix) and ids.is_valid(name[len(prefix) :]):
                    out.add(name[len(prefix) :])
        return sorted(out)

    def target(self, name: str) -> str | None:
        """The commit a ref points at (None if it does not exist)."""
        return self._g.reader.read(name)

    def locate(self, cid: str) -> Located | None:
        """Where ``cid`` is, and its tip; inside ``Log.batch`` a conversation created
        there but not yet flushed is located at the tip it will have (its commits are
        not readable before the flush)."""
        ids.check(cid)
        held = None
        if self._pending is not None:
            pending = self._pending(cid)
            if pending is not None:
                return Located(cid, pending, False)
            if self._held is None:
                self._held = self._g.reader.held((refs.LIVE_PREFIX, refs.ARCHIVE_PREFIX))
            held = self._held
        for archived in (False, True):
            name = refs.archived(cid) if archived else refs.live(cid)
            if held is None or not held.absent(name):
                oid = self._g.reader.read(name)
                if oid is not None:
                    return Located(cid, oid, archived)
        return None

    def moved(self) -> None:
        """This process moved or created refs: a batch's look-ups read them again."""
        self._held = None

    def exists(self, cid: str) -> bool:
        """Whether ``cid`` is a conversation here (or taken by a batch being written)."""
        return self.locate(cid) is not None

    def require(self, cid: str) -> Located:
        """``locate``, or ``ConversationNotFound``."""
        found = self.locate(cid)
        if found is None:
            gitdir = self._g.gitdir
            problem = packed.damage(gitdir)  # the ref may be in the part lost
            if problem is not None:
                raise EnvironmentFault("damaged-refs", str(packedform.path(gitdir)), problem)
            raise ConversationNotFound(cid)
        return found

    def quarantined(self) -> builtins.list[Quarantined]:
        """Refs a pull refused and kept aside under ``refs/jp/quarantine/``, with why."""
        listed = self._g.reader.listing((quarantine.ROOT,))
        return quarantine.listing(listed, self._g.gitdir)

    def acknowledge_refusals(self) -> builtins.list[tuple[str, str, quarantine.Entry]]:
        """Accept what the last pulls refused (``jp doctor --ack``): remote, ref, entry."""
        return quarantine.acknowledge(self._g.gitdir)

    def active(self) -> str | None:
        """The active conversation (``JP_HEAD``), if any."""
        named = self._g.reader.symbolic(refs.ACTIVE)
        found = refs.conversation_id(named) if named else None
        return found[0] if found else None

    def set_active(self, cid: str | None) -> None:
        """Point ``JP_HEAD`` at ``cid`` (None: no active one), waiting for a sibling's
        lock; moved by ``move`` as every ref is (journaled, the operation log told).
        A lock its writer left behind raises ``LockedRef``, else one held past the
        wait ``RefBusy``."""
        new = None if cid is None else transaction.SYMBOLIC + refs.live(cid)
        if cid is None and transaction.current(self._g.repo, refs.ACTIVE) is None:
            return  # no active one to clear
        reason = "jp: no active conversation" if cid is None else f"jp: activate {cid}"
        try:
            self.move([RefUpdate(refs.ACTIVE, ANY, new)], reason)
        except RefBusy:
            locked = self._g.locked(refs.ACTIVE)
            if locked is not None:
                raise locked from None
            raise

    def check_unlocked(self, name: str, wait: float | None = None) -> None:
        """Raise ``RefBusy`` when ``name``'s lock file stays (so moving it would fail).

        A lock a sibling holds for a moment (another jp moving ``JP_HEAD``) is
        waited for, up to ``wait`` seconds; one that outlived its writer is not.
        """
        lock = self._g.gitdir / f"{name}.lock"
        limit = transaction.WAIT_SECONDS if wait is None else wait
        for _ in retry.until(limit, transaction.POLL_SECONDS):
            if not lock.exists():
                return
            locked = self._g.locked(name)
            if locked is not None:
                raise locked
        raise RefBusy(name, str(lock))

    def move(self, updates: builtins.list[RefUpdate], reason: str) -> None:
        """Move several refs in one journaled transaction."""
        self.moved()
        try:
            intake.move(self._g.place, updates, reason, self._ops.moving, partial=(StoreError,))
        except ConcurrentUpdate:
            for u in updates:
                locked = self._g.locked(u.name)
                if locked is not None:
                    raise locked from None
            raise

    def transaction(self, reason: str) -> Transaction:
        """Named steps (advance, archive, activate...) moved together
        (``gitstore.store.transaction``)."""
        return Transaction(self, reason)

    def archive(self, cid: str, reason: str) -> None:
        self._rename(cid, True, reason)

    def unarchive(self, cid: str, reason: str) -> None:
        self._rename(cid, False, reason)

    def _rename(self, cid: str, archive: bool, reason: str) -> None:
        """Move a conversation's ref between live and archived, whatever its tip:
        a turn that appends meanwhile moves the tip, so the move is tried again on
        the new one (its events follow the conversation)."""
        for _ in retry.jittered(RETRIES):
            where = self.require(cid)
            if where.archived == archive:
                return
            src, dst = (refs.live(cid), refs.archived(cid))[:: 1 if archive else -1]
            try:
                self.move(
                    [RefUpdate(src, where.tip, None), RefUpdate(dst, None, where.tip)], reason
                )
                return
            except ConcurrentUpdate:
                if self.target(dst) is not None:
                    raise  # both names taken: not a moving tip
        raise ConcurrentUpdate(refs.live(cid))

    def delete(self, cid: str, reason: str) -> None:
        where = self.require(cid)
        self.move([RefUpdate(where.ref, where.tip, None)], reason)

    @contextmanager
    def hold(self, cid: str, wait: float = 0.0) -> Iterator[None]:
        """An advisory lock on ``cid`` that the kernel releases if the process dies."""
        with flock.held(self._g.gitdir, ids.check(cid), wait, ConversationBusy(cid)):
            yield

    @contextmanager
    def hold_named(self, name: str, wait: float, busy: Exception) -> Iterator[None]:
        """``hold`` for a lock of jp's own that names no conversation (``name``: a
        fixed word of the caller's, such as ``session-import``)."""
        with flock.held(self._g.gitdir, name, wait, busy):
            yield
