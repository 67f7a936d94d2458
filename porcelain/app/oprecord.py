"""Giving the store the command line, and closing the command's operation.

`App.store()` opens the operation (`begin`); `cli` closes it when the command
ends, whether it succeeded or failed (`finish`).  The retention of the
operation log comes from the configuration (`store.op_log_retention_days`),
read only when the log is due for a trim.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from porcelain.errors import JpError

if TYPE_CHECKING:
    from gitstore import Store
    from porcelain.app.session import Session

MAX_COMMAND = 2000  # characters of the command line kept in the log
DAY = 86400.0


def command_line(argv: Sequence[str]) -> str:
    text = shlex.join(["jp", *argv])
    return text if len(text) <= MAX_COMMAND else text[: MAX_COMMAND - 3] + "..."


def begin(app: Session, store: Store) -> None:
    store.ops.begin(command_line(app.argv))
    store.ops.retention = lambda: retention_days(app) * DAY


def retention_days(app: Session) -> int:
    try:
        return app.config().op_log_retention_days()
    except JpError:  # a broken configuration: the command itself says so
        # lazy: the config package loads tomlkit; only a broken configuration needs it here
        from porcelain.config.model import OP_LOG_RETENTION_DAYS

        return OP_LOG_RETENTION_DAYS


def finish(store: Store | None, failed: bool) -> list[str]:
    """Record the command's operation; returns the lines to print after the command's own
    output and error: a failed command says what it had changed."""
    if store is None:
        return []
    try:
        op = store.ops.end()
    except Exception as exc:  # the command's own outcome stands; the next command records it
        # lazy: gitstore's errors load only when something failed
        from gitstore import errors

        if isinstance(exc, errors.LockedRef):  # it stays until removed: every later write fails too
            return [
                f"warning: the operation log was not written ({exc}, {exc.age:.0f} s old); "
                "`jp doctor --fix` removes the stale lock and records the operation"
            ]
        return [
            f"warning: the operation log was not written ({exc}); the next jp "
            "command records the operation"
        ]
    if failed and op is not None and op.moves:
        return [
            f"note: what this command changed before it failed is operation {op.id[:12]}; "
            "`jp undo` reverses it"
        ]
    return []
