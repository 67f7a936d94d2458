"""Released shelter packs, recorded and folded so that they stay few.

A released shelter pack (``keep.Kept.release``) stays in ``objects/pack`` until
git's gc repacks it: the objects of a notes or operation-log write have no other
copy.  libgit2 lists that folder again on every lookup that misses, so each pack
left costs every later write.  ``released`` records the pack in ``<gitdir>/jp/
shelters`` (under the ``flock`` of ``jp/locks/shelters.lock``); past ``FOLD_AT``
packs of one level it folds them into one of the next level, installed before
the small ones go, so their objects are never out of a pack.  Only released
packs are folded: their ref names their objects already (or never will), so a
prune may take them no sooner than before.  A fold copies the packs' entries as
they are (each object whole, as shelter packs hold them): git's gc makes the
deltas later.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.errors import EnvironmentFault
from gitstore.fs import atomic, flock, packfile
from gitstore.fs.keep import folder

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

FOLD_AT = 8  # released shelter packs left before ``released`` folds them into one


def released(gitdir: Path, repo: pygit2.Repository, pack: str, oids: list[str]) -> None:
    """Record a released shelter pack; past ``FOLD_AT`` of one level, fold them into
    one of the next (each object is packed again once a level: n log n in all).
    Best effort: a fault leaves the packs as they were (each still whole)."""
    record = gitdir / "jp" / "shelters"
    try:
        with _locked(flock.folder(gitdir) / "shelters.lock"):  # one records or folds at a time
            fd = os.open(record, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, (" ".join(["0", pack, *oids]) + "\n").encode("ascii"))
                data = os.pread(fd, os.fstat(fd).st_size, 0)
            finally:
                os.close(fd)
            if data.startswith(b"0 ") + data.count(b"\n0 ") > FOLD_AT:  # parsed when due
                _fold_due(gitdir, repo, record)
    except (OSError, EnvironmentFault, pygit2.GitError, KeyError, ValueError, StopIteration):
        return


@contextlib.contextmanager
def _locked(lock: Path) -> Iterator[None]:
    """The ``flock`` of ``lock`` (its folder made the first time), held inside."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


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
        objects = gitdir / "objects" / "pack"
        made = unique(_folded(repo, objects, packs, oids, work), objects)
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


def _folded(
    repo: pygit2.Repository, objects: Path, packs: list[str], oids: list[str], work: Path
) -> Path:
    """The pack of ``packs``' objects, written in ``work``: their entries copied as
    they are when each is whole (every shelter pack's are: nothing is deflated or
    searched for deltas again; git's gc makes the deltas), else by libgit2's pack
    builder from the objects."""
    try:
        entries = [
            entry
            for name in packs
            for entry in packfile.whole_entries(
                (objects / f"{name}.pack").read_bytes(), (objects / f"{name}.idx").read_bytes()
            )
        ]
        return packfile.install(*packfile.assemble(entries), work)
    except ValueError:
        builder = pygit2.PackBuilder(repo)
        for oid in oids:
            builder.add(pygit2.Oid(hex=oid))
        builder.write(str(work))
        return next(work.glob("pack-*.pack"))


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


def unique(pack: Path, packs: Path) -> Path:
    """``pack`` (with its index) renamed to ``free_stem``'s name."""
    stem = free_stem(packs, pack.stem)
    if stem == pack.stem:
        return pack
    renamed = pack.with_name(f"{stem}.pack")
    os.replace(pack.with_suffix(".idx"), renamed.with_suffix(".idx"))
    os.replace(pack, renamed)
    return renamed
