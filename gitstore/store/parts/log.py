"""A store's log: the conversations' event chains, read (``chains.py``) and written.

An event is one commit (its ``event.json``, the same ids whenever it is
written); a conversation's ref moves by compare-and-swap on the tip it was
read at, or raises ``StaleTip``.  Many events at once (an import) go into
packs (``packwrite``, ``streamed``), never one loose object each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

from gitstore import faults, ids, intake
from gitstore.errors import (
    ConcurrentUpdate,
    ConversationExists,
    ConversationNotFound,
    RefBusy,
    RefLocked,
    StaleTip,
    environment_fault,
)
from gitstore.events import Event, commits
from gitstore.events.kinds import Kind
from gitstore.events.turns import check_tool_responses
from gitstore.fs import retry
from gitstore.git import objects, pruned, refs
from gitstore.git.refs import transaction
from gitstore.git.refs.transaction import RefUpdate
from gitstore.store.parts.chains import Chains
from gitstore.store.types import EventSource

if TYPE_CHECKING:
    import pygit2

    from gitstore.store import packwrite
    from gitstore.store.batch import Batch
    from gitstore.store.ground import Ground
    from gitstore.store.parts.ops import Ops
    from gitstore.store.parts.refs import Refs
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # loaded by the first command that touches git objects
    packwrite = lazy_module("gitstore.store.packwrite")  # loaded by the first write

PACK_AT = 1000  # events in one write from which they go into a pack
RETRIES = 60  # tries of an append that concurrent appends keep getting ahead of


class Log(Chains):
    """The event chains: one commit per event, appended by compare-and-swap."""

    def __init__(self, ground: Ground, refs: Refs, ops: Ops) -> None:
        super().__init__(ground, refs)
        self._ops = ops
        self._batch: Batch | None = None

    @contextmanager
    def batch(self) -> Iterator[Batch]:
        """Inside, every ``create(..., packed=True)`` goes into one set of packs and
        the refs are created together when the block ends (``Batch.flush``, which a
        caller that must read them sooner calls itself); an error drops what was not
        flushed.  Nested, the outer batch holds."""
        if self._batch is not None:
            yield self._batch
            return
        # lazy: only a command that creates many conversations batches them
        from gitstore.store.batch import Batch

        refs = self._refs
        batch = self._batch = Batch(self._g, self._ops, self._create_now, refs.exists, refs.moved)
        refs.batching(batch.pending_tip)
        try:
            yield batch
            batch.flush()
        finally:
            self._batch = None
            refs.batching(None)
            batch.close()

    @contextmanager
    def unbatched(self) -> Iterator[None]:
        """Inside an open ``batch``: flush it, and write each creation in the block at
        once (a caller that reads back what it creates: a rewind's branches)."""
        batch = self._batch
        if batch is None:
            yield
            return
        batch.flush()
        self._batch = None
        self._refs.batching(None)
        try:
            yield
        finally:
            self._batch = batch
            self._refs.batching(batch.pending_tip)

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
        fitted = list(intake.checked(events, self._g.limits))
        if parent is not None:
            self._g.commit(parent)  # a ref plain git pointed at a blob: CorruptEvent, not a crash
        if len(fitted) >= PACK_AT:
            return self._write_pairs(fitted, parent, names)
        for event, data in fitted:
            if event.get("type") == Kind.TOOL_CALL_REQUEST:
                names[str(event.get("id"))] = str(event.get("name"))
            put = partial(self._event_commit, event, data, parent, names)
            oid = pruned.make(put, objects.folder(self._g.gitdir))
            rows.append((str(oid), parent, event))
            parent = str(oid)
            out.append(parent)
        self._g.cache.add(rows)
        self._g.maintenance.wrote(len(out))  # libgit2 never packs: git gc --auto when due
        return out

    def _event_commit(
        self, event: Event, data: bytes, parent: str | None, names: dict[str, str]
    ) -> pygit2.Oid:
        """One event's blob, tree and commit (the same ids whenever it is written)."""
        g = self._g
        author, committer = g.who(commits.author_name(event), event), g.who(g.identity.name, event)
        blob, tree, commit = commits.objects(event, parent, names, author, committer, data)
        odb = g.repo.odb
        odb.write(pygit2.GIT_OBJECT_BLOB, blob)
        odb.write(pygit2.GIT_OBJECT_TREE, tree)
        return odb.write(pygit2.GIT_OBJECT_COMMIT, commit)

    def _keep_written(
        self,
        chain: list[str],
        events: Sequence[Event],
        parent: str | None,
        tool_names: dict[str, str] | None,
    ) -> None:
        """Write ``chain`` again, once, if git's prune removed some of it (``git gc
        --prune=now`` beside this write): the same events give the same commits.
        Still gone after that: named (the disk's fault when it is, else the prune)."""
        folder = objects.folder(self._g.gitdir)
        for attempt in range(pruned.ATTEMPTS):
            fresh = pygit2.Odb(str(folder))  # no cache: looked for on disk
            if all(pygit2.Oid(hex=oid) in fresh for oid in self._closure(chain)):
                return
            if attempt == pruned.ATTEMPTS - 1:
                break
            if self.write_commits(events, parent, tool_names) != chain:
                break
        for oid in reversed(chain):
            self._g.check_written(oid)
        raise pruned.pruned(folder)

    def _closure(self, chain: list[str]) -> list[str]:
        """The commits of ``chain``, their trees and what those hold (not their parents)."""
        repo, out = self._g.repo, []
        for oid in chain:
            out.append(oid)
            try:
                trees = [repo[oid].peel(pygit2.Tree)]
            except (KeyError, ValueError, pygit2.GitError):
                continue  # gone: looked for, not found, and the chain written again
            while trees:
                tree = trees.pop()
                out.append(str(tree.id))
                for entry in tree:
                    out.append(str(entry.id))
                    if entry.type_str == "tree":
                        with contextlib.suppress(KeyError, ValueError, pygit2.GitError):
                            trees.append(repo[entry.id].peel(pygit2.Tree))
        return out

    def write_packed(
        self, events: Iterable[Event], parent: str | None, names: dict[str, str]
    ) -> list[str]:
        """``write_commits`` for many (validated) events: into packs, nothing loose."""
        return self._write_pairs(((e, commits.blob_bytes(e)) for e in events), parent, names)

    def _write_pairs(
        self, pairs: Iterable[tuple[Event, bytes]], parent: str | None, names: dict[str, str]
    ) -> list[str]:
        """``write_packed`` of events with their ``event.json`` bytes (computed once)."""
        g = self._g
        # libgit2 rescans objects/pack when a lookup misses, so the new packs are found
        return packwrite.write(g.gitdir, pairs, parent, names, g.who, g.identity.name, g.cache.add)

    def create(
        self,
        cid: str,
        events: EventSource,
        parent: str | None,
        reason: str,
        tool_names: dict[str, str] | None = None,
        packed: bool = False,
        remake: Callable[[str], EventSource] | None = None,
    ) -> str:
        """Publish a new conversation whose chain ends with ``events``.

        Inside ``batch`` a ``packed`` one is only written into the batch's packs,
        its ref created when the batch is flushed; should another writer take its
        id first, ``remake(new id)`` gives its events under a fresh one
        (``Batch.renamed``), else the flush raises ``ConversationExists``.

        ``PACK_AT`` events or more (an import), or any number with ``packed`` (one
        of many conversations an import writes: a pack each costs far less than
        three loose files an event), are streamed into packs, read from ``events``
        as they are written and never held (``streamed``); the ref is written
        last, once every pack is complete.
        """
        ids.check(cid)
        if self._refs.exists(cid):
            raise ConversationExists(cid)
        if packed and self._batch is not None:
            return self._batch.add(cid, events, parent, reason, tool_names, remake)
        return self._create_now(cid, events, parent, reason, tool_names, packed)

    def _create_now(
        self,
        cid: str,
        events: EventSource,
        parent: str | None,
        reason: str,
        tool_names: dict[str, str] | None = None,
        packed: bool = True,
    ) -> str:
        """``create`` of one conversation, its ref written before it returns."""
        try:
            hold: Callable[[], None]
            if packed or len(events) >= PACK_AT:
                # lazy: start-up; the streamed writer loads with the first bulk write
                from gitstore.store.streamed import Streamed

                written = Streamed(self._g, events, parent, tool_names)
                tip, hold = written.tip or parent, written.keep
            else:
                listed = list(events)
                chain = self.write_commits(listed, parent, tool_names)
                tip = chain[-1] if chain else parent
                hold = partial(self._keep_written, chain, listed, parent, tool_names)
            if tip is None:
                raise ValueError("a conversation needs at least one event")
            pruned.write(partial(self._g.repo.create_blob, ids.anchor_bytes(cid)))
            faults.point("create:objects-written")
            hold()
            name = refs.live(cid)
            try:
                created = [RefUpdate(name, None, tip)]
                if not intake.move(self._g.place, created, reason, self._ops.moving, atomic=False):
                    raise ConversationExists(cid)  # another writer took the id first
            except RefBusy:
                locked = self._g.locked(name)  # a lock that outlived its writer
                if locked is not None:
                    raise locked from None
                raise
            pruned.after_move(self._g.gitdir, hold)  # what a prune beside took as the ref moved
            return tip
        finally:
            packwrite.release()  # the ref names the packs now (or never will)
            self._refs.moved()  # inside a batch (an id another writer took): looked up again

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
        where = self._refs.require(cid)
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
            keep = partial(self._keep_written, chain, events, expected, tool_names)
            pruned.after_move(self._g.gitdir, keep)  # what a prune beside took as the ref moved
        finally:
            packwrite.release()  # the ref names the packs now (or never will)

        if self._refs.locate(cid) is None:
            raise ConversationNotFound(cid)
        return chain[-1]

    def rewrite(
        self,
        cid: str,
        events: Sequence[Event],
        parent: str | None,
        expected: str,
        reason: str,
        tool_names: dict[str, str] | None = None,
    ) -> str:
        """Write ``events`` on ``parent`` (an ancestor of the tip, or None: a new root)
        and move ``cid``'s ref from ``expected`` to their last commit (``StaleTip`` if
        it moved): the chain after ``parent`` replaced (``jp conversation redact``).
        The commits exist before the ref moves (beside a prune: ``git/pruned.py``)."""
        if not events:
            raise ValueError("a rewrite needs at least one event")
        try:
            chain = self.write_commits(events, parent, tool_names)
            faults.point("rewrite:objects-written")
            self._keep_written(chain, events, parent, tool_names)
            self._move_tip(cid, expected, chain[-1], reason)
            keep = partial(self._keep_written, chain, events, parent, tool_names)
            pruned.after_move(self._g.gitdir, keep)  # what a prune beside took as the ref moved
        finally:
            packwrite.release()  # the ref names the packs now (or never will)
        return chain[-1]

    def _move_tip(self, cid: str, expected: str, new: str, reason: str) -> None:
        """Compare-and-swap ``cid``'s ref (live or archived) from ``expected`` to ``new``."""
        for wait in retry.until(transaction.WAIT_SECONDS, transaction.POLL_SECONDS):
            where = self._refs.require(cid)
            try:
                ref = self._g.repo.lookup_reference(where.ref)
                if str(ref.target) != expected:
                    raise StaleTip(cid, expected, str(ref.target))
                # libgit2 moves the ref only if it still holds the value ``ref`` was
                # read with, ``expected``: a writer in between makes this fail
                moved = [RefUpdate(where.ref, expected, new)]
                intake.move(self._g.place, moved, reason, self._ops.moving, wait=0)  # waited here
                return
            except (pygit2.GitError, OSError, KeyError, ConcurrentUpdate, RefBusy) as exc:
                fault = environment_fault(exc, str(self._g.gitdir / where.ref))
                if fault is not None:
                    raise fault from None
                now = self._refs.locate(cid)
                lock = self._g.gitdir / f"{where.ref}.lock"
                if now is None or now.tip != expected:
                    raise StaleTip(cid, expected, now.tip if now else None) from None
                if now.ref != where.ref:
                    continue  # archived or unarchived in between, same tip: move it there
                self._g.check_written(new)
                locked = self._g.locked(where.ref)
                if locked is not None:  # a lock that outlived every writer: no use waiting
                    raise locked from None
                if wait.last:  # the tip stayed: a lock held (git packing)
                    if lock.exists():
                        raise RefLocked(cid, expected, str(lock)) from None
                    raise StaleTip(cid, expected, now.tip) from exc
        # renamed (archived, unarchived) as the time ran out: the caller reads it again
        raise StaleTip(cid, expected, expected)

    def append_anyway(self, cid: str, events: Sequence[Event], reason: str) -> str:
        """Append events that do not depend on what precedes them, retrying on races."""
        for _ in retry.jittered(RETRIES):
            where = self._refs.require(cid)
            try:
                return self.append(cid, events, where.tip, reason)
            except StaleTip:
                pass
        raise ConcurrentUpdate(refs.live(cid))
