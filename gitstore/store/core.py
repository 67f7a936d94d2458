"""The store: conversations as chains of event commits under refs.

Every write is a compare-and-swap on one ref, or a journaled transaction
(``transaction.py``) when several refs move together.  Nothing here prints,
reads the environment or knows about models and commands.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore import faults, ids, refs
from gitstore.boundary import Limits, fit_event, stored_event_problem
from gitstore.cache.db import Cache
from gitstore.cache.facts import ChainFacts, Facts, segment_facts
from gitstore.cache.view import ChainView, Segment
from gitstore.errors import (
    ConcurrentUpdate,
    ConversationBusy,
    ConversationExists,
    ConversationNotFound,
    CorruptEvent,
    LockedRef,
    RefBusy,
    RefLocked,
    StaleTip,
    StoreError,
    environment_fault,
)
from gitstore.events import Event, commits, parse_time, validate
from gitstore.events.turns import check_tool_responses
from gitstore.refs import files as refread
from gitstore.refs import transaction
from gitstore.refs.transaction import ANY, RefUpdate
from gitstore.store import diskfault, flock, maintenance, notes, packwrite
from gitstore.store import format as storeformat
from gitstore.store.repo import machine_id, notes_refs, open_repo
from gitstore.store.transaction import Transaction
from gitstore.store.types import Conversation, Identity, Located
from gitstore.sync import quarantine
from gitstore.sync.quarantine import Quarantined

if TYPE_CHECKING:
    import pygit2

    from gitstore.oplog.model import Op
    from gitstore.oplog.recorder import Recorder
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # loaded by the first command that touches git objects

RETRIES = 60
OPLOG_RETENTION = 90 * 86400.0  # seconds the operation log keeps an operation, by default
PACK_AT = 1000  # events in one write from which they go into a pack


class Store:
    """A store; libgit2 is opened only when a command needs more than refs and the cache.

    Refs of a plain git directory are read as files (``refread``), so a
    command that finds what it reads in the cache never loads libgit2.
    """

    def __init__(
        self,
        path: Path,
        identity: Identity | None = None,
        limits: Limits | Callable[[], Limits] | None = None,
        repair: bool = True,
    ) -> None:
        self.path = path
        self.identity = identity or Identity()
        self._limits = limits
        self._repo: pygit2.Repository | None = None
        plain = refread.plain_gitdir(path)
        if plain is None:  # a worktree, a .git file, reftable..: libgit2 decides at once
            self._repo = open_repo(path)
            plain = None
        self._plain = plain
        self.gitdir = plain if plain is not None else Path(self.repo.path)
        self.format = storeformat.read(self.gitdir, lambda: self.repo)
        storeformat.check(path, self.format)  # before anything is read or written
        self.cache = Cache(self.gitdir)
        self._maintenance: maintenance.Maintenance | None = None
        self._machine: str | None = None
        self._notes_refs: refs.NotesRefs | None = None
        self._ops: Recorder | None = None  # the operation log's recorder, made on first use
        self._begun: tuple[str, float] | None = None  # the command line, when it began
        self.oplog_retention: Callable[[], float] = lambda: OPLOG_RETENTION
        if repair:
            self.repair()

    def repair(self) -> None:
        """Finish what killed commands left: journaled ref updates, then their operations."""
        if transaction.pending(self.gitdir):
            transaction.repair(self.repo, self.gitdir)
        if os.path.isdir(packwrite.folder(self.gitdir)):  # a bulk writer was killed
            packwrite.sweep(self.gitdir)
        if _any_file(self.gitdir / "jp" / "oplog"):  # one listing; the module only then
            from gitstore.oplog import recorder as oprecord

            if oprecord.pending(self.gitdir) and not transaction.pending(self.gitdir):
                oprecord.recover(lambda: self.repo, self.gitdir, self._notes_signature)

    @property
    def ops(self) -> Recorder:
        """The recorder of this process's operation (``begin_operation`` starts it)."""
        if self._ops is None:
            from gitstore.oplog.recorder import Recorder

            self._ops = Recorder(self.gitdir, lambda: self.repo, self._first_write)
            if self._begun is not None:
                self._ops.begin(*self._begun)
        return self._ops

    def _first_write(self) -> None:
        """Record the format version in a store that predates it (best effort: a store
        whose config cannot be written fails the write itself, with its own message)."""
        if self.format is None or self.format < storeformat.FORMAT:
            try:
                storeformat.write(self.repo)
            except (pygit2.GitError, OSError):
                return
            self.format = storeformat.FORMAT

    # -- the operation log -----------------------------------------------------------

    def begin_operation(self, command: str) -> None:
        """Record every ref this process moves from now on as one operation, ``command``.

        The recorder is made only when something moves, so a read command pays nothing.
        """
        if self._ops is None:
            self._begun = (command, time.time())
        else:
            self._ops.begin(command)

    def end_operation(self) -> Op | None:
        """Write the operation begun (if it moved anything); trims the log when due."""
        self._begun = None
        if self._ops is None:
            return None
        op = self._ops.end(self._notes_signature(), self.active)
        if op is not None:
            maintenance.trim_oplog_when_due(self.repo, self.gitdir, self.oplog_retention, op)
        return op

    @contextmanager
    def operation(self, command: str) -> Iterator[Recorder]:
        """``begin_operation`` .. ``end_operation`` around a block."""
        self.begin_operation(command)
        try:
            yield self.ops
        finally:
            self.end_operation()

    def operations(self, limit: int | None = None) -> list[Op]:
        """The operation log, newest first (at most ``limit``)."""
        from gitstore.oplog import log

        return log.ops(self.repo, limit)

    def _locked(self, name: str) -> LockedRef | None:
        """The error for ``name`` when its lock file outlived its writer."""
        lock = self.gitdir / f"{name}.lock"
        age = flock.ref_lock_age(lock)
        if age is None or age < flock.REF_LOCK_STALE:
            return None
        return LockedRef(name, str(lock), age)

    @property
    def repo(self) -> pygit2.Repository:
        if self._repo is None:
            self._repo = open_repo(self.path)
        return self._repo

    @property
    def limits(self) -> Limits:
        """Size limits (``boundary.Limits``): given, or asked for on first use."""
        if self._limits is None:
            self._limits = Limits()
        elif not isinstance(self._limits, Limits):
            self._limits = self._limits()
        return self._limits

    def quarantined(self) -> list[Quarantined]:
        """Refs a pull refused and kept aside under ``refs/jp/quarantine/``, with why."""
        root = quarantine.ROOT
        if self._plain is not None:
            found = refread.list_refs(self._plain, [root])
        else:
            found = {
                r.name: str(r.target)
                for r in self.repo.references.iterator()
                if r.name.startswith(root) and isinstance(r.target, pygit2.Oid)
            }
        return quarantine.listing(found, self.gitdir)

    @property
    def maintenance(self) -> maintenance.Maintenance:
        if self._maintenance is None:
            self._maintenance = maintenance.Maintenance(
                self.repo, self.gitdir, lambda: self.oplog_retention()
            )
        return self._maintenance

    @property
    def machine(self) -> str:
        """This machine's id in metadata lines (``jp.machine`` in the store's config)."""
        if self._machine is None:
            self._machine = machine_id(self.repo)
        return self._machine

    @property
    def config_file(self) -> Path:
        """The store's own layer of jp's configuration (local, never synced)."""
        return self.gitdir / "jp" / "config.toml"

    @property
    def notes_refs(self) -> refs.NotesRefs:
        """This store's notes refs (``refs/notes/jp/...`` in a project's repository)."""
        if self._notes_refs is None:
            self._notes_refs = notes_refs(self.gitdir)
        return self._notes_refs

    # -- reading refs ---------------------------------------------------------

    def refs(self, archived: bool | None = False) -> list[Located]:
        """Conversations (live, archived, or both with None), in ref-name order."""
        wanted = {refs.LIVE_PREFIX: False, refs.ARCHIVE_PREFIX: True}
        if archived is not None:
            wanted = {refs.ARCHIVE_PREFIX if archived else refs.LIVE_PREFIX: archived}
        starts = tuple(wanted)
        out: list[Located] = []
        if self._plain is not None:
            for name, oid in refread.list_refs(self._plain, starts).items():
                prefix = (
                    refs.ARCHIVE_PREFIX
                    if name.startswith(refs.ARCHIVE_PREFIX)
                    else refs.LIVE_PREFIX
                )
                cid = name[len(prefix) :]
                if ids.is_valid(cid):
                    out.append(Located(cid, oid, wanted[prefix]))
            out.sort(key=lambda loc: (not loc.archived, loc.cid))  # ref-name order
            return out
        # one pass over the refdb: a lookup per name costs a stat per loose ref
        for ref in self.repo.references.iterator():
            name = ref.name
            if not name.startswith(starts):
                continue
            prefix = (
                refs.ARCHIVE_PREFIX if name.startswith(refs.ARCHIVE_PREFIX) else refs.LIVE_PREFIX
            )
            cid = name[len(prefix) :]
            target = ref.target
            if isinstance(target, pygit2.Oid) and ids.is_valid(cid):
                out.append(Located(cid, str(target), wanted[prefix]))
        out.sort(key=lambda loc: (not loc.archived, loc.cid))  # ref-name order
        return out

    def ref_target(self, name: str) -> str | None:
        """The commit a ref points at (None if it does not exist)."""
        if self._plain is not None:
            return refread.read_ref(self._plain, name)
        try:
            return str(self.repo.references[name].target)
        except (KeyError, pygit2.InvalidSpecError):
            return None

    def locate(self, cid: str) -> Located | None:
        ids.check(cid)
        for archived in (False, True):
            name = refs.archived(cid) if archived else refs.live(cid)
            if self._plain is not None:
                oid = refread.read_ref(self._plain, name)
                if oid is not None:
                    return Located(cid, oid, archived)
                continue
            try:
                target = self.repo.references[name].target
            except KeyError:
                continue
            return Located(cid, str(target), archived)
        return None

    def exists(self, cid: str) -> bool:
        return self.locate(cid) is not None

    def require(self, cid: str) -> Located:
        found = self.locate(cid)
        if found is None:
            raise ConversationNotFound(cid)
        return found

    # -- reading events ---------------------------------------------------------

    def load(self, cid: str) -> Conversation:
        where = self.require(cid)
        try:
            events, chain = self.read_chain(where.tip)
        except CorruptEvent as exc:
            raise CorruptEvent(exc.commit, exc.reason, cid) from None
        return Conversation(cid, where.tip, where.archived, events, chain)

    def read_chain(self, tip: str) -> tuple[list[Event], list[str]]:
        """Events from the root to ``tip`` and their commit ids."""
        found = self.cache.events(tip)
        if found is None:
            rows, complete = self.cache.chain(tip)
            start = rows[-1][1] if rows else tip
            if not complete and start is not None:
                self._fill_cache(start)
            found = self.cache.events(tip)
        if found is None:  # cache unusable: read git directly
            return self.read_run(tip)
        return found

    def view(self, cid: str) -> tuple[Located, ChainView]:
        """A conversation whose events are read only where they are asked for.

        Its facts (length, turns, internal events) come from the cache's
        segments without reading the events below the last one; an event is
        read with its segment.  Without a usable cache it is the whole chain.
        """
        where = self.require(cid)
        try:
            return where, self.view_chain(where.tip)
        except CorruptEvent as exc:
            raise CorruptEvent(exc.commit, exc.reason, cid) from None

    def view_chain(self, tip: str) -> ChainView:
        found = self.cache.parts(tip)
        if found is None:
            events, commits = self.read_chain(tip)  # fills the cache; reads git if it cannot
            found = self.cache.parts(tip)
            if found is None:  # no usable cache: the chain as read
                return ChainView.of_list(events, commits)
        segments, tail_facts = found.segments, found.tail_facts
        source = _Segments(self)

        def read_facts(k: int) -> Facts:
            if k == len(segments):
                return tail_facts
            got = self.cache.segment_facts(segments[k])
            return got if got is not None else segment_facts(source.whole(segments[k])[0])

        return ChainView(
            ChainFacts(found.runs, read_facts),
            segments,
            (found.tail_events, found.tail_ids),
            source,
        )

    def read_run(self, last: str, count: int | None = None) -> tuple[list[Event], list[str]]:
        """The ``count`` events (all: None) ending at commit ``last`` and their ids, from git."""
        events: list[Event] = []
        chain: list[str] = []
        commit = self._commit(last)
        while count is None or len(events) < count:
            events.append(json.loads(self._event_bytes(commit)))
            chain.append(str(commit.id))
            if not commit.parent_ids:
                break
            commit = self._commit(commit.parent_ids[0])
        events.reverse()
        chain.reverse()
        return events, chain

    def prefetch(self, tips: Sequence[str]) -> None:
        """Cache the chains of many tips at once (one cache transaction, not one per tip).

        Each chain is read from git down to the first commit the cache already
        has or this walk has just read (forks share their history).  A chain the
        cache holds only in part is left to ``read_chain``, which checks it.
        """
        seen = self.cache.known(tips)
        entries: list[tuple[str, str | None, str]] = []
        for tip in tips:
            oid: str | None = tip
            while oid is not None and oid not in seen:
                try:
                    commit = self._commit(oid)
                    data = self._event_bytes(commit)
                except (CorruptEvent, KeyError, ValueError):
                    break  # read_chain reports it for this conversation alone
                parent = str(commit.parent_ids[0]) if commit.parent_ids else None
                entries.append((oid, parent, data.decode()))
                seen.add(oid)
                if parent is not None and parent not in seen and self.cache.known([parent]):
                    seen.add(parent)
                oid = parent
            if len(entries) >= 5000:
                self.cache.add(entries)
                entries = []
        self.cache.add(entries)

    def _commit(self, oid: str | pygit2.Oid) -> pygit2.Commit:
        try:
            found = self.repo[oid]
        except (KeyError, ValueError):
            raise CorruptEvent(str(oid), "the object is missing from the store") from None
        if found.type_str != "commit":
            raise CorruptEvent(str(oid), f"it is a {found.type_str}, not a commit")
        return found.peel(pygit2.Commit)

    def _event_bytes(self, commit: pygit2.Commit) -> bytes:
        try:
            blob = self.repo[commit.tree["event.json"].id]
        except (KeyError, ValueError, pygit2.GitError):
            raise CorruptEvent(str(commit.id), "its tree has no event.json") from None
        if not isinstance(blob, pygit2.Blob):
            raise CorruptEvent(str(commit.id), "event.json is not a file")
        data = bytes(blob.data)
        problem = stored_event_problem(data)
        if problem is not None:
            raise CorruptEvent(str(commit.id), problem)
        return data

    def current_turn(self, tip: str) -> list[Event]:
        """The events since the last ``turn_start`` at ``tip`` (a short walk back)."""
        out: list[Event] = []
        commit = self._commit(tip)
        while True:
            event = json.loads(self._event_bytes(commit))
            out.append(event)
            if event.get("type") == "turn_start" or not commit.parent_ids:
                break
            commit = self._commit(commit.parent_ids[0])
        out.reverse()
        return out

    def _fill_cache(self, start: str) -> None:
        entries: list[tuple[str, str | None, str]] = []
        oid: str | None = start
        while oid is not None:
            if self.cache.chain(oid)[1] and entries:
                break
            commit = self._commit(oid)
            parent = str(commit.parent_ids[0]) if commit.parent_ids else None
            entries.append((oid, parent, self._event_bytes(commit).decode()))
            oid = parent
            if len(entries) % 2000 == 0:
                self.cache.add(entries)
                entries = []
        self.cache.add(entries)

    def event_at(self, commit: str) -> Event:
        return dict(json.loads(self._event_bytes(self._commit(commit))))

    # -- writing events -----------------------------------------------------------

    def _signature(self, name: str, event: Event) -> pygit2.Signature:
        moment = parse_time(str(event["timestamp"]))
        return pygit2.Signature(name, self.identity.email, int(moment.timestamp()), 0)

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
            return self.write_packed([e for e, _ in fitted], parent, names)
        for event, data in fitted:
            if event.get("type") == "tool_call_request":
                names[str(event.get("id"))] = str(event.get("name"))
            blob = self.repo.create_blob(data)
            builder = self.repo.TreeBuilder()
            builder.insert("event.json", blob, pygit2.GIT_FILEMODE_BLOB)
            tree = builder.write()
            author = self._signature(commits.author_name(event), event)
            committer = self._signature(self.identity.name, event)
            parents = [pygit2.Oid(hex=parent)] if parent else []
            oid = self.repo.create_commit(
                None, author, committer, commits.message(event, names), tree, parents
            )
            rows.append((str(oid), parent, event))
            parent = str(oid)
            out.append(parent)
        self.cache.add(rows)
        self.maintenance.wrote(len(out))  # libgit2 never packs: git gc --auto when due
        return out

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

        def sign(name: str, event: Event) -> bytes:
            sig = self._signature(name, event)
            return packwrite.signature_line(sig.raw_name, sig.raw_email, sig.time, sig.offset)

        # libgit2 rescans objects/pack when a lookup misses, so the new packs are found
        return packwrite.write(
            self.gitdir, events, parent, names, sign, self.identity.name, self.cache.add
        )

    def create(
        self,
        cid: str,
        events: Sequence[Event],
        parent: str | None,
        reason: str,
        tool_names: dict[str, str] | None = None,
    ) -> str:
        """Publish a new conversation whose chain ends with ``events``."""
        ids.check(cid)
        if self.exists(cid):
            raise ConversationExists(cid)
        chain = self.write_commits(events, parent, tool_names)
        tip = chain[-1] if chain else parent
        if tip is None:
            raise ValueError("a conversation needs at least one event")
        self.repo.create_blob(ids.anchor_bytes(cid))
        faults.point("create:objects-written")
        try:
            with self.ops.moving([RefUpdate(refs.live(cid), None, tip)]):
                self.repo.create_reference_direct(refs.live(cid), tip, False, message=reason)
        except pygit2.AlreadyExistsError:
            raise ConversationExists(cid) from None
        except (pygit2.GitError, OSError):
            if (self.gitdir / f"{refs.live(cid)}.lock").exists() or self.exists(cid):
                raise ConversationExists(cid) from None  # another writer is creating it
            raise
        return tip

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
        if any(e.get("type") == "tool_call_response" for e in events):
            turn = self.current_turn(expected)
            check_tool_responses(turn, events)
            tool_names = {
                **{
                    str(e.get("id")): str(e.get("name"))
                    for e in turn
                    if e.get("type") == "tool_call_request"
                },
                **(tool_names or {}),
            }
        chain = self.write_commits(events, expected, tool_names)
        if not chain:
            return expected
        faults.point("append:objects-written")
        self._move_tip(cid, expected, chain[-1], reason)

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

    # -- moving refs ----------------------------------------------------------------

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

    # -- the active conversation (local only) -------------------------------------------

    def active(self) -> str | None:
        if self._plain is not None:
            named = refread.symbolic_target(self._plain, refs.ACTIVE)
            found = refs.conversation_id(named) if named else None
            return found[0] if found else None
        try:
            ref = self.repo.lookup_reference(refs.ACTIVE)
        except (KeyError, pygit2.InvalidSpecError):
            return None
        target = str(ref.target)
        parsed = refs.conversation_id(target)
        return parsed[0] if parsed else None

    def check_unlocked(self, name: str) -> None:
        """Raise ``RefBusy`` when ``name``'s lock file exists (so moving it would fail)."""
        lock = self.gitdir / f"{name}.lock"
        if lock.exists():
            raise RefBusy(name, str(lock))

    def set_active(self, cid: str | None) -> None:
        new = None if cid is None else transaction.SYMBOLIC + refs.live(cid)
        if cid is None and transaction.current(self.repo, refs.ACTIVE) is None:
            return
        try:
            with self.ops.moving([RefUpdate(refs.ACTIVE, ANY, new)]):
                if cid is None:
                    self.repo.references.delete(refs.ACTIVE)
                else:
                    self.repo.create_reference_symbolic(refs.ACTIVE, refs.live(cid), True)
        except (pygit2.GitError, OSError) as exc:
            locked = self._locked(refs.ACTIVE)
            if locked is not None:
                raise locked from None
            self.check_unlocked(refs.ACTIVE)
            raise environment_fault(exc, str(self.gitdir)) or exc from None

    # -- notes --------------------------------------------------------------------

    def anchor(self, cid: str) -> str:
        """The id of the blob ``jp-conversation <id>``, as ``git hash-object`` computes it."""
        data = ids.anchor_bytes(cid)
        return _sha1_hex(b"blob %d\0" % len(data) + data)

    def _notes_signature(self) -> pygit2.Signature:
        return pygit2.Signature(self.identity.name, self.identity.email)

    def note(self, ref: str, cid: str) -> str | None:
        """The note on ``cid``'s anchor, cached under the notes ref's commit."""
        anchor = self.anchor(cid)
        tip = self.ref_target(ref)
        if tip is None:
            return None
        key = f"note {ref} {anchor}"
        found = self.cache.derived(key, tip)
        if isinstance(found, dict):
            text = found.get("text")
            return text if isinstance(text, str) else None
        text = notes.read(self.repo, ref, anchor)
        if self.ref_target(ref) == tip:  # not moved while it was read
            self.cache.put_derived(key, tip, {"text": text})
        return text

    def all_notes(self, ref: str) -> dict[str, str]:
        return notes.read_all(self.repo, ref)

    def set_note(self, ref: str, cid: str, text: str | None, reason: str) -> None:
        target = self.anchor(cid)
        self.repo.create_blob(ids.anchor_bytes(cid))
        notes.update(
            self.repo,
            ref,
            lambda _: {target: text},
            self._notes_signature(),
            reason,
            record=self.ops.moving,
        )

    def meta(self, cid: str) -> dict[str, Any]:
        return notes.meta_values(self.note(self.notes_refs.meta, cid))

    def set_meta(self, cid: str, values: dict[str, Any], reason: str) -> None:
        target = self.anchor(cid)

        def change(current: notes.NoteTexts) -> dict[str, str | None]:
            text = current.get(target, "")
            # later writes from this machine must win even within one millisecond
            stamp = max(int(time.time() * 1000), notes.last_stamp(text, self.machine) + 1)
            lines = "".join(
                notes.meta_line(k, v, stamp, self.machine) + "\n" for k, v in values.items()
            )
            return {target: notes.compact_meta(text + lines)}

        self.repo.create_blob(ids.anchor_bytes(cid))
        notes.update(
            self.repo, self.notes_refs.meta, change, self._notes_signature(), reason, self.ops.moving
        )

    def source_of(self, cid: str) -> str | None:
        text = self.note(self.notes_refs.source, cid)
        if not text:
            return None
        value = text.strip().splitlines()[0].strip() if text.strip() else ""
        return value if ids.is_valid(value) else None

    def sources(self) -> dict[str, str]:
        """Anchor hex id -> source id, for every compaction conversation."""
        out: dict[str, str] = {}
        for anchor, text in self.all_notes(self.notes_refs.source).items():
            value = text.strip().splitlines()[0].strip() if text.strip() else ""
            if ids.is_valid(value):
                out[anchor] = value
        return out

    # -- values computed from the store, kept in its cache ------------------------------

    def cached_summaries(self, tips: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The summaries kept for ``tips`` (``keep_summaries``); a tip without one is absent."""
        return self.cache.summaries(tips)

    def keep_summaries(self, items: dict[str, dict[str, Any]]) -> None:
        """Keep a summary (a JSON object) per tip: commits never change, so neither do they."""
        self.cache.put_summaries(items)

    def cached_value(self, name: str, version: str) -> Any:
        """The value kept under ``name`` for ``version`` (e.g. a ref's commit), else None."""
        return self.cache.derived(name, version)

    def keep_value(self, name: str, version: str, value: Any) -> None:
        """Keep one JSON value per ``name``: the one for the newest ``version`` seen."""
        self.cache.put_derived(name, version, value)

    # -- holding a conversation for a whole turn -------------------------------------------

    @contextmanager
    def hold(self, cid: str, wait: float = 0.0) -> Iterator[None]:
        """An advisory lock that the kernel releases if the process dies."""
        with flock.held(self.gitdir, ids.check(cid), wait, ConversationBusy(cid)):
            yield


def _any_file(folder: Path) -> bool:
    try:
        with os.scandir(folder) as found:
            return any(True for _ in found)
    except OSError:
        return False


def _sha1_hex(data: bytes) -> str:
    try:  # CPython's own SHA-1: spares loading OpenSSL (3 ms of a read command's start)
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha1
    return str(sha1(data).hexdigest())


class _Segments:
    """A view's segments as the store reads them: from the cache, else from git."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def whole(self, segment: Segment) -> tuple[list[Event], list[str]]:
        got = self._store.cache.segment(segment)
        return got if got is not None else self._store.read_run(segment.last, segment.count)

    def ids(self, segment: Segment) -> list[str]:
        got = self._store.cache.segment_ids(segment)
        return got if got is not None else self.whole(segment)[1]

    def events(self, commits: Sequence[str]) -> list[Event] | None:
        return self._store.cache.rows(commits)
