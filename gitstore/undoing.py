"""``jp undo`` and ``jp op restore`` on a store: compare-and-swap ref moves.

Undo reverses the latest operation not yet undone (``undo_target``):
every ref it moved goes back to its old value in one journaled
transaction, but only if the ref still holds what the operation left it
at; otherwise ``UndoConflict`` names the ref and nothing moves (``force``
overwrites it).  Restore sets every ref that a later operation moved back
to its value right after the chosen operation, whatever it holds now.
Both are operations themselves (recorded by the store's ``ops``), so
they can be undone too.  This module is gitstore's top floor: it takes back
ref moves (``store``), the operation log's records (``oplog``) and a remote's
configuration (``sync.remotestate``) alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitstore.errors import (
    ConcurrentUpdate,
    ConversationBusy,
    NothingToUndo,
    OplogBehind,
    UndoConflict,
    UnknownOperation,
)
from gitstore.fs import flock, retry
from gitstore.git import refs
from gitstore.git.refs import transaction
from gitstore.git.refs.transaction import RefUpdate
from gitstore.oplog import log as oplog
from gitstore.oplog import recorder, remotediff
from gitstore.oplog.model import Move, Op, RemoteChange
from gitstore.sync import remotestate

if TYPE_CHECKING:
    from gitstore.store.core import Store

__all__ = ["NothingToUndo", "Result", "UndoConflict", "UnknownOperation", "find", "restore", "undo"]


@dataclass(frozen=True)
class Result:
    op: Op  # the operation undone, or restored to
    moved: list[Move]  # what changed now


def _current(store: Store, names: list[str]) -> dict[str, str | None]:
    return {name: transaction.current(store.place.repo, name) for name in names}


def _apply(store: Store, wanted: Mapping[str, str | None], reason: str) -> list[Move]:
    now = _current(store, list(wanted))
    updates = [RefUpdate(ref, now[ref], new) for ref, new in wanted.items() if now[ref] != new]
    if updates:
        store.refs.move(updates, reason)
    return [Move(u.name, u.old, u.new) for u in updates]


Remotes = dict[str, Mapping[str, Any] | None]  # a remote's name -> its settings (None: none)
RETRIES = 5
HOLD_WAIT = 3.0  # seconds undo waits for a command holding a conversation it moves


@contextmanager
def _holding(store: Store, names: Iterable[str], refused: str) -> Iterator[None]:
    """Hold every conversation whose ref is in ``names`` (a running ``jp q`` holds its
    own for the whole turn): wait a moment for each, then refuse, moving nothing."""
    found = (refs.conversation_id(name) for name in names)
    cids = sorted({c[0] for c in found if c is not None})
    with ExitStack() as stack:
        for cid in cids:
            try:
                stack.enter_context(store.refs.hold(cid, wait=HOLD_WAIT))
            except ConversationBusy as exc:
                exc.refused = refused
                raise
        yield


def _settle(store: Store, names: Iterable[str], refused: str) -> None:
    """Wait while a running command that moved one of the conversations in ``names``
    has not written its operation (it let go of the conversation a moment before):
    then the log holds it.  Refuse if it does not finish in ``HOLD_WAIT``."""
    wanted = {n for n in names if refs.conversation_id(n) is not None}
    if not wanted:
        return
    for attempt in retry.until(HOLD_WAIT, 0.05):
        busy = sorted(r for moved in recorder.running(store.place.gitdir).values() for r in moved)
        touched = [r for r in busy if r in wanted]
        if not touched:
            return
        if attempt.last:
            found = refs.conversation_id(touched[0])
            raise ConversationBusy(found[0] if found else touched[0], refused)


def _check_log(store: Store, doing: str) -> None:
    """Refuse while operations of earlier commands are not in the log (the repair every
    command runs could not write them): the log's newest is not what ran last."""
    behind = recorder.abandoned(store.place.gitdir)
    if behind:
        lock = store.place.gitdir / f"{oplog.REF}.lock"
        age = flock.ref_lock_age(lock)
        raise OplogBehind(len(behind), str(lock) if age is not None else None, age, doing)


def _check_remotes(store: Store, op: Op) -> None:
    """Refuse before anything moves when a remote key ``op`` changed was changed since."""
    seen: set[str] = set()
    for change in reversed(op.remotes):
        if change.name in seen:
            continue
        seen.add(change.name)
        current = remotestate.snapshot(store.place.repo, change.name)
        bad = remotediff.conflicts(change.old, change.new, current)
        if bad:
            key = bad[0]
            raise UndoConflict(
                op.id,
                f"remote.{change.name}.{key}",
                remotediff.shown(change.new, key),
                remotediff.shown(current, key),
            )


def _revert_remote(
    store: Store,
    name: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    op_id: str | None,
    force: bool = False,
) -> None:
    now, wanted = remotestate.revert(store.place.repo, name, before, after, op_id, force)
    if now != wanted:
        store.ops.remote(RemoteChange(name, now, wanted))


def undo_target(ops: Sequence[Op]) -> Op | None:
    """The operation ``jp undo`` reverses, from the log newest first.

    An undo is skipped together with the operation it undid, so undo run
    again reverses the operation before (as jj does).
    """
    undone: set[str] = set()
    for op in ops:
        if op.id in undone:
            continue
        if op.undoes is None:
            return op
        undone.add(op.undoes)
    return None


def state_after(ops: Sequence[Op], target: str) -> tuple[dict[str, str | None], Remotes, Remotes]:
    """What the operations after ``target`` (the log newest first) changed: each ref
    they moved -> its value right after ``target`` (the old value of the earliest
    that moved it); each remote they changed -> its settings right after
    ``target``; and -> what the newest such change left it at (what taking those
    changes back takes back).  Refs and remotes none changed are not named."""
    refs_after: dict[str, str | None] = {}
    remotes_after: Remotes = {}
    remotes_left: Remotes = {}
    for op in ops:
        if op.id == target:
            return refs_after, remotes_after, remotes_left
        for move in op.moves:
            refs_after[move.ref] = move.old
        for change in op.remotes:
            remotes_after[change.name] = change.old
        for change in reversed(op.remotes):
            remotes_left.setdefault(change.name, change.new)
    raise KeyError(target)


def undo(store: Store, force: bool = False) -> Result:
    """Reverse the latest operation not undone yet.

    The conversations it moves are held first, and a command that moved one of
    them and has not yet written its operation is waited for; if the log then
    names another latest operation, undo starts over with that one.
    """
    _check_log(store, "undone")
    for _ in range(RETRIES):
        target = undo_target(store.ops.list())
        if target is None:
            raise NothingToUndo
        moves = [Move(m.ref, m.new, m.old) for m in reversed(target.moves)]
        with _holding(store, [m.ref for m in moves], "undo"):
            _settle(store, [m.ref for m in moves], "undo")
            latest = undo_target(store.ops.list())
            if latest is None or latest.id != target.id:
                continue  # a command finished meanwhile: undo that one
            return _undo(store, target, moves, force)
    raise ConcurrentUpdate(oplog.REF)


def _undo(store: Store, target: Op, moves: list[Move], force: bool) -> Result:
    now = _current(store, [m.ref for m in moves])
    bad = [m for m in moves if now[m.ref] != m.old]  # changed since the operation
    if bad and not force:
        raise UndoConflict(target.id, bad[0].ref, bad[0].old, now[bad[0].ref])
    if not force:
        _check_remotes(store, target)
    store.ops.mark(undoes=target.id)
    moved = _apply(store, {m.ref: m.new for m in moves}, f"jp undo {target.id}")
    for change in reversed(target.remotes):
        _revert_remote(store, change.name, change.old, change.new, target.id, force)
    return Result(target, moved)


def find(store: Store, prefix: str) -> tuple[Op, list[Op]]:
    """The one operation whose id starts with ``prefix``, and the whole log."""
    log = store.ops.list()
    text = prefix.strip().lower()
    found = [op for op in log if text and op.id.startswith(text)]
    if len(found) != 1:
        raise UnknownOperation(prefix, len(found))
    return found[0], log


def restore(store: Store, prefix: str) -> Result:
    """Set the refs back to how they were right after the operation ``prefix`` names."""
    _check_log(store, "restored")
    target, log = find(store, prefix)
    wanted = state_after(log, target.id)[0]
    with _holding(store, wanted, "op restore"):
        _settle(store, wanted, "op restore")
        target, log = find(store, prefix)
        wanted, remotes, left = state_after(log, target.id)
        store.ops.mark(restores=target.id)
        moved = _apply(store, wanted, f"jp op restore {target.id}")
        for name, value in remotes.items():
            _revert_remote(store, name, value, left[name], None)
    return Result(target, moved)
