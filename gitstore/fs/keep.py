"""Objects a write made, kept until its ref holds them: git's prune beside the write.

``git gc --prune=now`` and ``git prune --expire=now`` delete every loose object
that was unreachable when their walk began.  A notes commit or an operation
commit that jp writes after that walk and before its ref points at it is
deleted all the same, in part (its tree, a subtree, a blob) or whole, and the
ref then names an object that is gone: every later read of it fails.

(``--expire=now`` expires every object whatever its age, so no date protects
it.)  ``Kept`` holds the bytes of each object one write made, read back as
soon as it is written (one already gone is ``Spoiled``: the caller writes it
all again); after the ref moves, ``restore`` writes again any the prune took
(the same bytes give the same id, so the ref is whole again), checking until a
pass finds all of them, a bounded number of times.  It checks through an object
database of its own: the repository's caches the commits and trees it read
back, and would answer for them after their files are gone.
``missing`` names an object a read meets gone: git's prune when it runs or
took the object's folder, else the damage it is.

A released shelter pack stays in ``objects/pack`` (its objects may have no
loose copy left: git's prune removes the loose copies of packed objects), and
libgit2 lists that folder again on every lookup that misses, so each pack left
costs every later write.  ``release`` records the pack in ``<gitdir>/jp/
shelters`` (under the ``flock`` of ``jp/locks/shelters.lock``); past
``FOLD_AT`` packs of one level it folds them into one of the next level,
installed before the small ones go, so their objects are never out of a pack.
Only released packs are folded: their ref names their objects already (or
never will), so a prune may take them no sooner than before.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gitstore.errors import EnvironmentFault, GitStoreError, StoreError, environment_fault
from gitstore.fs import atomic, diskfault, flock, packfile, retry

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

T = TypeVar("T")
READ_RETRIES = 5  # reads of an object a writer beside may be writing again
FOLD_AT = 8  # released shelter packs left before ``release`` folds them into one


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
        self._keep: Path | None = None
        self._pack: str | None = None  # the installed pack's stem, for ``fold``
        self._work: Path | None = None
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

    def shelter(self) -> None:
        """Put the held objects into a pack that git's prune and repack leave alone
        (a ``.keep`` beside it, made before the pack shows) until ``release``;
        ``Spoiled`` when one went before it was packed.

        ``<gitdir>/jp/kept/<id>/owner`` names the ``.keep`` under an ``flock``
        held until then: one a killed writer left is removed by ``sweep``.
        """
        if not self._held or self._keep is not None:
            return
        import uuid  # lazy: start-up; only a write shelters objects, reads never do

        gitdir = Path(self._repo.path)
        work = folder(gitdir) / uuid.uuid4().hex
        try:
            work.mkdir(parents=True)
            self._work, self._owner = work, os.open(work / "owner", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._owner, fcntl.LOCK_EX)
            packs = gitdir / "objects" / "pack"
            pack = _unique(self._write_pack(work), packs)
            self._keep = packs / f"{pack.stem}.keep"
            os.write(self._owner, self._keep.name.encode())
            self._keep.write_text(f"jp: until its ref names these objects (pid {os.getpid()})\n")
            os.replace(pack, packs / pack.name)  # the pack, then its index, as git does
            os.replace(pack.with_suffix(".idx"), packs / f"{pack.stem}.idx")
            self._pack = pack.stem
        except KeyError as exc:  # one went before it was packed: the attempt again
            self.release()
            raise Spoiled(str(exc)) from None
        except (OSError, pygit2.GitError, StopIteration) as exc:
            self.release()
            if diskfault.spoiled(exc):
                raise Spoiled(str(exc)) from None
            raise environment_fault(exc, str(gitdir / "objects")) or exc from None

    def _write_pack(self, work: Path) -> Path:
        """The held objects as one pack in ``work``: written from the bytes held (each
        object whole) when their names are SHA-1, else by libgit2's pack builder."""
        if all(len(name) == 40 for name in self._held):
            try:
                return packfile.write(list(self._held.values()), work)
            except ValueError:  # past what a pack of whole objects holds (2 GiB)
                pass
        builder = pygit2.PackBuilder(self._repo)
        for name in self._held:
            builder.add(pygit2.Oid(hex=name))
        builder.write(str(work))
        return next(work.glob("pack-*.pack"))

    def release(self) -> None:
        """Let git's maintenance repack the sheltered objects (their ref names them now)."""
        if self._keep is not None:
            self._keep.unlink(missing_ok=True)
            self._keep = None
        if self._pack is not None:
            released(Path(self._repo.path), self._repo, self._pack, list(self._held))
            self._pack = None
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None
        if self._owner is not None:
            os.close(self._owner)
            self._owner = None

    def restore(self) -> bool:
        """Write again every held object git's prune took; whether any had gone.

        A pass that found some gone is followed by another (the prune may still
        be walking the folders); one that finds them all ends it.
        """
        lost = False
        objects = str(Path(self._repo.path) / "objects")
        for _ in retry.growing(diskfault.PRUNE_RETRIES, 0.01):
            fresh = pygit2.Odb(objects)  # no cache: each object looked for on disk
            held = self._held.items()
            gone = [(k, d) for name, (k, d) in held if pygit2.Oid(hex=name) not in fresh]
            if not gone:
                return lost
            lost = True
            for kind, data in gone:
                diskfault.retried(partial(self._repo.odb.write, kind, data))
        raise EnvironmentFault("pruned", objects, "objects jp wrote kept going")


def released(gitdir: Path, repo: pygit2.Repository, pack: str, oids: list[str]) -> None:
    """Record a released shelter pack; past ``FOLD_AT`` of one level, fold them into
    one of the next (each object is packed again once a level: n log n in all).
    Best effort: a fault leaves the packs as they were (each still whole)."""
    record = gitdir / "jp" / "shelters"
    try:
        locks = flock.folder(gitdir)
        locks.mkdir(parents=True, exist_ok=True)
        with open(locks / "shelters.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one process records or folds at a time
            with open(record, "a", encoding="ascii") as out:
                out.write(" ".join(["0", pack, *oids]) + "\n")
            data = record.read_bytes()
            if data.startswith(b"0 ") + data.count(b"\n0 ") > FOLD_AT:  # parsed when due
                _fold_due(gitdir, repo, record)
    except (OSError, EnvironmentFault, pygit2.GitError, KeyError, ValueError, StopIteration):
        return


Recorded = dict[str, tuple[int, list[str]]]  # pack stem -> (level, its objects)
_LINE = re.compile(r"[0-9]{1,3} pack-[0-9a-f]{40,64}(?: [0-9a-f]{40,64})*")


def _recorded(record: Path, packs: Path) -> Recorded:
    """The recorded packs still in ``packs`` (git's gc may have repacked them),
    with their level and objects; a line not of that form is skipped."""
    found: Recorded = {}
    for line in record.read_text(encoding="ascii", errors="replace").splitlines():
        if _LINE.fullmatch(line) is None:
            continue
        level, name, *oids = line.split(" ")
        if (packs / f"{name}.idx").exists():
            found[name] = (int(level), oids)
    return found


def _fold_due(gitdir: Path, repo: pygit2.Repository, record: Path) -> None:
    """Fold each level that holds more than ``FOLD_AT`` packs, lowest first; then
    rewrite the record (renamed into place) to name the packs left."""
    found = _recorded(record, gitdir / "objects" / "pack")
    level = 0
    while True:
        packs = [name for name, (at, _) in found.items() if at == level]
        if len(packs) <= FOLD_AT:
            break
        oids = sorted({o for name in packs for o in found[name][1]})
        made = _fold(gitdir, repo, packs, oids)
        for name in packs:
            del found[name]
        found[made] = (level + 1, oids)
        level += 1
    lines = [" ".join([str(at), name, *oids]) for name, (at, oids) in found.items()]
    atomic.write(record, "".join(f"{line}\n" for line in lines))


def _fold(gitdir: Path, repo: pygit2.Repository, packs: list[str], oids: list[str]) -> str:
    """One pack of ``oids`` (the objects of ``packs``), installed (pack, then index)
    before the small packs are removed (index first); its stem."""
    import uuid  # lazy: start-up; only a write folds

    work = folder(gitdir) / f"fold-{uuid.uuid4().hex}"
    work.mkdir(parents=True)
    owner = os.open(work / "owner", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(owner, fcntl.LOCK_EX)  # a live writer's folder: ``sweep`` leaves it
        builder = pygit2.PackBuilder(repo)
        for oid in oids:
            builder.add(pygit2.Oid(hex=oid))
        builder.write(str(work))
        objects = gitdir / "objects" / "pack"
        made = _unique(next(work.glob("pack-*.pack")), objects)
        os.replace(made, objects / made.name)
        os.replace(made.with_suffix(".idx"), objects / f"{made.stem}.idx")
        for name in packs:
            if name != made.stem:
                (objects / f"{name}.idx").unlink(missing_ok=True)
                (objects / f"{name}.pack").unlink(missing_ok=True)
        return made.stem
    finally:
        os.close(owner)
        shutil.rmtree(work, ignore_errors=True)


def free_stem(packs: Path, stem: str) -> str:
    """``stem`` (``pack-<checksum>``), or a name of its own when ``packs`` has a pack
    of that name already.

    A pack is named by its checksum, so two writes of the same objects (an attempt
    made again within the same second, an import written again after a killed one)
    make packs of one name.  Installed over the first, the second would be deleted
    with it: by git's repack, which listed the first, released and unreachable,
    before the second was kept, or by ``_fold``, which folds the first by its
    recorded name.  git reads a pack under any name.
    """
    if not any((packs / f"{stem}{s}").exists() for s in (".pack", ".idx", ".keep")):
        return stem
    import uuid  # lazy: start-up; only a write shelters objects

    return f"pack-{hashlib.sha1(f'{stem} {uuid.uuid4().hex}'.encode()).hexdigest()}"


def _unique(pack: Path, packs: Path) -> Path:
    """``pack`` (with its index) renamed to ``free_stem``'s name."""
    stem = free_stem(packs, pack.stem)
    if stem == pack.stem:
        return pack
    renamed = pack.with_name(f"{stem}.pack")
    os.replace(pack.with_suffix(".idx"), renamed.with_suffix(".idx"))
    os.replace(pack, renamed)
    return renamed


def folder(gitdir: Path) -> Path:
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
