"""A write beside git's prune: one rule, here.

jp's own maintenance keeps git's grace period (``gc --auto``, two weeks for an
unreachable object), which takes nothing a write has just made.  A user's
``git gc --prune=now`` (or ``git prune --expire=now``) deletes every loose
object that was unreachable when its walk began, until it ends: the objects
of a write whose ref had not moved yet are among them.  git's documentation
calls that unsafe beside writers and does not defend it; jp does not shelter
its writes from it either.  What jp does:

- **The folder race** (not optional): any prune, grace or not, removes the
  ``objects/XX/`` folders it empties, also between libgit2's mkdir and rename
  of a new object there.  ``write`` writes such an object again, as git
  itself makes the folder again (``folder_gone``).
- **A write that met the prune**: just before its ref moves, what is gone
  already is written again (``Written.refresh``); once its ref moved
  (``Written.settle``) it waits out a running ``gc --prune=now``
  (``gcwatch.after_gc``: the one that walked before the move deletes until
  it ends; after it, what is gone is gone for good) and writes again
  whatever of the write it took, holding git's own gc lock meanwhile
  (``gcwatch.holding``: a gc that started after the move, its walk before the
  objects were back, would take them again): the same bytes give the same
  ids, so the ref names whole objects.  That is done once; objects gone again are named
  (``PRUNED``: ``a git gc --prune=now ran beside this write; run the command
  again``), never reported as written.
- **An attempt spoiled before its ref moved** (``spoiled``: libgit2 refused a
  tree or a commit that names an object gone): ``once`` makes the whole
  attempt again, once, then names it the same way.
- **A read that meets an object gone** (``reread``): read again for a moment
  (the writer beside may be writing it again), then named as the prune (a
  ``gc.pid``, or the object's folder gone) or as a missing object.

A bare ``git prune --expire=now`` holds no ``gc.pid``: nothing tells a write
to wait for it, so a write beside one can still be named, or, past the one
check, leave its ref on an object that prune took (``git fsck`` lists it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gitstore.errors import EnvironmentFault, GitStoreError, StoreError
from gitstore.fs import diskfault, gcwatch, retry

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

T = TypeVar("T")
FOLDER_RETRIES = 5  # writes of one object whose folder a prune keeps removing
READ_RETRIES = 5  # reads of an object a writer beside may be writing again
ATTEMPTS = 2  # a write that met a prune=now: made again once, then named
PRUNED = "a git gc --prune=now ran beside this write"


def pruned(where: str | Path, detail: str = "") -> EnvironmentFault:
    """The error for a write a prune spoiled twice."""
    return EnvironmentFault("pruned", str(where), detail or PRUNED)


def folder_gone(exc: BaseException) -> bool:
    """libgit2 lost a new object's file: its folder vanished under it (a prune)."""
    text = str(exc).lower()
    return "failed to rename" in text or "no such file or directory" in text


def object_gone(exc: BaseException) -> bool:
    """libgit2 refused a tree or a commit an object of it is gone from (a prune
    between the two writes), or a read met one gone."""
    text = str(exc).lower()
    return any(w in text for w in ("invalid object specified", "object not found"))


def spoiled(exc: BaseException) -> bool:
    """Whether a write failed because git's prune ran beside it."""
    return isinstance(exc, Gone) or folder_gone(exc) or object_gone(exc)


def write(put: Callable[[], T]) -> T:
    """``put()`` (one object's write), again while its folder vanishes under it."""
    for attempt in retry.growing(FOLDER_RETRIES, 0.01):
        try:
            return put()
        except (pygit2.GitError, OSError) as exc:
            if not folder_gone(exc):
                raise
            if attempt == FOLDER_RETRIES - 1:
                raise pruned("", str(exc)) from None
    raise AssertionError("unreachable")


def make(put: Callable[[], T], where: str | Path) -> T:
    """``put()`` (an object, or one with the objects it names), its folder race
    retried (``write``) and the whole made again once when a prune spoiled it."""
    return once(partial(write, put), where)


def once(attempt: Callable[[], T], where: str | Path) -> T:
    """``attempt()``; made again once when git's prune spoiled it, then named."""
    for number in range(ATTEMPTS):
        try:
            return attempt()
        except (Gone, pygit2.GitError, OSError) as exc:
            if not spoiled(exc):
                raise
            if number == ATTEMPTS - 1:
                raise pruned(where) from None
    raise AssertionError("unreachable")


def after_move(gitdir: Path, restore: Callable[[], None]) -> None:
    """Once a ref moved: wait out a ``gc --prune=now`` beside, then ``restore()`` (it
    writes again, once, what that prune took, and names what it cannot), holding
    git's gc lock when another gc runs by then."""
    gcwatch.after_gc(gitdir)  # a prune that walked before the move deletes until it ends
    if gcwatch.gc_running(gitdir) is None:
        restore()
        return
    with gcwatch.holding(gitdir):
        restore()


class Written:
    """The objects one write made (loose, libgit2's ordinary writes), their bytes
    kept until ``settle`` finds them all still there after the ref moved."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self._made: dict[str, tuple[int, bytes]] = {}

    def put(self, kind: int, data: bytes) -> pygit2.Oid:
        """Write one object; its id."""
        oid: pygit2.Oid = write(lambda: self._repo.odb.write(kind, data))
        self._made[str(oid)] = (kind, data)
        return oid

    def refresh(self) -> None:
        """Before the ref moves: write again what a prune took already (libgit2 will
        not move a ref to a missing object; a prune that takes it again before the
        move makes that move fail, and the caller's attempt starts again)."""
        for kind, data in self._gone():
            write(partial(self._repo.odb.write, kind, data))

    def settle(self) -> None:
        """After the ref moved: what a ``gc --prune=now`` beside took written again,
        once (``after_move``); ``pruned`` when some is gone again after that."""
        after_move(Path(self._repo.path), self._restore)

    def _restore(self) -> None:
        self.refresh()
        if self._gone():
            raise pruned(Path(self._repo.path) / "objects")

    def close(self) -> None:
        """The write is over (its ref moved, or the attempt given up): loose objects
        hold nothing to let go of (a packed write's ``.keep``: ``store/notes.py``)."""

    def _gone(self) -> list[tuple[int, bytes]]:
        """The objects made that are not on disk now."""
        fresh = pygit2.Odb(str(Path(self._repo.path) / "objects"))  # no cache: on disk
        return [v for k, v in self._made.items() if pygit2.Oid(hex=k) not in fresh]


class Gone(Exception):
    """An object a read needs is missing (not a ``KeyError``: ``Mapping.get`` would
    take it for an absent key, and a note's other lines would be lost)."""

    def __init__(self, oid: str) -> None:
        super().__init__(oid)
        self.oid = oid


def get(repo: pygit2.Repository, oid: pygit2.Oid | str) -> pygit2.Object:
    """``repo[oid]``, raising ``Gone`` when it is missing."""
    try:
        return repo[oid]
    except KeyError:
        raise Gone(str(oid)) from None


def tree_of(commit: pygit2.Commit) -> pygit2.Tree:
    """``commit.tree``, raising ``Gone`` when it is missing."""
    try:
        tree: pygit2.Tree = commit.tree
    except pygit2.GitError:
        raise Gone(str(commit.tree_id)) from None
    return tree


def missing(gitdir: Path, oid: str, what: str) -> GitStoreError:
    """The error for ``oid`` (named by ``what``; ``""``: unknown) met missing by a read."""
    if oid and diskfault.pruning(gitdir, oid):
        return pruned(gitdir, f"{oid} is gone")
    return StoreError(
        str(gitdir),
        f"{what} names object {oid[:12] or '?'}, which is missing (git's prune beside a write, "
        "or damage): `git fsck` lists what is gone",
    )


def _gone(exc: BaseException) -> str | None:
    """The object ``exc`` says is missing (``""`` when it does not say which), or None."""
    if isinstance(exc, Gone):
        return exc.oid
    text = str(exc)
    if "unable to read" not in text.lower() and "object not found" not in text.lower():
        return None
    found = re.search(r"\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b", text)
    return found.group(0) if found else ""


def reread(read: Callable[[], T], gitdir: Path, what: str) -> T:
    """``read()``, again while an object it needs is missing (a writer beside may be
    writing it again after a prune); then the missing object named (``missing``)."""
    for attempt in retry.growing(READ_RETRIES, 0.02):
        try:
            return read()
        except (Gone, pygit2.GitError) as exc:
            oid = _gone(exc)
            if oid is None:
                raise
            if attempt == READ_RETRIES - 1:
                raise missing(gitdir, oid, what) from None
    raise AssertionError("unreachable")
