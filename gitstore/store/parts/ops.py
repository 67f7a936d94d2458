"""A store's operation log: the operation this process records, and the log itself.

Every ref a command moves is recorded as one operation (``gitstore.oplog``),
begun when the command starts and written when it ends; the recorder is made
only when something moves, so a read command pays nothing.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from gitstore.clock import seconds

if TYPE_CHECKING:
    from gitstore.git.refs.transaction import RefUpdate
    from gitstore.intake import Verify
    from gitstore.oplog.model import Op, RemoteChange
    from gitstore.oplog.recorder import Recorder
    from gitstore.store.ground import Ground


class Ops:
    """The operation log: this process's operation, and the log it goes into."""

    def __init__(self, ground: Ground, active: Callable[[], str | None]) -> None:
        self._g = ground
        self._active = active  # the active conversation, which an operation records
        self._recorder: Recorder | None = None  # made on first use
        self._begun: tuple[str, float] | None = None  # the command line, when it began

    def _recording(self) -> Recorder:
        """The recorder of this process's operation (``begin`` starts it)."""
        if self._recorder is None:
            from gitstore.oplog.recorder import Recorder  # only a command that moves a ref

            g = self._g
            self._recorder = Recorder(
                g.gitdir, lambda: g.repo, g.first_write, g.seconds, g.clock.token
            )
            if self._begun is not None:
                self._recorder.begin(*self._begun)
        return self._recorder

    @property
    def command(self) -> str | None:
        """The command line of the operation being recorded, if one is."""
        return self._recording().command

    @property
    def retention(self) -> Callable[[], float]:
        """Seconds the log keeps an operation (asked for when the log is trimmed)."""
        return self._g.retention

    @retention.setter
    def retention(self, value: Callable[[], float]) -> None:
        self._g.retention = value

    def begin(self, command: str) -> None:
        """Record every ref this process moves from now on as one operation, ``command``."""
        if self._recorder is None:
            self._begun = (command, seconds(self._g.clock))
        else:
            self._recorder.begin(command)

    def end(self) -> Op | None:
        """Write the operation begun (if it moved anything); trims the log when due."""
        self._begun = None
        if self._recorder is None:
            return None
        g = self._g
        op = self._recorder.end(g.person(), self._active)
        if op is not None:
            # lazy: start-up; only a recorded operation trims the log
            from gitstore.store import maintenance

            maintenance.trim_oplog_when_due(g.place, g.retention, op)
        return op

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

    def moving(
        self,
        updates: Sequence[RefUpdate],
        partial: tuple[type[BaseException], ...] = (),
        verify: Verify = False,
    ) -> AbstractContextManager[None]:
        """Around one ref move (or one transaction): recorded if it happens."""
        return self._recording().moving(updates, partial, verify)

    def remote(self, change: RemoteChange) -> None:
        """A remote's configuration changed."""
        self._recording().remote(change)

    def mark(self, *, undoes: str | None = None, restores: str | None = None) -> None:
        """Say what the operation is (an undo of one, a restore to one)."""
        self._recording().mark(undoes=undoes, restores=restores)
