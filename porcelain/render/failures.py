"""Translate typed errors from the layers below into what the user reads."""

from __future__ import annotations

from porcelain.errors import FaultError, JpError, UserError

LS_HINT = "list them with `jp conversation ls` (archived ones: `jp conversation ls --archived`)"


def translate(exc: BaseException) -> JpError | None:
    """A user-facing error for an expected failure; None for a bug."""
    if isinstance(exc, JpError):
        return exc
    from gitstore import (
        ConcurrentUpdate,
        ConversationBusy,
        ConversationExists,
        ConversationNotFound,
        CorruptEvent,
        EnvironmentFault,
        GitStoreError,
        InvalidEvent,
        InvalidId,
        LockedRef,
        NothingToUndo,
        RefBusy,
        RefLocked,
        StaleTip,
        StoreError,
        StoreFormatTooNew,
        SyncError,
        UndoConflict,
        UnknownOperation,
        environment_fault,
    )

    if isinstance(exc, InvalidId):
        shown = exc.text if exc.text else "(empty)"
        return UserError(
            f"not a conversation id: {shown!r}", "ids look like jp-c17727391057; " + LS_HINT
        )
    if isinstance(exc, ConversationNotFound):
        return UserError(f"no conversation {exc.cid}", LS_HINT)
    if isinstance(exc, ConversationExists):
        return UserError(f"conversation {exc.cid} already exists")
    if isinstance(exc, ConversationBusy):
        by = f" ({exc.owner})" if exc.owner else ""
        return UserError(
            f"conversation {exc.cid} is in use by another jp process{by}",
            f"wait for it to finish, or continue in a fork: `jp conversation fork {exc.cid}`",
        )
    if isinstance(exc, RefLocked):
        return UserError(
            f"conversation {exc.cid} is locked: {exc.lock} exists",
            "another jp or git process is writing it; if none is running (one was killed), "
            "`jp doctor --fix` removes the lock; then run the command again",
        )
    if isinstance(exc, LockedRef):
        return UserError(
            f"{exc.ref} is locked: {exc.lock} exists ({_age(exc.age)} old); if no other jp "
            "or git is running, `jp doctor --fix` removes it"
        )
    if isinstance(exc, StoreFormatTooNew):
        return UserError(
            f"store {exc.path} has format {exc.found}, newer than this jp reads "
            f"(format {exc.supported}); nothing was read or written",
            "use the newer jp that wrote it, or upgrade this one",
        )
    if isinstance(exc, StaleTip):
        return UserError(
            f"conversation {exc.cid} was changed by another writer while jp was writing",
            "nothing was lost; run the command again",
        )
    if isinstance(exc, ConcurrentUpdate):
        return UserError(
            f"{exc.ref} kept changing under another writer; it was not updated",
            "run the command again (`jp op log` shows what this command did change)",
        )
    if isinstance(exc, CorruptEvent):
        return UserError(
            str(exc),
            "the conversation was changed outside jp; read it with `git log` and move its "
            "ref back to a good commit (`git update-ref`), or delete it",
        )
    if isinstance(exc, NothingToUndo):
        return UserError("nothing to undo", "`jp op log` lists the operations")
    if isinstance(exc, UnknownOperation):
        return UserError(str(exc), "`jp op log` lists the operations and their ids")
    if isinstance(exc, UndoConflict):
        from porcelain.render.opshow import value

        return UserError(
            f"{exc.ref} changed since operation {exc.op_id[:12]} ({value(exc.actual)} now); "
            "nothing was undone: `jp undo --force` overwrites that change, `jp op log` shows "
            "what changed it"
        )
    if isinstance(exc, InvalidEvent):
        return UserError(str(exc))
    if isinstance(exc, StoreError):
        return UserError(f"store {exc.path}: {exc.reason}")
    if isinstance(exc, SyncError):
        return UserError(f"sync with {exc.remote} failed: {exc.reason}")
    if isinstance(exc, RefBusy):
        return _ref_busy(exc)
    fault = environment_fault(exc) if isinstance(exc, (EnvironmentFault, OSError)) else None
    if fault is None and type(exc).__name__ == "GitError":  # libgit2's, by its text
        fault = environment_fault(exc)
    if fault is not None:
        return _environment(fault)
    if isinstance(exc, GitStoreError):
        return UserError(str(exc))
    return None


def _age(seconds: float) -> str:
    if seconds >= 7200:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def _ref_busy(exc: BaseException) -> JpError:
    from gitstore import RefBusy

    assert isinstance(exc, RefBusy)
    done = (
        "it is half done; the next jp command finishes it" if exc.partial else "nothing was changed"
    )
    if exc.by_maintenance:
        return UserError(
            f"{exc.ref} cannot move now: git's maintenance (git gc or git pack-refs) "
            f"holds {exc.lock}; {done}",
            "run the command again when git is done; if no git is running, "
            "`jp doctor` names the stale lock",
        )
    return UserError(
        f"{exc.ref} is locked: {exc.lock} exists; {done}",
        "another jp or git process is writing it; run the command again when it is "
        "done; if none is running, `jp doctor` names the stale lock",
    )


def _environment(fault: BaseException) -> JpError:
    from gitstore import EnvironmentFault

    assert isinstance(fault, EnvironmentFault)
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
    if fault.kind == "io":
        return FaultError(
            f"the disk did not keep what jp wrote in {where} ({fault.detail})",
            "check the disk (`df`, the system log), then run the command again",
        )
    return FaultError(
        f"{where} is not a directory: a store is a git directory",
        "point --store or JP_STORE at a store, or create one: `jp init PATH`",
    )
