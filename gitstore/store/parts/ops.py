"""A store's operation log: the operation this process records, and the log itself.

Porcelain opens an operation with the command line (``begin``) and closes it
when the command ends (``end``); every write site of the store moves its refs
inside ``moving(updates)``, so a whole ``jp q`` turn (many appends) becomes one
operation, and each process records only the refs it moved itself.

Crash safety: before the first ref moves, a pending record
``<gitdir>/jp/oplog/<op id>.pending`` is created and held with an ``flock``
for as long as the command runs; each move adds one line (the refs with their
old and new values) before it happens, and a move that fails adds a line
saying so.  ``end`` writes the operation to the log and deletes the record.
A command killed on the way leaves its record unlocked (the kernel drops the
lock), and the next command that opens the store completes it
(``gitstore.oplog.recorder.recover``).

Nothing here costs a command that moves no ref; a move costs one short
``write`` to a file already open.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from gitstore.git.refs import transaction
from gitstore.git.refs.transaction import ANY, RefUpdate
from gitstore.oplog.model import Move, Op, RemoteChange, coalesce

if TYPE_CHECKING:
    from pathlib import Path

    from gitstore.intake import Verify
    from gitstore.store.ground import Ground

_NULL: AbstractContextManager[None] = contextlib.nullcontext()


class Ops:
    """The operation log: this process's operation, and the log it goes into."""

    def __init__(self, ground: Ground, active: Callable[[], str | None]) -> None:
        self._g = ground
        self._active = active  # the active conversation, which an operation records
        self._wrote = False
        self.command: str | None = None  # the command line of the operation being recorded
        self._reset()

    def _reset(self) -> None:
        self._op_id: str | None = None  # drawn from the store's clock when first needed
        self.started = 0.0  # set by ``begin``
        self._fd: int | None = None
        self._path: Path | None = None
        self._groups = 0
        self._landed: list[Move] = []
        self._remotes: list[RemoteChange] = []
        self._marks: dict[str, str] = {}

    @property
    def op_id(self) -> str:
        if self._op_id is None:
            self._op_id = self._g.clock.token(8)
        return self._op_id

    @property
    def retention(self) -> Callable[[], float]:
        """Seconds the log keeps an operation (asked for when the log is trimmed)."""
        return self._g.retention

    @retention.setter
    def retention(self, value: Callable[[], float]) -> None:
        self._g.retention = value

    def begin(self, command: str) -> None:
        """Record every ref this process moves from now on as one operation, ``command``."""
        if self.command is not None:
            return
        self._reset()
        self.command = command
        self.started = self._g.seconds()
        self._g.holding = True

    def mark(self, *, undoes: str | None = None, restores: str | None = None) -> None:
        """Say what the operation is (an undo of one, a restore to one)."""
        if undoes:
            self._marks["undoes"] = undoes
        if restores:
            self._marks["restores"] = restores

    @contextmanager
    def operation(self, command: str) -> Iterator[Ops]:
        """``begin`` .. ``end`` around a block."""
        self.begin(command)
        try:
            yield self
        finally:
            self.end()

    def list(self, limit: int | None = None) -> builtins.list[Op]:
        """The operation log, newest first (at most ``limit``)."""
        from gitstore.oplog import log  # only the commands that read the log

        return log.ops(self._g.repo, limit)

    # -- the write sites -------------------------------------------------------------

    def moving(
        self,
        updates: Sequence[RefUpdate],
        partial: tuple[type[BaseException], ...] = (),
        verify: Verify = False,
    ) -> AbstractContextManager[None]:
        """Around one ref move (or one transaction): recorded if it happens.

        An exception of a ``partial`` type means some refs may have moved (a
        transaction that failed part-way, finished later by repair): the
        move counts as done.  With ``verify`` (a call that may move only some
        of ``updates``), only the refs that now hold their new value count:
        each is looked up, or, when ``verify`` is a function, it names them
        (a writer that knows which of thousands it wrote).
        """
        if not self._wrote:
            self._wrote = True
            self._g.first_write()
        if self.command is None or not updates:
            return _NULL
        return self._moving(updates, partial, verify)

    @contextmanager
    def _moving(
        self,
        updates: Sequence[RefUpdate],
        partial: tuple[type[BaseException], ...],
        verify: Verify,
    ) -> Iterator[None]:
        moves = [Move(u.name, self._old(u), u.new) for u in updates]
        group = self._intend({"u": [[m.ref, m.old, m.new] for m in moves]})
        try:
            yield
        except partial:
            self._landed += moves
            raise
        except BaseException:
            self._line({"f": group})
            raise
        if callable(verify):
            landed = set(verify())
            moves = [m for m in moves if m.ref in landed]
        elif verify:
            moves = [m for m in moves if transaction.current(self._g.repo, m.ref) == m.new]
        self._landed += moves

    def remote(self, change: RemoteChange) -> None:
        """A remote's configuration changed (told once done: a config write is one step)."""
        if self.command is None or change.old == change.new:
            return
        self._intend({"r": [change.name, change.old, change.new]})
        self._remotes.append(change)

    def _old(self, update: RefUpdate) -> str | None:
        if update.old != ANY:
            return update.old
        return transaction.current(self._g.repo, update.name)

    def _intend(self, entry: dict[str, Any]) -> int:
        if self._fd is None:
            self._open()
        self._groups += 1
        self._line({"g": self._groups, **entry})
        return self._groups

    def _open(self) -> None:
        from gitstore.oplog import recorder  # the pending records' folder: only a write

        where = recorder.folder(self._g.gitdir)
        where.mkdir(parents=True, exist_ok=True)
        path = where / f"{self.op_id}{recorder.SUFFIX}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)  # the kernel drops it if this process dies
        self._fd, self._path = fd, path
        self._line(
            {
                "id": self.op_id,
                "command": self.command,
                "started": self.started,
                "pid": os.getpid(),
                "host": os.uname().nodename,
            }
        )

    def _line(self, entry: dict[str, Any]) -> None:
        if self._fd is None:
            return
        data = (json.dumps(entry) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    # -- the end of the command ----------------------------------------------------------

    def end(self) -> Op | None:
        """Write the operation begun (if it moved anything) and stop recording; trims
        the log when due.  If writing fails the pending record stays, unlocked, and
        the next command that opens the store records the operation."""
        if self.command is None:
            return None
        command, self.command = self.command, None
        moves = coalesce(self._landed)
        try:
            if not moves and not self._remotes and not self._marks:
                self._drop()
                return None
            op = Op(
                id=self.op_id,
                command=command,
                time=self._g.seconds(),
                started=self.started,
                pid=os.getpid(),
                host=os.uname().nodename,
                active=self._active(),
                moves=moves,
                remotes=list(self._remotes),
                undoes=self._marks.get("undoes"),
                restores=self._marks.get("restores"),
            )
            from gitstore.oplog import log  # lazy: only a command that moved a ref
            from gitstore.store import maintenance  # lazy: as the log; trims it when due

            _, op = log.write(self._g.place, op, self._g.person(), self._g.held_reads())
            self._drop()
            maintenance.trim_oplog_when_due(self._g.place, self._g.retention, op)
            return op
        finally:
            self._g.holding = False
            self._g.release_reads()
            if self._fd is not None:
                os.close(self._fd)
            self._reset()

    def _drop(self) -> None:
        if self._path is not None:
            self._path.unlink(missing_ok=True)
