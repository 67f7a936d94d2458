"""Creating a ref only where none is: a compare-and-swap against absence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstore.errors import ConcurrentUpdate, environment_fault
from gitstore.fs import retry
from gitstore.fs.place import Place
from gitstore.refs import transaction

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")


class _Exists(Exception):
    """Inside a creation's transaction: the ref is there (the lock is let go)."""


def create(place: Place, name: str, target: str, message: str) -> bool:
    """Create ``name`` at ``target`` only if it is absent, checked under the ref's
    lock (a compare-and-swap against absence): True if created, False if it exists.

    libgit2's own "create, do not overwrite" looks before it locks, so two
    creators in the same instant could both "create" the ref, the second over
    the first.  A lock another writer holds (a sibling creating the same name) is
    waited for: once it is gone the ref exists, or it is free again.
    """
    repo, gitdir = place.repo, place.gitdir
    for attempt in retry.until(transaction.WAIT_SECONDS, transaction.POLL_SECONDS):
        try:
            with repo.transaction() as txn:
                txn.lock_ref(name)
                if transaction.current(repo, name) is not None:
                    raise _Exists(name)
                txn.set_target(name, pygit2.Oid(hex=target), message=message)
            return True
        except _Exists:
            return False
        except (pygit2.GitError, OSError) as exc:  # the lock is another's (or the disk's)
            fault = environment_fault(exc, str(gitdir / name))
            if fault is not None:
                raise fault from None
            if transaction.current(repo, name) is not None:
                return False
            if attempt.last:
                raise transaction.blocker(
                    gitdir, [transaction.RefUpdate(name, None, target)]
                ) or ConcurrentUpdate(name) from None
    raise AssertionError("unreachable: the last try raises")
