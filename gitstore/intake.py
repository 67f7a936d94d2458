"""The store's one door: every event, note and operation record enters here.

- ``checked``: each event validated and fitted to the size limits, with its
  ``event.json`` bytes, before any object is written (the log, an import's
  batch and its stream take their events from it);
- ``land``: one commit on one ref built from what the ref holds (a note's,
  an operation record's), its objects written under git's gc lock and the
  ref moved by compare-and-swap, made again on top of a writer ahead;
- ``move``: the store's refs moved (``update_refs``), the operation log told.

A batch, a session's identity or a redaction applies here, once per kind.
docs/architecture.md, "The write seam", follows a turn, an import and a pull
through it; a write beside git's prune is ``git/pruned.py``'s rule.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from functools import partial
from typing import TYPE_CHECKING, Protocol

from gitstore.boundary import Limits, fit_event
from gitstore.errors import ConcurrentUpdate, LockedRef, RefBusy, environment_fault
from gitstore.events import Event, commits, validate
from gitstore.fs import flock, retry
from gitstore.fs.place import Place
from gitstore.git import objects, pruned
from gitstore.git.refs.transaction import RefUpdate
from gitstore.git.refs.update import update_refs

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

RETRIES = 60  # tries of a record that other writers keep getting ahead of
Verify = bool | Callable[[], Iterable[str]]  # a move's refs looked up, or named by its writer


class Record(Protocol):
    """The operation log's hook around a ref move (``store.ops.moving``)."""

    def __call__(
        self,
        updates: Sequence[RefUpdate],
        partial: tuple[type[BaseException], ...] = (),
        verify: Verify = False,
    ) -> AbstractContextManager[None]: ...


# one attempt of a record: the ref's value it was made on, the new commit and the
# objects written for it; None when there is nothing to change
Attempt = Callable[[], "tuple[str | None, str | pygit2.Oid, pruned.Written] | None"]


def no_record(
    updates: Sequence[RefUpdate],
    partial: tuple[type[BaseException], ...] = (),
    verify: Verify = False,
) -> AbstractContextManager[None]:
    """No operation log (a store's own writes outside any command, tests)."""
    return contextlib.nullcontext()


def checked(events: Iterable[Event], limits: Limits) -> Iterator[tuple[Event, bytes]]:
    """Each of ``events`` validated (``CorruptEvent`` names the first that is not,
    by its place), fitted within ``limits`` (``boundary.fit_event``), with its
    ``event.json`` bytes; read as they are asked for (an import's stream)."""
    for n, event in enumerate(events):
        valid = validate(event, f"event {n}")
        data = commits.blob_bytes(valid)
        fitted = fit_event(valid, data, limits)
        yield (valid, data) if fitted is None else (fitted, commits.blob_bytes(fitted))


def move(
    place: Place,
    updates: Sequence[RefUpdate],
    message: str,
    record: Record = no_record,
    *,
    atomic: bool = True,
    reflog: bool = True,
    wait: float | None = None,
    partial: tuple[type[BaseException], ...] = (),
) -> set[str]:
    """Move the store's refs of ``updates`` (``update_refs``), the operation log
    told of it around the move; the names moved.  Not ``atomic`` (creations made
    where their names are free), the log records only those made.  A transaction
    stopped part way (``RefBusy.partial``, or an error of a ``partial`` type) is
    recorded as done: its journal finishes it."""
    made: set[str] = set()
    verify: Verify = False if atomic else (lambda: made)
    half_done: RefBusy | None = None
    with record(updates, partial, verify):
        try:
            made |= update_refs(place, updates, message, atomic=atomic, reflog=reflog, wait=wait)
        except RefBusy as exc:
            if not exc.partial:
                raise
            half_done = exc  # some moved: their journal finishes the rest, recorded as done
    if half_done is not None:
        raise half_done
    return made


def land(
    place: Place, ref: str, attempt: Attempt, message: str, record: Record = no_record
) -> str | None:
    """One commit on ``ref`` made by ``attempt()`` from what the ref holds (a note's,
    an operation's), its objects written and the ref moved onto it by
    compare-and-swap; made again on top of another writer that moved it first.
    The new commit's id; None when ``attempt`` found nothing to change.

    A lock file that outlived its writer raises ``LockedRef`` at once, one that
    stays through every try ``RefBusy``; a fault of the disk raises as one; a
    writer ahead every time, ``ConcurrentUpdate``."""
    gitdir = place.gitdir
    folder = objects.folder(gitdir)
    with pruned.shielded(gitdir):  # no gc starts between the objects and the ref
        for _ in retry.jittered(RETRIES):
            step = pruned.once(partial(pruned.reread, attempt, gitdir, ref), folder)
            if step is None:
                return None
            old, oid, written = step
            try:
                written.refresh()  # what a prune took before the move
                try:
                    move(place, [RefUpdate(ref, old, str(oid))], message, record, wait=0)
                except (ConcurrentUpdate, RefBusy, pygit2.GitError, OSError) as exc:
                    fault = environment_fault(exc, str(gitdir / ref))
                    if fault is not None:  # a full disk, a read-only store: not another writer
                        raise fault from None
                    locked = stale_lock(place, ref)
                    if locked is not None:
                        raise locked from None
                    continue  # another writer moved it first: made again on top
                written.settle()  # what a prune beside took as the ref moved
                return str(oid)
            finally:
                written.close()  # a pack's shelter from git's repack ends, moved or not
    raise left_lock(place, ref) or ConcurrentUpdate(ref)


def left_lock(place: Place, ref: str) -> LockedRef | RefBusy | None:
    """The error for ``ref`` when its lock file is still there after every try of
    ``land``: a lock, named as one (a killed writer's, while it is young), not
    another writer getting ahead."""
    lock = place.gitdir / f"{ref}.lock"
    if not lock.exists():
        return None
    return stale_lock(place, ref) or RefBusy(ref, str(lock))


def stale_lock(place: Place, ref: str) -> LockedRef | None:
    """The error for ``ref`` when its lock file outlived its writer."""
    lock = place.gitdir / f"{ref}.lock"
    age = flock.ref_lock_age(lock)
    if age is None or age < flock.REF_LOCK_STALE:
        return None
    return LockedRef(ref, str(lock), age)
