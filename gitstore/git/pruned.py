"""A write beside git's prune: one rule, here.

jp's own maintenance keeps git's grace period (``gc --auto``, two weeks for an
unreachable object), which takes nothing a write has just made.  A user's
``git gc --prune=now`` (or ``git prune --expire=now``) deletes every loose
object that was unreachable when its walk began, until it ends: the objects
of a write whose ref had not moved yet are among them.  git's documentation
calls that unsafe beside writers and does not defend it; jp does not shelter
its writes from it either.  What jp does:

- **The folder race** (not optional): any prune, grace or not, removes the
  ``objects/XX/`` folders it empties, also between the mkdir and rename
  of a new object there.  ``write`` writes such an object again, as git
  itself makes the folder again (``folder_gone``).
- **A write that met the prune**: just before its ref moves, what is gone
  already is written again (``Written.refresh``); once its ref moved
  (``Written.settle``) it waits out a running ``gc --prune=now``
  (``after_gc``: the one that walked before the move deletes until
  it ends; after it, what is gone is gone for good) and writes again
  whatever of the write it took, holding git's own gc lock meanwhile
  (``holding``: a gc that started after the move, its walk before the
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

- **A note's or an operation record's write** holds git's own gc lock from
  its objects to its ref (``shielded``), once a running ``gc --prune=now``
  has ended: no ``git gc`` starts meanwhile ("gc is already running").

The ``git gc`` beside is read from its ``gc.pid`` as git reads it (a live
process here, or one on another machine; a stale one is no gc); only one that
prunes whatever the date (``--prune=now``, or ``gc.pruneExpire`` so set) is
waited for.  A bare ``git prune --expire=now`` holds no ``gc.pid``: nothing
tells a write to wait for it, so a write beside one can still be named, or,
past the one check, leave its ref on an object that prune took (``git fsck``
lists it).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gitstore.errors import EnvironmentFault, GitStoreError, StoreError
from gitstore.fs import atomic, diskfault, retry
from gitstore.git import objects

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
GC_WAIT = 30.0  # seconds a write waits for a git gc beside it to end
GC_STALE = 12 * 3600  # a gc.pid this old is a gc that died (as git reads it)
LOCK_WAIT = 1.0  # seconds a gc.pid.lock may stay before it is taken for a killed gc's


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
    after_gc(gitdir)  # a prune that walked before the move deletes until it ends
    if gc_running(gitdir) is None:
        restore()
        return
    with holding(gitdir):
        restore()


class Written:
    """The objects one write made (loose, ``objects.write_loose``), their bytes kept
    until ``settle`` finds them all still there after the ref moved."""

    def __init__(self, gitdir: Path) -> None:
        self._gitdir = gitdir
        self._made: dict[str, tuple[int, bytes]] = {}

    def put(self, kind: int, data: bytes) -> bytes:
        """Write one object; its raw id."""
        oid = write(partial(objects.write_loose, self._gitdir, kind, data))
        self._made[oid.hex()] = (kind, data)
        return oid

    def refresh(self) -> None:
        """Before the ref moves: write again what a prune took already (no ref moves
        to a missing object; a prune that takes it again before the move makes that
        move fail, and the caller's attempt starts again)."""
        for kind, data in self._gone():
            write(partial(objects.write_loose, self._gitdir, kind, data))

    def settle(self) -> None:
        """After the ref moved: what a ``gc --prune=now`` beside took written again,
        once (``after_move``); ``pruned`` when some is gone again after that."""
        after_move(self._gitdir, self._restore)

    def _restore(self) -> None:
        self.refresh()
        if self._gone():
            raise pruned(self._gitdir / "objects")

    def close(self) -> None:
        """The write is over (its ref moved, or the attempt given up): loose objects
        hold nothing to let go of (a packed write's ``.keep``: ``store/notes.py``)."""

    def _gone(self) -> list[tuple[int, bytes]]:
        """The objects made that are not on disk now: not loose, nor in a pack (git's
        repack moved them there) as a new git process finds them."""
        absent = [k for k in self._made if not objects.loose_path(self._gitdir, k).exists()]
        if not absent:
            return []
        read = objects.CatFile(self._gitdir)
        try:
            return [self._made[k] for k in absent if not _present(read, k)]
        finally:
            read.close()


def _present(read: objects.Read, oid: str) -> bool:
    try:
        read(oid)
    except KeyError:
        return False
    return True


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


# -- the git gc beside, and git's gc lock ------------------------------------------------


def gc_running(gitdir: Path) -> str | None:
    """The ``gc.pid`` of the ``git gc`` that runs in this store now (``PID HOST``:
    fresh, and naming a live process here or one on another machine), or None."""
    path = gitdir / "gc.pid"
    try:
        age = time.time() - path.stat().st_mtime
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    pid_text, _, host = text.partition(" ")
    if age > GC_STALE or not pid_text.strip().isdigit():
        return None
    if host.strip() != _host():
        return text
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return None
    except (PermissionError, OverflowError):
        return text
    return text


def prunes_now(gitdir: Path, running: str) -> bool:
    """Whether the gc of ``gc.pid`` text ``running`` prunes whatever its date
    (``--prune=now``, or ``gc.pruneExpire`` set so in the store): only such a prune
    can take a write's new objects.  One on another machine, or whose command
    line cannot be read, is taken as one that may."""
    pid_text, _, host = running.partition(" ")
    if host.strip() != _host():
        return True
    try:
        args = Path(f"/proc/{int(pid_text)}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return True
    for arg in args:
        if arg.startswith(b"--prune="):
            return arg[len(b"--prune=") :].lower() in (b"now", b"all")
        if arg == b"--no-prune":
            return False
    try:
        config = (gitdir / "config").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return True
    return re.search(_PRUNE_NOW, config) is not None  # compiled when a gc runs beside


_PRUNE_NOW = r"pruneexpire\s*=\s*\"?\s*(now|all)\b"


def after_gc(gitdir: Path, wait: float = GC_WAIT) -> None:
    """Wait (up to ``wait`` seconds) for the ``git gc`` beside a write to end, if it
    prunes whatever the date (``prunes_now``).  A gc that starts after the ref
    moved finds the ref: it is not waited for."""
    running = gc_running(gitdir)
    if running is None or _mine(running) or not prunes_now(gitdir, running):
        return
    for attempt in retry.until(wait, 0.01):
        if attempt.last or gc_running(gitdir) != running:
            return


@contextlib.contextmanager
def holding(gitdir: Path, wait: float = GC_WAIT) -> Iterator[bool]:
    """git's gc lock held inside (``gc.pid`` naming this process, made through
    ``gc.pid.lock`` as git makes it), once no gc runs; whether it was taken: a gc
    that runs past ``wait``, or a ``gc.pid.lock`` that stays (a killed gc's), is
    not waited for longer, and the block runs without it."""
    if _mine(gc_running(gitdir)):  # this process holds it already (``shielded``)
        yield True
        return
    fd = _gc_lock(gitdir, wait)
    if fd is None:
        yield False
        return
    mine, pid_file = f"{os.getpid()} {_host()}", gitdir / "gc.pid"
    try:
        os.write(fd, mine.encode())
    finally:
        os.close(fd)
    atomic.replace(gitdir / "gc.pid.lock", pid_file)
    try:
        yield True
    finally:
        with contextlib.suppress(OSError):
            if pid_file.read_text(encoding="utf-8", errors="replace") == mine:
                pid_file.unlink()


def _gc_lock(gitdir: Path, wait: float) -> int | None:
    """``gc.pid.lock`` created, once no gc runs (its descriptor), or None: a gc past
    ``wait``, a lock that stays past ``LOCK_WAIT``, a store jp cannot write in (the
    write itself will say so)."""
    lock, locked_since = gitdir / "gc.pid.lock", None
    for attempt in retry.until(wait, 0.002):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            locked_since = locked_since or time.monotonic()
            if time.monotonic() - locked_since > LOCK_WAIT:
                return None
            continue
        except OSError:
            return None
        if gc_running(gitdir) is None:
            return fd
        os.close(fd)
        os.unlink(lock)
        if attempt.last:
            return None
    return None


def _mine(running: str | None) -> bool:
    """Whether the ``gc.pid`` text ``running`` names this process (a write inside
    ``shielded`` that waits for or takes the lock again)."""
    return running is not None and running == f"{os.getpid()} {_host()}"


def _host() -> str:
    """This machine's name, as git writes it in ``gc.pid`` (``gethostname``, which is
    the kernel's node name: read here without loading ``socket``)."""
    return os.uname().nodename


@contextlib.contextmanager
def shielded(gitdir: Path) -> Iterator[bool]:
    """A small write's objects and its ref move inside, with git's gc lock held
    (``holding``, which waits out a pruning gc that runs); whether it was taken.  A
    gc that keeps git's grace period takes nothing new: not waited for nor locked
    out."""
    running = gc_running(gitdir)
    if running is not None and not _mine(running) and not prunes_now(gitdir, running):
        yield False
        return
    with holding(gitdir) as held:
        yield held
