"""Moving refs: one function, ``update_refs``, whatever the number or the case.

Four mechanisms move refs, each the cheapest for its case; ``choose`` picks one
from the updates alone, and every caller goes through ``update_refs``:

- ``LOOSE`` (``loose.swap``): one ref that exists moving from one object id to
  another (a conversation's append, an operation record): its lock file, its
  value read under the lock (loose file, else its ``packed-refs`` line found by
  bisection), its reflog line, a rename.  libgit2 would parse all of
  ``packed-refs`` first (80 ms at 100,000 refs).  A store or ref it does not
  handle (a symbolic ref, refs under a folder link) falls back to ``TRANSACTION``.
- ``TRANSACTION`` (``transaction.apply``): several refs, or a deletion or a
  symbolic ref: libgit2's transaction behind an intent journal, so a crash part
  way is finished by the next command (``repair``).
- ``GIT`` (``git update-ref --stdin``): in a process that has not loaded
  libgit2 (an import), one ref that ``LOOSE`` or ``TRANSACTION`` would move
  (a symbolic one aside): their checks need libgit2, whose loading costs more
  than git's whole process.  Several creations made each where its
  name is free (``atomic=False``), fewer than ``BULK_AT``, or an import's batch
  that ``PACKED`` cannot write (no hard links, git's lock held past the wait):
  one git process creates them in one transaction of its own, with their
  reflog lines (libgit2 would parse all of ``packed-refs`` for each); from
  ``PACK_AT`` refs they are packed after (``git pack-refs``) so that listings
  do not read one file per ref.  A crash part way leaves refs that each name a
  whole chain, and the operation log lists them for ``jp undo``.
- ``PACKED`` (``bulk.create``): creations with no reflog (``reflog=False``: the
  copies of a first pull, as ``git clone`` writes them; a pull's hundreds of
  new conversations; a push's new remote-tracking copies),
  and ``BULK_AT`` creations or more made
  each where its name is free (``atomic=False``: an import's batch, where a
  name another writer took is created again under a fresh id): straight into
  one new ``packed-refs`` under git's own lock, no loose file and no reflog
  per ref (those file creations were half the CPU of an import of 250 small
  conversations: 0.86 s against 0.56 s).  A crash part way leaves refs that
  each name a whole chain, and the operation log lists them for ``jp undo``.

Failures are the same whichever moved the refs: a ref not at its old value (a
stale value, a missing ref, a name taken) raises ``ConcurrentUpdate`` and moves
nothing; a lock held past the wait raises ``RefBusy``; a fault of the disk
raises ``EnvironmentFault``.  ``atomic=False`` (creations only) instead creates
each ref whose name is free and returns the names created.
``tests/unit/gitstore/test_gitstore_update_refs.py`` runs the same updates
through each mechanism and reads the result with plain git.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gitstore.errors import ConcurrentUpdate, RefBusy, environment_fault
from gitstore.fs.place import Place
from gitstore.git.refs import bulk, loose, transaction
from gitstore.git.refs.transaction import ANY, SYMBOLIC, RefUpdate
from gitstore.lazy import loaded

if TYPE_CHECKING:
    from gitstore.git import command
else:
    from gitstore.lazy import lazy_module

    command = lazy_module("gitstore.git.command")  # git runs for a batch only: not on a read

LOOSE, TRANSACTION, GIT, PACKED = "loose", "transaction", "git update-ref", "packed-refs"
BULK_AT = 100  # creations at once from which they go straight into packed-refs
PACK_AT = 100  # refs created by one git process from which git packs the refs after
_HEX = frozenset("0123456789abcdef")


def _oid(value: str | None) -> bool:
    return value is not None and len(value) == 40 and _HEX.issuperset(value)


def choose(updates: Sequence[RefUpdate], reflog: bool = True, atomic: bool = True) -> str:
    """The mechanism for ``updates`` (see the module's text)."""
    if not reflog:  # creations (``update_refs`` checks): only packed-refs writes none
        return PACKED
    creations = all(u.old is None and _oid(u.new) for u in updates)
    if len(updates) == 1 and _oid(updates[0].old) and _oid(updates[0].new):
        return LOOSE
    if creations and not atomic and len(updates) >= BULK_AT:
        return PACKED
    if creations and not atomic and len(updates) > 1:
        return GIT
    return TRANSACTION


def update_refs(
    place: Place,
    updates: Sequence[RefUpdate],
    message: str,
    *,
    atomic: bool = True,
    reflog: bool = True,
    wait: float | None = None,
    how: str | None = None,
    stage: str = "packed",
) -> set[str]:
    """Move each ref of ``updates`` from its ``old`` value to its ``new`` one; the
    names moved.  ``atomic``: all or none (``ConcurrentUpdate``, ``RefBusy``).
    Not ``atomic`` (creations only): each ref created where its name is free.
    ``how`` forces a mechanism (the parity test); else ``choose`` picks it.
    ``stage``: the name of a ``PACKED`` rewrite's crash points (``faults``).

    Creations with no reflog (``PACKED``) that cannot be written so (no hard
    links, git's lock held past the wait) raise ``bulk.NoHardLinks`` or
    ``RefBusy``, nothing written: the caller moves them another way."""
    updates = list(updates)
    if not updates:
        return set()
    how = how or choose(updates, reflog, atomic)
    if (not atomic or not reflog) and any(u.old is not None for u in updates):
        raise ValueError("only creations may be made one by one, or with no reflog")
    if how == PACKED:
        try:
            return _packed(place, updates, atomic, wait, stage)
        except (bulk.NoHardLinks, RefBusy):
            if atomic or not reflog:
                raise
            how = GIT  # an import's batch: through git instead
    if how in (LOOSE, TRANSACTION) and _alone(updates) and not loaded("pygit2"):
        how = GIT  # they need libgit2: one git process costs less than loading it
    if how == GIT:
        return _git(place, updates, message, atomic)
    if how == LOOSE and _loose(place, updates, message):
        return {updates[0].name}
    if atomic:
        transaction.apply(place, updates, message, wait)
        return {u.name for u in updates}
    return {u.name for u in updates if create(place, u.name, str(u.new), message)}


def _alone(updates: list[RefUpdate]) -> bool:
    """One ref, not symbolic: git's own transaction moves it as safely."""
    return len(updates) == 1 and not (updates[0].new or "").startswith(SYMBOLIC)


def _loose(place: Place, updates: list[RefUpdate], message: str) -> bool:
    """One ref moved by ``loose.swap``; False when it is not a case swap handles."""
    (u,) = updates
    assert u.old is not None and u.new is not None
    repo = place.repo
    if u.new not in repo:  # libgit2 refuses a ref to a missing object: so does this
        raise ConcurrentUpdate(f"{u.name}: the object {u.new} is missing")
    log = f"{loose.identity(repo)}\t{message}" if loose.logged(repo, u.name) else None
    try:
        return loose.swap(place.gitdir, u.name, u.old, u.new, log)
    except loose.Held:
        return False  # the transaction waits for the lock, as for several refs
    except loose.Refused as exc:
        raise ConcurrentUpdate(str(exc)) from None


def _packed(
    place: Place, updates: list[RefUpdate], atomic: bool, wait: float | None, stage: str
) -> set[str]:
    wanted = {u.name: str(u.new) for u in updates}
    limit = transaction.WAIT_SECONDS if wait is None else wait
    if atomic:
        taken = [n for n in wanted if transaction.current(place.repo, n) is not None]
        if taken:
            raise ConcurrentUpdate(f"{taken[0]}: exists already")
    try:
        made = set(bulk.create(place.gitdir, wanted, limit, stage=stage))
    except OSError as exc:  # a full disk, a read-only store: named as such
        raise environment_fault(exc, str(place.gitdir)) or exc from None
    if atomic and len(made) < len(wanted):
        raise ConcurrentUpdate(f"{sorted(set(wanted) - made)[0]}: created by another writer")
    return made


def _line(u: RefUpdate) -> str:
    if u.new is None:
        return f"delete {u.name}\0{'' if u.old in (None, ANY) else u.old}\0"
    if u.new.startswith(SYMBOLIC):
        return f"symref-update {u.name}\0{u.new[len(SYMBOLIC) :]}\0"
    if u.old is None:
        return f"create {u.name}\0{u.new}\0"
    return f"update {u.name}\0{u.new}\0{'' if u.old == ANY else u.old}\0"


def _git(place: Place, updates: list[RefUpdate], message: str, atomic: bool) -> set[str]:
    """One ``git update-ref --stdin`` transaction (git leaves every ref as it was
    when one cannot move); not ``atomic``, the refs it could not create are then
    created one by one where their names are free."""
    data = "".join(_line(u) for u in updates).encode()
    args = ["update-ref", "--create-reflog", "-z", "--stdin", "-m", message]
    done = command.run(place.gitdir, args, data, check=False)
    if done.returncode == 0:
        if len(updates) >= PACK_AT:  # loose refs: every listing would read each file
            command.run(place.gitdir, ["pack-refs", "--all"], check=False)
        return {u.name for u in updates}
    said = command.error_lines(done.stderr.decode("utf-8", "replace"))
    fault = environment_fault(OSError(said), str(place.gitdir))
    if fault is not None:  # a read-only store, a full disk: not a name taken
        raise fault
    if atomic:  # a lock held reads as for the other mechanisms
        raise transaction.blocking(place.gitdir, updates) or ConcurrentUpdate(said)
    return {u.name for u in updates if create(place, u.name, str(u.new), message)}


def create(place: Place, name: str, target: str, message: str) -> bool:
    """Create ``name`` at ``target`` only if it is absent, checked under the ref's
    lock by the journaled transaction (a compare-and-swap against absence): True if
    created, False if it exists.  libgit2's own "create, do not overwrite" looks
    before it locks, so two creators in the same instant could both "create" the
    ref, the second over the first.  A lock another writer holds (a sibling
    creating the same name) is waited for, as for any move."""
    try:
        transaction.apply(place, [RefUpdate(name, None, target)], message)
    except ConcurrentUpdate:
        return False
    return True


__all__ = ["BULK_AT", "GIT", "LOOSE", "PACK_AT", "PACKED", "TRANSACTION", "choose", "create"]
__all__ += ["update_refs"]
