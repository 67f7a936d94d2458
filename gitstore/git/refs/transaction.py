"""Multi-ref updates that a crash cannot leave half-done for long.

libgit2's ref transaction is atomic against other writers (every ref is
locked first) but not against a crash between its lock-file renames.  So an
update of several refs first writes an intent journal
(``<gitdir>/jp/ops/<id>.json``: every ref with its expected old and new
value), then runs the transaction, then deletes the journal.  ``repair``
(run when a store is opened) finishes whatever a journal describes: refs
still at their old value are moved forward, so the operation completes.
When none of them had moved, the operation is dropped; JP_HEAD, moved
whatever it held (``*``), may have moved alone (libgit2 renames in an order
of its own), so the journal also records what it held before and ``repair``
puts that back.  A deletion is jp's, made under ``packed-refs.lock`` as git
makes it (``_drop``), not libgit2's, which races ``git pack-refs``.

The writer holds an ``flock`` on its journal until it is done, so ``repair``
in another process never touches an operation that is still running.  A
writer killed while it held its ref locks leaves ``<ref>.lock`` files that
would block those refs for every writer, git's included; ``repair`` removes
them once the journal's writer is dead and the lock is older than
``STALE_LOCK_SECONDS`` (no live writer holds a ref lock that long).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitstore import faults
from gitstore.errors import (
    ConcurrentUpdate,
    EnvironmentFault,
    PackedRefsDamaged,
    RefBusy,
    StoreError,
    environment_fault,
)
from gitstore.fs import atomic, retry
from gitstore.fs.flock import claim
from gitstore.fs.place import Place
from gitstore.git.refs import files as refread
from gitstore.git.refs import packedform

if TYPE_CHECKING:
    import pygit2

    from gitstore.git.refs import bulk
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")
    bulk = lazy_module("gitstore.git.refs.bulk")  # a deletion, or a repair meeting a dead bulk writer

SYMBOLIC = "symbolic:"  # a value that names a ref: a symbolic ref's target
ANY = "*"  # an ``old`` value: whatever the ref holds now (JP_HEAD)
STALE_LOCK_SECONDS = 1.0
WAIT_SECONDS = 5.0  # how long a lock held by another process (git gc) is waited for
POLL_SECONDS = 0.05
BLIND_RETRIES = 3  # a commit failing this often with no lock seen is left to repair


class RefUpdate(NamedTuple):
    """Move ``name`` from ``old`` to ``new`` (None = absent).

    Values are commit ids, or ``symbolic:<refname>`` for a symbolic ref.
    ``old`` of ``"*"`` means "whatever it is now" (used for JP_HEAD).
    """

    name: str
    old: str | None
    new: str | None


def current(repo: pygit2.Repository, name: str) -> str | None:
    try:
        ref = repo.lookup_reference(name)
    except (KeyError, pygit2.InvalidSpecError):
        return None
    if ref.type == pygit2.enums.ReferenceType.SYMBOLIC:
        return SYMBOLIC + str(ref.target)
    return str(ref.target)


def _journal_dir(gitdir: Path) -> Path:
    return gitdir.joinpath(*refread.JOURNALS)


def _write_journal(
    gitdir: Path,
    updates: list[RefUpdate],
    message: str,
    before: dict[str, str | None] | None = None,
) -> tuple[Path, int]:
    """Write the journal; returns its path and a descriptor holding its ``flock``.
    ``before``: what each ref moved from ``*`` (JP_HEAD) held, for a roll-back."""
    folder = _journal_dir(gitdir)
    folder.mkdir(parents=True, exist_ok=True)
    # a random name, as uuid4's: `uuid` loads `platform` (3 ms of every write command)
    path = folder / f"{os.urandom(16).hex()}.json"
    tmp = path.with_suffix(".tmp")
    rows = [{"name": u.name, "old": u.old, "new": u.new} for u in updates]
    entry: dict[str, object] = {"message": message, "updates": rows}
    if before:
        entry["before"] = before
    data = json.dumps(entry).encode()
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # locked before the journal has its name
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        atomic.replace(tmp, path)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    return path, fd


class _CommitFailed(Exception):
    """libgit2 failed while renaming the lock files: some refs may have moved."""


def _run(place: Place, updates: list[RefUpdate], message: str, check: bool, wait: float) -> None:
    """One libgit2 transaction over ``updates``; the deletions are jp's (``_drop``),
    which waits up to ``wait`` seconds for ``packed-refs.lock`` (``RefBusy``:
    nothing moved)."""
    repo = place.repo
    prepared, removed = False, []
    if not check:  # finishing: a ref already moved is not locked again, since a failed
        # commit leaves the locks of refs it did not rename, and those would be ours
        updates = [u for u in updates if current(repo, u.name) != u.new]
    try:
        with repo.transaction() as txn:
            for u in updates:
                txn.lock_ref(u.name)
            for u in updates:
                now = current(repo, u.name)
                if check and u.old != ANY and now != u.old:
                    raise ConcurrentUpdate(u.name)
                if not check and (now == u.new or (u.old != ANY and now != u.old)):
                    continue  # done already, or moved by another writer since: leave it
                if u.new is None:
                    if now is not None:
                        removed.append(u.name)
                elif u.new.startswith(SYMBOLIC):
                    txn.set_symbolic_target(u.name, u.new[len(SYMBOLIC) :], message=message)
                else:
                    txn.set_target(u.name, pygit2.Oid(hex=u.new), message=message)
            faults.point("move:locked")
            prepared = True  # from here refs move: the deletions, then leaving the
            _drop(place.gitdir, txn, removed, wait)  # block renames the lock files
    except (pygit2.GitError, OSError, EnvironmentFault) as exc:
        if prepared:
            raise _CommitFailed(str(exc)) from exc
        raise
    _drop_reflogs(repo, removed)


def _drop(gitdir: Path, txn: pygit2.ReferenceTransaction, names: list[str], wait: float) -> None:
    """Delete ``names``, locked and checked in ``txn``, as git does (``bulk.drop``):
    libgit2's own deletion reads ``packed-refs`` before it locks the file, and a
    ``git pack-refs`` in between lost refs it had packed or brought the deleted
    one back.  A store that is not plain files, or takes no hard links, is left
    to libgit2."""
    try:
        if bulk.delete(gitdir, names, wait, POLL_SECONDS):
            return
    except RefBusy as exc:  # git packing past the wait: nothing moved
        raise RefBusy(names[0], exc.lock, by_maintenance=True) from None
    for name in names:
        txn.remove(name)


def _drop_reflogs(repo: pygit2.Repository, names: list[str]) -> None:
    """The reflogs of refs this transaction deleted (libgit2's transaction keeps
    them), gone with them as git deletes them (``bulk.forget``); a ref made again
    meanwhile keeps its new log."""
    bulk.forget(Path(repo.path), [name for name in names if current(repo, name) is None])


def apply(
    place: Place,
    updates: list[RefUpdate],
    message: str,
    wait: float | None = None,
) -> None:
    """All of ``updates`` or none of them; a crash midway is finished by ``repair``.

    A ref whose lock another process holds (git's maintenance packing refs,
    another writer) is waited for up to ``wait`` seconds, then ``RefBusy``.
    The journal goes only once every ref is seen at its new value.
    """
    deadline = retry.deadline(WAIT_SECONDS if wait is None else wait)
    _check_packed(place.gitdir, updates)
    before = {u.name: current(place.repo, u.name) for u in updates if u.old == ANY}
    journal, fd = _write_journal(place.gitdir, updates, message, before)
    try:
        faults.point("move:journal-written")
        try:
            _commit(place, updates, message, deadline)
        except _CommitFailed as exc:
            # libgit2 renames lock files one by one: a failure there may leave some
            # refs moved, and it leaves the locks of the others behind.  Those are
            # ours; every ref was checked, so drop them and finish now.
            _drop_own_locks(place, updates)
            _finish(place, firm(updates, before), message, deadline, str(exc))
        except BaseException:
            journal.unlink(missing_ok=True)  # nothing moved
            raise
        faults.point("move:committed")
        _finish(place, firm(updates, before), message, deadline, "")
        journal.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _check_packed(gitdir: Path, updates: list[RefUpdate], read: bool = False) -> None:
    """Before anything moves: a deletion rewrites ``packed-refs``, which libgit2 reads
    whole only then, after the refs before it in the commit have moved; a damaged
    file would leave the update part-way (an archive both live and archived).  So
    a damaged one stops the update here, nothing changed, with the fix named.
    ``read``: libgit2 already failed reading refs, so look whatever the updates."""
    if not read and not any(u.new is None for u in updates):
        return
    why = packedform.damage(gitdir)
    if why is not None:
        raise PackedRefsDamaged(
            str(gitdir),
            f"packed-refs is damaged ({why}); nothing was changed; "
            "`jp doctor --fix` rebuilds it, then run this command again",
        )


def _commit(place: Place, updates: list[RefUpdate], message: str, deadline: float) -> None:
    """Run the transaction, waiting while another process holds a lock it needs."""
    gitdir = place.gitdir
    for attempt in retry.before(deadline, POLL_SECONDS):
        blocker = blocking(gitdir, updates)
        if blocker is None:
            try:
                _run(place, updates, message, check=True, wait=_left(deadline))
                return
            except RefBusy as exc:  # packed-refs.lock, held past the deadline: nothing moved
                blocker = exc
            except (pygit2.GitError, OSError) as exc:  # locking failed: nothing moved
                fault = environment_fault(exc, str(gitdir))
                if fault is not None:
                    raise fault from None
                blocker = blocking(gitdir, updates) or _held(exc, updates)
                if blocker is None:
                    _check_packed(gitdir, updates, read=True)
                    raise ConcurrentUpdate(str(exc)) from None
        if attempt.last:
            raise blocker
        if pending(gitdir):  # a killed writer's locks: its journal says whose they are
            repair(place)
    raise AssertionError("unreachable: the last try raises")


def _left(deadline: float) -> float:
    """The seconds left before ``deadline`` (none when it is past)."""
    return max(0.0, deadline - time.monotonic())


def _finish(
    place: Place,
    updates: list[RefUpdate],
    message: str,
    deadline: float,
    failure: str,
) -> None:
    """Make sure every ref reached its new value, finishing what is left.

    Raises (leaving the journal for ``repair``) when a ref stays behind: a lock
    held by another process past ``deadline``, or a commit that keeps failing.
    """
    repo, gitdir = place.repo, place.gitdir
    left = unmoved(repo, updates)
    if not left:
        return
    blind = 0  # attempts that failed with no lock in sight
    for attempt in retry.before(deadline, POLL_SECONDS):
        held: RefBusy | None = None  # the lock this attempt met (git packing refs)
        try:
            _run(place, updates, message, check=False, wait=_left(deadline))
        except RefBusy as exc:  # packed-refs.lock held past the deadline
            held = RefBusy(exc.ref, exc.lock, exc.by_maintenance, partial=True)
        except _CommitFailed as exc:
            _drop_own_locks(place, updates)  # the locks it left are ours
            held = _held(exc, left, partial=True)
        except (pygit2.GitError, OSError) as exc:  # locking failed (the locks are not ours)
            fault = environment_fault(exc, str(gitdir))
            if fault is not None:
                raise fault from None
            held = _held(exc, left, partial=True)
        left = unmoved(repo, updates)
        if not left:
            return
        # a lock git holds for a moment (pack-refs) may be gone before it is seen:
        # a few quick tries, and while a lock is in sight until the deadline
        blocker = blocking(gitdir, left, partial=True) or held
        blind = blind + 1 if blocker is None else blind
        if attempt.last or blind > BLIND_RETRIES:
            if blocker is not None:
                raise blocker
            reason = failure or f"{left[0].name} did not move"
            why = packedform.damage(gitdir)
            fix = "the next jp command repairs the store"  # it runs this journal again
            if why is not None:  # which fails again until the file is rebuilt
                reason, fix = f"packed-refs is damaged: {why}", (
                    "`jp doctor --fix` rebuilds it, and the next jp command then finishes it"
                )
            raise StoreError(
                str(gitdir), f"a ref update failed part-way ({reason}); {fix}, then run this one again"
            )
    raise AssertionError("unreachable: the last try raises")


# libgit2 looks for the lock file, then creates it: a lock taken between the two
# (git pack-refs pruning the ref) fails the second, with its own words
_LOCK_FILE = r"failed to (?:lock|create locked) file '([^']+\.lock)'(?: for writing|: File exists)"


def _held(exc: BaseException, updates: list[RefUpdate], partial: bool = False) -> RefBusy | None:
    """The lock another process held when libgit2 could not take it (it names the
    file; gone again by the time we look when git holds it briefly, as pack-refs does)."""
    found = re.search(_LOCK_FILE, str(exc))  # compiled only by a failure (re's cache)
    if found is None or not updates:
        return None
    lock = found.group(1)
    name = next((u.name for u in updates if lock.endswith(f"/{u.name}.lock")), updates[0].name)
    return RefBusy(name, lock, by_maintenance=lock.endswith("packed-refs.lock"), partial=partial)


def unmoved(repo: pygit2.Repository, updates: list[RefUpdate]) -> list[RefUpdate]:
    """The updates whose ref still holds its old value (a ``*`` aside: ``firm``
    gives JP_HEAD the value it held, so that it counts)."""
    return [
        u for u in updates if u.old != ANY and u.old != u.new and current(repo, u.name) == u.old
    ]


def firm(updates: list[RefUpdate], before: Mapping[str, str | None]) -> list[RefUpdate]:
    """``updates`` with each ``*`` given the value its ref held when the journal was
    written (``before``).  libgit2 may fail on JP_HEAD alone after the others moved:
    so it counts as left while it holds that value, and the journal stays until it
    moves; one another writer moved since is theirs, left alone."""
    return [
        RefUpdate(u.name, before[u.name], u.new) if u.old == ANY and u.name in before else u
        for u in updates
    ]


def blocking(gitdir: Path, updates: list[RefUpdate], partial: bool = False) -> RefBusy | None:
    """The lock another process holds that would stop ``updates``, if any.

    Deleting a ref takes ``packed-refs.lock`` (``_drop``), which git's maintenance
    (``gc``, ``pack-refs``) holds while it packs.
    """
    for u in updates:
        lock = gitdir / f"{u.name}.lock"
        if lock.exists():
            return RefBusy(u.name, str(lock), partial=partial)
    packed = gitdir / "packed-refs.lock"
    for u in updates:
        if u.new is None and packed.exists():
            return RefBusy(u.name, str(packed), by_maintenance=True, partial=partial)
    return None


def _drop_own_locks(place: Place, updates: list[RefUpdate]) -> None:
    """After a failed commit: the lock files of refs not renamed are still ours, and
    so are those of deleted refs (``_drop`` deletes them before the commit, which
    may have failed before their turn to be let go)."""
    for u in updates:
        if u.new is None or current(place.repo, u.name) != u.new:
            (place.gitdir / f"{u.name}.lock").unlink(missing_ok=True)


def _stale_locks(gitdir: Path, updates: list[RefUpdate], older_than: float) -> bool:
    """Remove the ref locks a dead writer left; True if some are still too young to judge."""
    young = False
    for u in updates:
        lock = gitdir / f"{u.name}.lock"
        try:
            age = time.time() - lock.stat().st_mtime
        except OSError:
            continue
        if age < older_than:
            young = True
            continue
        lock.unlink(missing_ok=True)
    return young


def pending(gitdir: Path) -> bool:
    """Whether any operation left a journal (so ``repair`` has work), from one listing."""
    try:
        return any(True for _ in os.scandir(_journal_dir(gitdir)))
    except OSError:
        return False


def repair(place: Place, stale_after: float = STALE_LOCK_SECONDS) -> int:
    """Finish every operation a crash interrupted.  Returns how many were found."""
    folder = _journal_dir(place.gitdir)
    if not folder.is_dir():
        return 0
    found = 0
    # a dead writer's packed-refs.lock first: a journal's deletion waits for it
    for path in sorted(folder.iterdir(), key=lambda p: (p.suffix != bulk.SUFFIX, p.name)):
        if path.suffix not in (".json", ".tmp", bulk.SUFFIX):
            continue
        fd = claim(path)
        if fd is None:
            continue  # its writer is still at work (or just finished)
        try:
            if path.suffix == bulk.SUFFIX:  # a bulk creation died: its lock goes
                bulk.recover(place.gitdir, path, fd)
                continue
            if path.suffix == ".tmp":  # died while writing the journal: nothing moved
                if time.time() - path.stat().st_mtime >= stale_after:
                    path.unlink(missing_ok=True)
                continue
            found += 1
            _repair_one(place, path, stale_after)
        except OSError:
            continue
        finally:
            os.close(fd)
    return found


def _roll_back(place: Place, back: list[RefUpdate], message: str) -> bool:
    """Put back the ``*`` refs (JP_HEAD) still at the value a dead operation gave
    them (``back``: from that value to the one before); False if one would not move.
    One another writer moved since is left alone."""
    repo = place.repo
    back = [u for u in back if u.old != u.new and current(repo, u.name) == u.old]
    if not back:
        return True
    try:
        _run(place, back, message, check=False, wait=STALE_LOCK_SECONDS)
    except _CommitFailed:
        _drop_own_locks(place, back)
        return False
    except (pygit2.GitError, OSError, ConcurrentUpdate, RefBusy):
        return False
    return not unmoved(repo, back)


def _repair_one(place: Place, path: Path, stale_after: float) -> None:
    repo = place.repo
    try:
        data = json.loads(path.read_text())
        updates = [RefUpdate(**u) for u in data["updates"]]
        message = str(data.get("message") or "jp repair")
        before = {
            str(k): v for k, v in (data.get("before") or {}).items() if isinstance(v, str | None)
        }  # none in a journal of an older jp: JP_HEAD then neither rolled back nor checked
        back = [
            RefUpdate(u.name, u.new, before[u.name])
            for u in updates
            if u.old == ANY and u.name in before
        ]
    except (ValueError, KeyError, TypeError, AttributeError):
        path.unlink(missing_ok=True)
        return
    if _stale_locks(place.gitdir, updates, stale_after):
        return  # a lock too young to call stale: the next command looks again
    # Only refs the operation itself moved tell that its commit began (JP_HEAD,
    # "*", decides nothing); a ref moved elsewhere by another writer since is
    # not a sign of it, and rolling forward then would archive a live
    # conversation's old tip, for one.
    landed = any(current(repo, u.name) == u.new for u in updates if u.old != ANY and u.old != u.new)
    if not landed:  # the writer died before any ref moved: but JP_HEAD may have
        # (libgit2 renames in an order of its own), so it goes back where it was
        if _roll_back(place, back, f"{message} (rolled back)"):
            path.unlink(missing_ok=True)
        return
    updates = firm(updates, before)
    try:  # some moved (or all did): move the rest that are still where they were
        _run(place, updates, f"{message} (repaired)", check=False, wait=STALE_LOCK_SECONDS)
    except _CommitFailed:
        _drop_own_locks(place, updates)
        return
    except (pygit2.GitError, OSError, ConcurrentUpdate, RefBusy):
        return  # git gc holding packed-refs.lock that long: next time
    if unmoved(repo, updates):
        return  # something still blocks a ref (git gc holding packed-refs): next time
    path.unlink(missing_ok=True)
