"""Writing a store: event commits (loose or packed) and compare-and-swap ref moves."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from gitstore import faults, ids, refs
from gitstore.boundary import fit_event
from gitstore.errors import (
    ConcurrentUpdate,
    ConversationExists,
    ConversationNotFound,
    RefBusy,
    RefLocked,
    StaleTip,
    StoreError,
    environment_fault,
)
from gitstore.events import Event, commits, parse_time, validate
from gitstore.events.kinds import Kind
from gitstore.events.turns import check_tool_responses
from gitstore.fs import diskfault
from gitstore.refs import create as refcreate
from gitstore.refs import transaction
from gitstore.refs.transaction import RefUpdate
from gitstore.store import maintenance, packwrite
from gitstore.store.base import PACK_AT, RETRIES
from gitstore.store.reading import Reading
from gitstore.store.streamed import Streamed
from gitstore.store.transaction import Transaction
from gitstore.store.types import EventSource

if TYPE_CHECKING:
    import pygit2

else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # loaded by the first command that touches git objects


@lru_cache(maxsize=512)
def _epoch(stamp: str) -> int:
    """The seconds of an event's time stamp (author and committer dates; neighbouring
    events share stamps, and each commit has two)."""
    return int(parse_time(stamp).timestamp())


class Writing(Reading):
    def _signature(self, name: str, event: Event) -> pygit2.Signature:
        return pygit2.Signature(name, self.identity.email, _epoch(str(event["timestamp"])), 0)

    def write_commits(
        self, events: Sequence[Event], parent: str | None, tool_names: dict[str, str] | None = None
    ) -> list[str]:
        """Write one commit per event on top of ``parent``; moves no ref.

        Many events (an import) go straight into pack files (``packwrite``), the
        same commits without a loose object each.
        """
        names = dict(tool_names or {})
        out: list[str] = []
        rows: list[tuple[str, str | None, Event]] = []
        # every event checked (and a tool result over the size limit cut) before any is written
        fitted = [self._fit(validate(e, f"event {n}")) for n, e in enumerate(events)]
        if parent is not None:
            self._commit(parent)  # a ref plain git pointed at a blob: CorruptEvent, not a crash
        if len(fitted) >= PACK_AT:
            return self._write_pairs(fitted, parent, names)
        for event, data in fitted:
            if event.get("type") == Kind.TOOL_CALL_REQUEST:
                names[str(event.get("id"))] = str(event.get("name"))
            oid = diskfault.retried(partial(self._event_commit, event, data, parent, names))
            rows.append((str(oid), parent, event))
            parent = str(oid)
            out.append(parent)
        self.cache.add(rows)
        self.maintenance.wrote(len(out))  # libgit2 never packs: git gc --auto when due
        return out

    def _event_commit(
        self, event: Event, data: bytes, parent: str | None, names: dict[str, str]
    ) -> pygit2.Oid:
        """One event's blob, tree and commit (the same ids whenever it is written)."""
        blob = self.repo.create_blob(data)
        builder = self.repo.TreeBuilder()
        builder.insert("event.json", blob, pygit2.GIT_FILEMODE_BLOB)
        tree = builder.write()
        author = self._signature(commits.author_name(event), event)
        committer = self._signature(self.identity.name, event)
        parents = [pygit2.Oid(hex=parent)] if parent else []
        message = commits.message(event, names)
        return self.repo.create_commit(None, author, committer, message, tree, parents)

    def _keep_written(
        self,
        chain: list[str],
        events: Sequence[Event],
        parent: str | None,
        tool_names: dict[str, str] | None,
    ) -> None:
        """Write ``chain`` again if git's prune removed some of it (``git gc
        --prune=now`` beside this write): the same events give the same commits."""
        for _ in range(diskfault.PRUNE_RETRIES):
            odb = self.repo.odb
            if all(pygit2.Oid(hex=oid) in odb for oid in chain):
                return
            if self.write_commits(events, parent, tool_names) != chain:
                break
        self._check_written(chain[-1])
        for oid in chain:
            self._check_written(oid)

    def _fit(self, event: Event) -> tuple[Event, bytes]:
        """``event`` and its bytes, within the size limit (``boundary.fit_event``)."""
        data = commits.blob_bytes(event)
        fitted = fit_event(event, data, self.limits)
        if fitted is None:
            return event, data
        return fitted, commits.blob_bytes(fitted)

    def write_packed(
        self, events: Iterable[Event], parent: str | None, names: dict[str, str]
    ) -> list[str]:
        """``write_commits`` for many (validated) events: into packs, nothing loose."""
        return self._write_pairs(((e, commits.blob_bytes(e)) for e in events), parent, names)

    def _write_pairs(
        self, pairs: Iterable[tuple[Event, bytes]], parent: str | None, names: dict[str, str]
    ) -> list[str]:
        """``write_packed`` of events with their ``event.json`` bytes (computed once)."""

        def sign(name: str, event: Event) -> bytes:
            sig = self._signature(name, event)
            return packwrite.signature_line(sig.raw_name, sig.raw_email, sig.time, sig.offset)

        # libgit2 rescans objects/pack when a lookup misses, so the new packs are found
        return packwrite.write(
            self.gitdir, pairs, parent, names, sign, self.identity.name, self.cache.add
        )

    def create(
        self,
        cid: str,
        events: EventSource,
        parent: str | None,
        reason: str,
        tool_names: dict[str, str] | None = None,
        packed: bool = False,
    ) -> str:
        """Publish a new conversation whose chain ends with ``events``.

        ``PACK_AT`` events or more (an import), or any number with ``packed`` (one
        of many conversations an import writes: a pack each costs far less than
        three loose files an event), are streamed into packs, read from ``events``
        as they are written and never held (``streamed``); the ref is written
        last, once every pack is complete.
        """
        ids.check(cid)
        if self.exists(cid):
            raise ConversationExists(cid)
        try:
            keep: Callable[[], None]
            if packed or len(events) >= PACK_AT:
                written = Streamed(self, events, parent, tool_names)
                tip, keep = written.tip or parent, written.keep
            else:
                listed = list(events)
                chain = self.write_commits(listed, parent, tool_names)
                tip = chain[-1] if chain else parent
                keep = partial(self._keep_written, chain, listed, parent, tool_names)
            if tip is None:
                raise ValueError("a conversation needs at least one event")
            diskfault.retried(partial(self.repo.create_blob, ids.anchor_bytes(cid)))
            faults.point("create:objects-written")
            keep()
            name = refs.live(cid)
            try:
                with self.ops.moving([RefUpdate(name, None, tip)]):
                    if not refcreate.create(self.repo, self.gitdir, name, tip, reason):
                        raise ConversationExists(cid)  # another writer took the id first
            except RefBusy:
                locked = self._locked(name)  # a lock that outlived its writer
                if locked is not None:
                    raise locked from None
                raise
            keep()  # pruned as the ref moved
            return tip
        finally:
            packwrite.release()  # the ref names the packs now (or never will)

    def append(
        self,
        cid: str,
        events: Sequence[Event],
        expected: str,
        reason: str,
        tool_names: dict[str, str] | None = None,
    ) -> str:
        """Append on top of ``expected``; raise ``StaleTip`` if the tip moved.

        A conversation archived or unarchived meanwhile (the same tip under the
        other ref) takes the events where it now is; a ref lock held by another
        process (git packing refs) is waited for briefly.
        """
        where = self.require(cid)
        if where.tip != expected:
            raise StaleTip(cid, expected, where.tip)
        if any(e.get("type") == Kind.TOOL_CALL_RESPONSE for e in events):
            turn = self.current_turn(expected)
            check_tool_responses(turn, events)
            tool_names = {
                **{
                    str(e.get("id")): str(e.get("name"))
                    for e in turn
                    if e.get("type") == Kind.TOOL_CALL_REQUEST
                },
                **(tool_names or {}),
            }
        try:
            chain = self.write_commits(events, expected, tool_names)
            if not chain:
                return expected
            faults.point("append:objects-written")
            self._keep_written(chain, events, expected, tool_names)
            self._move_tip(cid, expected, chain[-1], reason)
            self._keep_written(chain, events, expected, tool_names)  # pruned as the ref moved
        finally:
            packwrite.release()  # the ref names the packs now (or never will)

        if self.locate(cid) is None:
            raise ConversationNotFound(cid)
        return chain[-1]

    def _move_tip(self, cid: str, expected: str, new: str, reason: str) -> None:
        """Compare-and-swap ``cid``'s ref (live or archived) from ``expected`` to ``new``."""
        deadline = time.monotonic() + transaction.WAIT_SECONDS
        while True:
            where = self.require(cid)
            try:
                ref = self.repo.lookup_reference(where.ref)
                if str(ref.target) != expected:
                    raise StaleTip(cid, expected, str(ref.target))
                # libgit2 moves the ref only if it still holds the value ``ref`` was
                # read with, ``expected``: a writer in between makes this fail
                with self.ops.moving([RefUpdate(where.ref, expected, new)]):
                    ref.set_target(pygit2.Oid(hex=new), reason)
                return
            except (pygit2.GitError, OSError, KeyError) as exc:
                fault = environment_fault(exc, str(self.gitdir / where.ref))
                if fault is not None:
                    raise fault from None
                now = self.locate(cid)
                lock = self.gitdir / f"{where.ref}.lock"
                if now is None or now.tip != expected:
                    raise StaleTip(cid, expected, now.tip if now else None) from None
                if now.ref != where.ref:
                    continue  # archived or unarchived in between, same tip: move it there
                self._check_written(new)
                locked = self._locked(where.ref)
                if locked is not None:  # a lock that outlived every writer: no use waiting
                    raise locked from None
                if time.monotonic() >= deadline:  # the tip stayed: a lock held (git packing)
                    if lock.exists():
                        raise RefLocked(cid, expected, str(lock)) from None
                    raise StaleTip(cid, expected, now.tip) from exc
                time.sleep(transaction.POLL_SECONDS)

    def _check_written(self, oid: str) -> None:
        """A commit jp wrote that the object database lacks: a write the disk dropped."""
        diskfault.check_written(self.repo, self.gitdir, oid)

    def append_anyway(self, cid: str, events: Sequence[Event], reason: str) -> str:
        """Append events that do not depend on what precedes them, retrying on races."""
        for attempt in range(RETRIES):
            where = self.require(cid)
            try:
                return self.append(cid, events, where.tip, reason)
            except StaleTip:
                time.sleep(random.uniform(0, 0.002 * (1 + attempt)))
        raise ConcurrentUpdate(refs.live(cid))

    def maintain(self, force: bool = False, wait: bool = False) -> str:
        """git's maintenance (gc: pack objects and refs), when due or ``force``d.

        Runs in the background unless ``wait``; returns what ran, "" if nothing.
        """
        if not force and not maintenance.due(self.repo, self.gitdir):
            return ""
        return self.maintenance.run(force=force, wait=wait)

    def move(self, updates: list[RefUpdate], reason: str) -> None:
        half_done: RefBusy | None = None
        try:
            with self.ops.moving(updates, partial=(StoreError,)):
                try:
                    transaction.apply(self.repo, self.gitdir, updates, reason)
                except RefBusy as exc:
                    if not exc.partial:
                        raise
                    half_done = exc  # its journal finishes it: recorded as done
        except ConcurrentUpdate:
            for u in updates:
                locked = self._locked(u.name)
                if locked is not None:
                    raise locked from None
            raise
        if half_done is not None:
            raise half_done

    def transaction(self, reason: str) -> Transaction:
        """Several conversations' refs moved as one (``gitstore.store.transaction``)."""
        return Transaction(self, reason)

    def archive(self, cid: str, reason: str) -> None:
        self._rename(cid, True, reason)

    def unarchive(self, cid: str, reason: str) -> None:
        self._rename(cid, False, reason)

    def _rename(self, cid: str, archive: bool, reason: str) -> None:
        """Move a conversation's ref between live and archived, whatever its tip:
        a turn that appends meanwhile moves the tip, so the move is tried again on
        the new one (its events follow the conversation)."""
        for attempt in range(RETRIES):
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
                if self.ref_target(dst) is not None:
                    raise  # both names taken: not a moving tip
                time.sleep(random.uniform(0, 0.002 * (1 + attempt)))
        raise ConcurrentUpdate(refs.live(cid))

    def delete(self, cid: str, reason: str) -> None:
        where = self.require(cid)
        self.move([RefUpdate(where.ref, where.tip, None)], reason)
