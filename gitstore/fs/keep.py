"""Objects a write made, kept until its ref holds them: git's prune beside the write.

``git gc --prune=now`` and ``git prune --expire=now`` delete every loose object
that was unreachable when their walk began.  A notes commit or an operation
commit that jp writes after that walk and before its ref points at it is
deleted all the same, in part (its tree, a subtree, a blob) or whole, and the
ref then names an object that is gone: every later read of it fails.

(``--expire=now`` expires every object whatever its age, so no date protects
it.)  A notes or operation-log write makes its objects in memory
(``Kept.stage``, with ``gitobject``'s bytes) and ``shelter`` writes them into
a pack that a ``.keep`` protects from before it shows: that pack is their only
copy, so no prune can take them, and nothing is deflated, written loose and
read back first.  Objects written loose by libgit2 are held instead
(``hold``: their bytes read back as soon as written; one already gone is
``Spoiled``, and the caller writes it all again); after the ref moves,
``restore`` writes again any the prune took (the same bytes give the same id,
so the ref is whole again), checking until a pass finds all of them, a bounded
number of times.  It checks through an object database of its own: the
repository's caches the commits and trees it read back, and would answer for
them after their files are gone.  ``missing`` names an object a read meets
gone: git's prune when it runs or took the object's folder, else the damage
it is.

Such a prune deletes until it ends, after the ref has moved too: a write that
looks for its objects again first waits for the ``git gc`` running beside it
(``gcwatch.after_gc``: its ``gc.pid``) to end.

After ``release`` the pack stays in ``objects/pack`` until git's gc repacks it;
``shelters.py`` records such packs and folds them, so that they stay few.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gitstore.errors import EnvironmentFault, GitStoreError, StoreError, environment_fault
from gitstore.fs import diskfault, retry

if TYPE_CHECKING:
    import pygit2

    from gitstore.fs import gcwatch, gitobject, packfile, shelters
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")
    # a write's modules: reads (``reread``, ``get``) never load them
    gitobject = lazy_module("gitstore.fs.gitobject")
    packfile = lazy_module("gitstore.fs.packfile")
    shelters = lazy_module("gitstore.fs.shelters")
    gcwatch = lazy_module("gitstore.fs.gcwatch")

T = TypeVar("T")
READ_RETRIES = 5  # reads of an object a writer beside may be writing again


class Spoiled(Exception):
    """An object this write made was gone before it could be held (a prune)."""


def spoiled(exc: BaseException) -> bool:
    """Whether a write failed because git's prune spoiled it: an object gone before it
    was held, or its folder gone between libgit2's mkdir and rename."""
    return isinstance(exc, Spoiled) or diskfault.spoiled(exc)


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


class Kept:
    """The objects of one write, held in memory until its ref names them safely."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self._held: dict[str, tuple[int, bytes]] = {}
        self._staged: set[str] = set()  # held objects whose only copy is the kept pack
        self._keep: str | None = None
        self._pack: str | None = None  # the installed pack's stem, for ``fold``
        self._work: str | None = None
        self._owner: int | None = None

    def hold(self, *oids: pygit2.Oid | str) -> None:
        """Read back and keep each object; raise ``Spoiled`` if one is gone already."""
        for oid in oids:
            name = str(oid)
            if name in self._held:
                continue
            try:
                kind, data = self._repo.odb.read(name)
            except (KeyError, ValueError, pygit2.GitError):
                raise Spoiled(name) from None
            self._held[name] = (int(kind), bytes(data))

    def stage(self, kind: int, data: bytes) -> pygit2.Oid:
        """Hold an object not yet written (``gitobject``'s bytes): ``shelter`` writes
        it, into the kept pack alone, so no prune can take it before its ref names it.
        (SHA-1 names: libgit2 as pygit2 builds it opens no other repository.)"""
        name = gitobject.object_id(kind, data).hex()
        if name not in self._held:
            self._held[name] = (kind, data)
            self._staged.add(name)
        return pygit2.Oid(hex=name)

    def write(self, kind: int, data: bytes) -> pygit2.Oid:
        """Write an object loose (libgit2) and hold it (``Spoiled`` when gone already)."""
        oid = self._loose(kind, data)
        self.hold(oid)
        return oid

    def _loose(self, kind: int, data: bytes) -> pygit2.Oid:
        oid: pygit2.Oid = diskfault.retried(partial(self._repo.odb.write, kind, data))
        return oid

    def shelter(self) -> None:
        """Put the held objects into a pack that git's prune and repack leave alone
        (a ``.keep`` beside it, made before the pack shows) until ``release``;
        ``Spoiled`` when one went before it was packed.

        ``<gitdir>/jp/kept/<id>/owner`` names the ``.keep`` under an ``flock``
        held until then: one a killed writer left is removed by ``sweep``.
        (Paths are strings here: a titled fork shelters once, and ``pathlib``'s
        objects were a tenth of it.)
        """
        if not self._held or self._keep is not None:
            return
        gitdir = self._repo.path.rstrip("/")
        work = os.path.join(gitdir, "jp", "kept", os.urandom(16).hex())
        try:
            try:
                os.mkdir(work)
            except FileNotFoundError:
                os.makedirs(work)
            self._work = work
            self._owner = os.open(os.path.join(work, "owner"), os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._owner, fcntl.LOCK_EX)
            packs = os.path.join(gitdir, "objects", "pack")
            stem = shelters.unique(self._write_pack(Path(work)), Path(packs)).stem
            self._keep = os.path.join(packs, f"{stem}.keep")
            os.write(self._owner, f"{stem}.keep".encode())
            _write_whole(self._keep, f"jp: until its ref names these objects (pid {os.getpid()})\n")
            for suffix in (".pack", ".idx"):  # the pack, then its index, as git does
                os.replace(os.path.join(work, stem + suffix), os.path.join(packs, stem + suffix))
            self._pack = stem
        except KeyError as exc:  # one went before it was packed: the attempt again
            self.release()
            raise Spoiled(str(exc)) from None
        except (OSError, pygit2.GitError, StopIteration) as exc:
            self.release()
            if diskfault.spoiled(exc):
                raise Spoiled(str(exc)) from None
            raise environment_fault(exc, os.path.join(gitdir, "objects")) or exc from None

    def _write_pack(self, work: Path) -> Path:
        """The held objects as one pack in ``work``: written from the bytes held (each
        object whole) when their names are SHA-1, else by libgit2's pack builder."""
        if all(len(name) == 40 for name in self._held):
            try:
                return packfile.write(list(self._held.values()), work)
            except ValueError:  # past what a pack of whole objects holds (2 GiB)
                pass
        for name in self._staged:  # the pack builder reads them: written loose first
            self._loose(*self._held[name])
        builder = pygit2.PackBuilder(self._repo)
        for name in self._held:
            builder.add(pygit2.Oid(hex=name))
        builder.write(str(work))
        return next(work.glob("pack-*.pack"))

    def release(self) -> None:
        """Let git's maintenance repack the sheltered objects (their ref names them now)."""
        if self._keep is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._keep)
            self._keep = None
        if self._pack is not None:
            shelters.released(Path(self._repo.path), self._repo, self._pack, list(self._held))
            self._pack = None
        if self._work is not None:
            try:  # the folder holds its owner file alone, unless a write stopped midway
                os.unlink(os.path.join(self._work, "owner"))
                os.rmdir(self._work)
            except OSError:
                shutil.rmtree(self._work, ignore_errors=True)
            self._work = None
        if self._owner is not None:
            os.close(self._owner)
            self._owner = None

    def restore(self) -> bool:
        """Write again every held object git's prune took; whether any had gone.

        A pass that found some gone is followed by another (the prune may still
        be walking the folders); one that finds them all ends it.  Objects only
        staged are in the kept pack, which nothing of git's removes while its
        ``.keep`` is there: while that pack is, only the others are looked for.
        """
        lost = False
        objects = str(Path(self._repo.path) / "objects")
        if self._pack_holds_all(objects):
            return False
        gcwatch.after_gc(Path(self._repo.path))  # what a prune that walked before the move took
        for _ in retry.growing(diskfault.PRUNE_RETRIES, 0.01):
            fresh = pygit2.Odb(objects)  # no cache: each object looked for on disk
            held = self._held.items()
            gone = [(k, d) for name, (k, d) in held if pygit2.Oid(hex=name) not in fresh]
            if not gone:
                return lost
            lost = True
            for kind, data in gone:
                self._loose(kind, data)
        raise EnvironmentFault("pruned", objects, "objects jp wrote kept going")

    def _pack_holds_all(self, objects: str) -> bool:
        """Whether every held object was staged and their kept pack is still there."""
        if self._pack is None or not self._staged.issuperset(self._held):
            return False
        return os.path.exists(os.path.join(objects, "pack", f"{self._pack}.pack"))


def _write_whole(path: str, text: str) -> None:
    """A file holding ``text`` alone."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def folder(gitdir: Path) -> Path:
    """Where sheltering writers keep their work, one folder each (``Kept.shelter``)."""
    return gitdir / "jp" / "kept"


def packing_folder(gitdir: Path) -> Path:
    """Where bulk writers (``store/packwrite.py``) build their packs, one folder each:
    named here so that opening a store finds a killed one's without loading the writer."""
    return gitdir / "jp" / "packing"


def dead_writers(top: Path) -> Iterator[tuple[Path, str]]:
    """The folders under ``top`` whose writer died (the ``flock`` on their ``owner``
    is free, or it never made one), each with what its owner file names; the caller
    removes them."""
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        try:
            fd = os.open(Path(entry.path) / "owner", os.O_RDONLY)
        except OSError:
            yield Path(entry.path), ""  # died before it took the lock
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            name = os.read(fd, 200).decode("ascii", "replace")
        except OSError:
            continue  # a writer at work
        finally:
            os.close(fd)
        yield Path(entry.path), name


def sweep(gitdir: Path) -> None:
    """Remove the ``.keep`` files of sheltering writers that died (``flock`` free)."""
    for work, name in dead_writers(folder(gitdir)):
        if re.fullmatch(r"pack-[0-9a-f]{40,64}\.keep", name):
            (gitdir / "objects" / "pack" / name).unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def missing(gitdir: Path, oid: str, what: str) -> GitStoreError:
    """The error for ``oid`` (named by ``what``; ``""``: unknown) met missing by a read."""
    if (gitdir / "gc.pid").exists() or (oid and diskfault.pruning(gitdir, oid)):
        return EnvironmentFault("pruned", str(gitdir), f"{oid} is gone")
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
