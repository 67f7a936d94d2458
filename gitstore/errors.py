"""Typed errors of the store.  They carry data; porcelain turns them into text."""

from __future__ import annotations

import re


class GitStoreError(Exception):
    """Base of every error the store raises on purpose."""


class InvalidEvent(GitStoreError):
    """An event whose shape does not fit its type."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


class InvalidId(GitStoreError):
    """A string that is not a conversation id (and so never becomes a ref name)."""

    def __init__(self, text: str) -> None:
        super().__init__(f"not a conversation id: {text!r}")
        self.text = text


class ConversationNotFound(GitStoreError):
    def __init__(self, cid: str) -> None:
        super().__init__(f"no conversation {cid}")
        self.cid = cid


class ConversationExists(GitStoreError):
    def __init__(self, cid: str) -> None:
        super().__init__(f"conversation {cid} already exists")
        self.cid = cid


class ConcurrentUpdate(GitStoreError):
    """A compare-and-swap lost against another writer more often than we retry."""

    def __init__(self, ref: str) -> None:
        super().__init__(f"{ref} kept changing under another writer")
        self.ref = ref


class StaleTip(GitStoreError):
    """The conversation moved since the caller read it (the caller decides what to do)."""

    def __init__(self, cid: str, expected: str, actual: str | None) -> None:
        super().__init__(f"conversation {cid} changed while it was being written")
        self.cid = cid
        self.expected = expected
        self.actual = actual


class RefLocked(StaleTip):
    """The ref's lock file exists: another writer is at work, or one was killed holding it."""

    def __init__(self, cid: str, expected: str, lock: str) -> None:
        super().__init__(cid, expected, expected)
        self.lock = lock


class ConversationBusy(GitStoreError):
    """Another process holds the conversation (a query in progress)."""

    def __init__(self, cid: str, refused: str | None = None) -> None:
        super().__init__(f"conversation {cid} is in use by another jp process")
        self.cid = cid
        self.owner: str | None = None  # "pid 123 on host", when the lock says
        self.refused = refused  # "undo", "op restore": a command that waited, then refused


class StoreError(GitStoreError):
    """The store cannot be opened or used (not a repository, reftable, ...)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class PackedRefsDamaged(GitStoreError):
    """``packed-refs`` holds a line git cannot read, and a ref move would have had
    to rewrite it: refused before anything moved (``refs/transaction.py``)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"store {path}: {reason}")
        self.path = path
        self.reason = reason


class SyncError(GitStoreError):
    """A push or pull that could not complete."""

    def __init__(self, remote: str, reason: str) -> None:
        super().__init__(f"{remote}: {reason}")
        self.remote = remote
        self.reason = reason


class RemoteSetupError(SyncError):
    """A remote that cannot be set up as asked (a name taken by another URL, no URL):
    nothing was sent or fetched."""


class CorruptEvent(GitStoreError):
    """A commit in a conversation's chain that does not hold a readable event."""

    def __init__(self, commit: str, reason: str, cid: str | None = None) -> None:
        where = f"conversation {cid}: " if cid else ""
        super().__init__(f"{where}commit {commit[:12]} does not hold a jp event: {reason}")
        self.commit = commit
        self.reason = reason
        self.cid = cid


class Refused(GitStoreError):
    """Data from outside (a remote, an imported file) that jp does not take in."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"{what}: {reason}")
        self.what = what
        self.reason = reason


class StoreFormatTooNew(StoreError):
    """The store was written by a newer jp (its ``jp.format`` is above ours)."""

    def __init__(self, path: str, found: int, supported: int) -> None:
        shown = "unknown" if found >= 1 << 30 else str(found)
        super().__init__(
            path, f"store format {shown} is newer than this jp supports (format {supported})"
        )
        self.found = shown
        self.supported = supported


class NothingToUndo(GitStoreError):
    def __init__(self) -> None:
        super().__init__("no operation to undo")


class UnknownOperation(GitStoreError):
    """No operation, or more than one, has an id that starts so."""

    def __init__(self, prefix: str, matches: int) -> None:
        what = "no operation" if matches == 0 else f"{matches} operations"
        super().__init__(f"{what} with an id starting {prefix!r}")
        self.prefix = prefix
        self.matches = matches


class UndoConflict(GitStoreError):
    """A ref changed since the operation: undoing it would overwrite that change."""

    def __init__(self, op_id: str, ref: str, expected: str | None, actual: str | None) -> None:
        super().__init__(f"{ref} changed since operation {op_id}")
        self.op_id = op_id
        self.ref = ref
        self.expected = expected
        self.actual = actual


class OplogBehind(GitStoreError):
    """Operations of earlier commands are not in the log yet (it could not be written:
    a stale ``refs/jp/oplog.lock``), so the log's newest operation is not the latest."""

    def __init__(self, count: int, lock: str | None, age: float | None, doing: str) -> None:
        super().__init__(f"the operation log is behind by {count} operations")
        self.count = count
        self.lock = lock
        self.age = age
        self.doing = doing  # "undone", "restored"


class LockedRef(GitStoreError):
    """A ref's lock file exists and outlived every writer that could hold it."""

    def __init__(self, ref: str, lock: str, age: float) -> None:
        super().__init__(f"{ref} is locked: {lock} exists")
        self.ref = ref
        self.lock = lock
        self.age = age


class RefBusy(GitStoreError):
    """A ref's lock file exists, so it cannot move now.

    ``by_maintenance`` says that git's own maintenance (``git gc``, ``git
    pack-refs``) holds ``packed-refs.lock``, which blocks deleting any ref.
    ``partial``: other refs of the same operation moved already; its journal
    stays and the next command (or the same one run again) finishes it.
    """

    def __init__(
        self, ref: str, lock: str, by_maintenance: bool = False, partial: bool = False
    ) -> None:
        super().__init__(f"{ref} is locked: {lock} exists")
        self.ref = ref
        self.lock = lock
        self.by_maintenance = by_maintenance
        self.partial = partial  # some refs of the operation moved; the journal finishes it


class EnvironmentFault(GitStoreError):
    """The machine refused a write or a read: not jp's data, not a bug.

    ``kind`` is ``read-only``, ``no-permission``, ``no-space`` (a full disk, a
    quota, a file-size limit), ``not-a-directory``, ``io`` (a write the disk
    lost) or ``pruned`` (git's prune removed what jp had just written); ``path`` is where it happened when known.
    """

    def __init__(self, kind: str, path: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {path} {detail}".strip())
        self.kind = kind
        self.path = path
        self.detail = detail


_FAULT_ERRNOS = {
    "read-only": {30},  # EROFS
    "no-permission": {13, 1},  # EACCES, EPERM
    "no-space": {28, 122, 27},  # ENOSPC, EDQUOT, EFBIG
    "not-a-directory": {20},  # ENOTDIR
    "damaged-refs": set(),  # a packed-refs git cannot read (named by libgit2's text)
}
_FAULT_WORDS = {
    "read-only": ("read-only file system",),
    "no-permission": ("permission denied", "operation not permitted"),
    "no-space": ("no space left", "disk quota exceeded", "file too large"),
    "not-a-directory": ("not a directory",),
    "damaged-refs": ("corrupted packed references file", "packed-refs: unexpected"),
}


def environment_fault(exc: BaseException, path: str = "") -> EnvironmentFault | None:
    """The fault an ``OSError`` (by errno) or a libgit2 error (by its text) stands for."""
    if isinstance(exc, EnvironmentFault):
        return exc
    errno = getattr(exc, "errno", None) if isinstance(exc, OSError) else None
    text = str(exc).lower()
    quoted = re.search(r"'(/[^']+)'", str(exc))  # libgit2 quotes the file it failed on
    where = str(getattr(exc, "filename", None) or (quoted.group(1) if quoted else path))
    for kind, numbers in _FAULT_ERRNOS.items():
        if errno in numbers or (errno is None and any(w in text for w in _FAULT_WORDS[kind])):
            return EnvironmentFault(kind, where, str(exc))
    return None
