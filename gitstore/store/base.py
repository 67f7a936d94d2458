"""The store's ground: how it opens, its operation log, and what it is given.

``Store`` (``core.py``) is built in layers of one concern each: this base
(opening, repair, the operation log, limits, maintenance), ``reading.py``
(refs and events), ``writing.py`` (commits and ref moves) and ``core.py``
(the active conversation, notes and metadata, cached values, holds).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore import refs
from gitstore.boundary import Limits
from gitstore.cache.db import Cache
from gitstore.clock import SYSTEM, Clock, seconds
from gitstore.errors import (
    LockedRef,
)
from gitstore.fs import flock, keep
from gitstore.refs import files as refread
from gitstore.refs import transaction
from gitstore.refs.reader import RefReader, reader_for
from gitstore.store import format as storeformat
from gitstore.store import maintenance, packwrite
from gitstore.store.repo import machine_id, notes_refs, open_repo
from gitstore.store.types import Identity

if TYPE_CHECKING:
    import pygit2

    from gitstore.oplog.model import Op
    from gitstore.oplog.recorder import Recorder
    from gitstore.store.parts import Ops
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # loaded by the first command that touches git objects


RETRIES = 60
OPLOG_RETENTION = 90 * 86400.0  # seconds the operation log keeps an operation, by default
PACK_AT = 1000  # events in one write from which they go into a pack


class StoreBase:
    """A store; libgit2 is opened only when a command needs more than refs and the cache.

    Refs of a plain git directory are read as files (``refs.reader``), so a
    command that finds what it reads in the cache never loads libgit2.
    """

    ops: Ops  # the operation log's part (``parts.py``), given by ``Store``

    def __init__(
        self,
        path: Path,
        identity: Identity | None = None,
        limits: Limits | Callable[[], Limits] | None = None,
        repair: bool = True,
        clock: Clock | None = None,
    ) -> None:
        self.path = path
        self.identity = identity or Identity()
        self.clock: Clock = clock or SYSTEM  # the time of what the store records
        self._limits = limits
        self._repo: pygit2.Repository | None = None
        plain = refread.plain_gitdir(path)
        if plain is None:  # a worktree, a .git file, reftable..: libgit2 decides at once
            self._repo = open_repo(path)
            plain = None
        self._reader: RefReader = reader_for(plain, lambda: self.repo)
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

    def repair(self, strict: bool = False) -> None:
        """Finish what killed commands left: journaled ref updates, then their operations
        (``strict``: an operation that cannot be recorded raises, for ``jp doctor --fix``)."""
        if transaction.pending(self.gitdir):
            transaction.repair(self.repo, self.gitdir)
        if os.path.isdir(packwrite.folder(self.gitdir)):  # a bulk writer was killed
            packwrite.sweep(self.gitdir)
        if _any_file(keep.folder(self.gitdir)):  # a writer killed while it sheltered objects
            keep.sweep(self.gitdir)
        if _any_file(self.gitdir / "jp" / "oplog"):  # one listing; the module only then
            from gitstore.oplog import recorder as oprecord

            if oprecord.pending(self.gitdir) and not transaction.pending(self.gitdir):
                oprecord.recover(
                    lambda: self.repo, self.gitdir, self._notes_signature, self._seconds, strict
                )

    @property
    def _recorder(self) -> Recorder:
        """The recorder of this process's operation (``begin_operation`` starts it)."""
        if self._ops is None:
            from gitstore.oplog.recorder import Recorder

            self._ops = Recorder(
                self.gitdir, lambda: self.repo, self._first_write, self._seconds, self.clock.token
            )
            if self._begun is not None:
                self._ops.begin(*self._begun)
        return self._ops

    def _seconds(self) -> float:
        return seconds(self.clock)

    def _first_write(self) -> None:
        """Record the format version in a store that predates it (best effort: a store
        whose config cannot be written fails the write itself, with its own message)."""
        if self.format is None or self.format < storeformat.FORMAT:
            try:
                storeformat.write(self.repo)
            except (pygit2.GitError, OSError):
                return
            self.format = storeformat.FORMAT

    def begin_operation(self, command: str) -> None:
        """Record every ref this process moves from now on as one operation, ``command``.

        The recorder is made only when something moves, so a read command pays nothing.
        """
        if self._ops is None:
            self._begun = (command, seconds(self.clock))
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
    def operation(self, command: str) -> Iterator[Ops]:
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

    @property
    def maintenance(self) -> maintenance.Maintenance:
        if self._maintenance is None:
            self._maintenance = maintenance.Maintenance(
                self.repo, self.gitdir, lambda: self.oplog_retention(), self._seconds
            )
        return self._maintenance

    @property
    def machine(self) -> str:
        """This machine's id in metadata lines (``jp.machine`` in the store's config)."""
        if self._machine is None:
            self._machine = machine_id(self.repo, self.clock)
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

    def active(self) -> str | None:
        """The active conversation (``JP_HEAD``), if any."""
        named = self._reader.symbolic(refs.ACTIVE)
        found = refs.conversation_id(named) if named else None
        return found[0] if found else None

    def _notes_signature(self, at: float | None = None) -> pygit2.Signature:
        """The signature of a notes or operation-log commit: this store's identity, at
        ``at`` (seconds), else the time of its clock."""
        moment = seconds(self.clock) if at is None else at
        return pygit2.Signature(self.identity.name, self.identity.email, int(moment), 0)


def _any_file(folder: Path) -> bool:
    try:
        with os.scandir(folder) as found:
            return any(True for _ in found)
    except OSError:
        return False
