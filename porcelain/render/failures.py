"""Translate typed errors from the layers below into what the user reads."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from porcelain.errors import Exit, FaultError, Interrupted, JpError, UserError
from porcelain.render.opshow import value

if TYPE_CHECKING:
    from porcelain.render.output import Output

LS_HINT = "list them with `jp conversation ls` (archived ones: `jp conversation ls --archived`)"


def told(output: Output, exc: BaseException) -> int:
    """The exit code of a command that raised ``exc``, once ``output`` said it in one
    line (a bug re-raised as it is under ``JP_DEBUG``)."""
    if isinstance(exc, KeyboardInterrupt):
        output.note("\ninterrupted: what was already written is kept")
        return Exit.INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        return Exit.OK
    error = translate(exc)
    if error is None:
        if os.environ.get("JP_DEBUG"):
            raise exc
        output.error(
            f"internal error: {type(exc).__name__}: {exc}",
            "this is a bug in jp; rerun with JP_DEBUG=1 to see where it happened",
        )
        return Exit.INTERNAL
    if isinstance(error, Interrupted):  # Ctrl-C: what was kept, not an error
        output.note(error.message)
        return error.exit_code
    output.error(error.message, error.hint)
    return error.exit_code


def translate(exc: BaseException) -> JpError | None:
    """A user-facing error for an expected failure; None for a bug."""
    if isinstance(exc, JpError):
        return exc
    # lazy: gitstore's errors load only when one happened
    from gitstore import errors

    for kind, message in _messages():
        if isinstance(exc, kind):
            return message(exc)
    fault = errors.environment_fault(exc) if isinstance(exc, (errors.EnvironmentFault, OSError)) else None
    if fault is None and type(exc).__name__ == "GitError":  # libgit2's, by its text
        fault = errors.environment_fault(exc)
    if fault is not None:
        return _environment(fault)
    if isinstance(exc, errors.GitStoreError):
        return UserError(str(exc))
    return None


Message = Callable[[Any], JpError]
_TABLE: list[tuple[type[BaseException], Message]] = []


def _messages() -> list[tuple[type[BaseException], Message]]:
    """Each store error and its message, subclasses before their bases (first match wins).

    Built on the first error: gitstore's errors load only when one happened.
    """
    if not _TABLE:
        # lazy: gitstore's errors load only when one happened
        from gitstore import errors

        _TABLE.extend(
            [
                (errors.InvalidId, _invalid_id),
                (errors.ConversationNotFound, lambda e: UserError(f"no conversation {e.cid}", LS_HINT)),
                (errors.ConversationExists, lambda e: UserError(f"conversation {e.cid} already exists")),
                (errors.ConversationBusy, _busy),
                (errors.RefLocked, _ref_locked),
                (errors.LockedRef, _stale_lock),
                (errors.StoreFormatTooNew, _too_new),
                (errors.StaleTip, _stale_tip),
                (errors.ConcurrentUpdate, _kept_changing),
                (errors.CorruptEvent, _corrupt),
                (errors.NothingToUndo, lambda e: UserError("nothing to undo", OP_LOG_HINT)),
                (errors.UnknownOperation, lambda e: UserError(str(e), OP_LOG_HINT + " and their ids")),
                (errors.UndoConflict, _undo_conflict),
                (errors.OplogBehind, _oplog_behind),
                (errors.InvalidEvent, lambda e: UserError(str(e))),
                (errors.StoreError, lambda e: UserError(f"store {e.path}: {e.reason}")),
                (errors.RemoteSetupError, _remote_setup),
                (errors.SyncError, _sync_failed),
                (errors.RefBusy, _ref_busy),
            ]
        )
    return _TABLE


OP_LOG_HINT = "`jp op log` lists the operations"
# what git and ssh say when they needed a password or passphrase nobody could type
NEEDS_CREDENTIALS = ("terminal prompts disabled", "Permission denied (publickey", "passphrase")


def _sync_failed(exc: Any) -> JpError:
    hint = None
    if any(words in exc.reason for words in NEEDS_CREDENTIALS):
        hint = (
            "off a terminal git and ssh do not ask for passwords: use a credential helper "
            "or an ssh agent (docs/sync.md), or run jp on a terminal"
        )
    return UserError(f"sync with {exc.remote} failed: {exc.reason}", hint)


def _remote_setup(exc: Any) -> JpError:
    name = exc.remote
    hint = None
    if "already exists" in exc.reason:
        hint = f"pick another name, or change its URL with `git remote set-url {name} URL`"
    return UserError(f"remote {name} {exc.reason}; nothing was changed", hint)


def _invalid_id(exc: Any) -> JpError:
    shown = exc.text if exc.text else "(empty)"
    return UserError(
        f"not a conversation id: {shown!r}", "ids look like jp-c17727391057; " + LS_HINT
    )


def _busy(exc: Any) -> JpError:
    by = f" ({exc.owner})" if exc.owner else ""
    if getattr(exc, "refused", None):
        return UserError(
            f"conversation {exc.cid} is in use by another jp process{by}; nothing was changed",
            f"wait for it to finish, then run `jp {exc.refused}` again",
        )
    return UserError(
        f"conversation {exc.cid} is in use by another jp process{by}",
        f"wait for it to finish, or continue in a fork: `jp conversation fork {exc.cid}`",
    )


# what every lock left behind is named with: a blocked creation, append, note or switch
_REMOVES = (
    "`jp doctor --fix` removes it once it is 10 seconds old (a live writer holds one for less)"
)


def _ref_locked(exc: Any) -> JpError:
    return UserError(
        f"conversation {exc.cid} is locked: {exc.lock} exists",
        "another jp or git process is writing it; if none is running (one was killed), "
        f"{_REMOVES}; then run the command again",
    )


def _stale_lock(exc: Any) -> JpError:
    return UserError(
        f"{exc.ref} is locked: {exc.lock} exists ({_age(exc.age)} old); if no other jp "
        "or git is running, `jp doctor --fix` removes it"
    )


def _too_new(exc: Any) -> JpError:
    return UserError(
        f"store {exc.path} has format {exc.found}, newer than this jp reads "
        f"(format {exc.supported}); nothing was read or written",
        "use the newer jp that wrote it, or upgrade this one",
    )


def _stale_tip(exc: Any) -> JpError:
    return UserError(
        f"conversation {exc.cid} was changed by another writer while jp was writing",
        "nothing was lost; run the command again",
    )


def _kept_changing(exc: Any) -> JpError:
    return UserError(
        f"{exc.ref} kept changing under another writer; it was not updated",
        "run the command again (`jp op log` shows what this command did change)",
    )


def _corrupt(exc: Any) -> JpError:
    return UserError(
        str(exc),
        "the conversation was changed outside jp; read it with `git log` and move its "
        "ref back to a good commit (`git update-ref`), or delete it",
    )


def _undo_conflict(exc: Any) -> JpError:
    return UserError(
        f"{exc.ref} changed since operation {exc.op_id[:12]} ({value(exc.actual)} now); "
        "nothing was undone: `jp undo --force` overwrites that change, `jp op log` shows "
        "what changed it"
    )


def _oplog_behind(exc: Any) -> JpError:
    why = f" ({exc.lock} exists, {_age(exc.age)} old)" if exc.lock else ""
    return UserError(
        f"the operation log is behind: {exc.count} earlier operation(s) are not recorded "
        f"yet{why}; nothing was {exc.doing}",
        "`jp doctor --fix` records them; then run the command again",
    )


def _age(seconds: float) -> str:
    if seconds >= 7200:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def _ref_busy(exc: Any) -> JpError:
    done = (
        "it is half done; the next jp command finishes it" if exc.partial else "nothing was changed"
    )
    if exc.by_maintenance:
        return UserError(
            f"{exc.ref} cannot move now: git's maintenance (git gc or git pack-refs) "
            f"holds {exc.lock}; {done}",
            f"run the command again when git is done; if no git is running, {_REMOVES} "
            "(in a project's repository git's own lock is only named: remove it by hand)",
        )
    return UserError(
        f"{exc.ref} is locked: {exc.lock} exists; {done}",
        "another jp or git process is writing it; run the command again when it is "
        f"done; if none is running (one was killed), {_REMOVES}",
    )


def _environment(fault: Any) -> JpError:
    """An ``EnvironmentFault``: the machine's, named as such."""
    where = fault.path or "the store"
    if fault.kind == "read-only":
        return FaultError(
            f"the store is on a read-only file system: cannot write {where}",
            "read commands still work; to change it, mount it writable",
        )
    if fault.kind == "no-permission":
        return FaultError(
            f"no permission to write {where}",
            "check the owner and mode of the store's files",
        )
    if fault.kind == "no-space":
        return FaultError(
            f"no space left on the device (or a file size limit) writing {where}",
            "free some space, then run the command again; what was written before is kept",
        )
    if fault.kind == "damaged-refs":
        return FaultError(
            "the store's packed-refs file is damaged, so refs it holds cannot be read or moved",
            "`jp doctor` names the damage; `jp doctor --fix` rebuilds it from what survives "
            "(its good lines, the loose refs and the reflogs)",
        )
    if fault.kind == "pruned":
        return FaultError(
            "a git gc --prune=now ran beside this write; run the command again",
            f"it removed objects jp had just written in {where}; what was written before is kept",
        )
    if fault.kind == "io":
        return FaultError(
            f"the disk did not keep what jp wrote in {where} ({fault.detail})",
            "check the disk (`df`, the system log), then run the command again",
        )
    return FaultError(
        f"{where} is not a directory: a store is a git directory",
        "point --store or JP_STORE at a store, or create one: `jp init PATH`",
    )
