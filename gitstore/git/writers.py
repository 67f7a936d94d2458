"""Folders of writers at work, one each under ``<gitdir>/jp/``, and what a killed
one left.

A writer makes its folder and holds the ``flock`` of the ``owner`` file in it
for as long as it works; the lock ends with the process, so a folder whose lock
is free belongs to a writer that died.  Two kinds:

- ``packing_folder``: a bulk writer builds its packs there
  (``store/packwrite.py``); named here so that opening a store finds a killed
  one's without loading the writer.
- ``kept_folder``: the ``.keep`` of each pack a bulk writer published before
  its ref names it (git's repack chooses at its start the packs it deletes);
  ``sweep_kept`` removes a killed writer's ``.keep``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from gitstore.fs import atomic

MAKING_SECONDS = 60.0  # a writer renames its folder into place at once: older, it died


def kept_folder(gitdir: Path) -> Path:
    """Where writers record the ``.keep`` files they hold, one folder each."""
    return gitdir / "jp" / "kept"


def packing_folder(gitdir: Path) -> Path:
    """Where bulk writers build their packs, one folder each."""
    return gitdir / "jp" / "packing"


def claim(top: Path, name: str, says: bytes = b"") -> tuple[Path, int]:
    """The folder ``top/name`` for this writer, and the descriptor holding the
    ``flock`` of its ``owner`` (which says ``says``).  The folder is made as
    ``.name``, its owner locked, then renamed into place: a sweep beside never
    sees a live writer's folder without its lock, and takes it for a dead one's."""
    top.mkdir(parents=True, exist_ok=True)
    staging = top / f".{name}"
    staging.mkdir()
    fd = os.open(staging / "owner", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, says)
        work = top / name
        atomic.replace(staging, work)  # the lock stays with the file
    except BaseException:
        os.close(fd)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return work, fd


def dead_writers(top: Path) -> Iterator[tuple[Path, str]]:
    """The folders under ``top`` whose writer died (the ``flock`` on their ``owner``
    is free), each with what its owner file names; the caller removes them.  A
    folder still under its making name (``.name``: ``claim``) is a dead writer's
    once ``MAKING_SECONDS`` old."""
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            with contextlib.suppress(OSError):
                if time.time() - entry.stat().st_mtime > MAKING_SECONDS:
                    yield Path(entry.path), ""
            continue
        try:
            fd = os.open(Path(entry.path) / "owner", os.O_RDONLY)
        except OSError:
            yield Path(entry.path), ""  # made before claim, by a writer that died
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            name = os.read(fd, 200).decode("ascii", "replace")
        except OSError:
            continue  # a writer at work
        finally:
            os.close(fd)
        yield Path(entry.path), name


def sweep_kept(gitdir: Path) -> None:
    """Remove the ``.keep`` files of writers that died (``flock`` free)."""
    for work, name in dead_writers(kept_folder(gitdir)):
        if re.fullmatch(r"pack-[0-9a-f]{40,64}\.keep", name):
            (gitdir / "objects" / "pack" / name).unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def free_stem(packs: Path, stem: str) -> str:
    """``stem`` (``pack-<checksum>``), or a name of its own when ``packs`` has a pack
    of that name already.

    A pack is named by its checksum, so two writes of the same objects (an import
    written again after a killed one, a clone of what is here) make packs of one
    name.  Installed over the first, the second would be deleted with it by git's
    repack, which listed the first, unreachable, before the second was kept.  git
    reads a pack under any name.
    """
    if not any((packs / f"{stem}{s}").exists() for s in (".pack", ".idx", ".keep")):
        return stem
    import hashlib  # lazy: OpenSSL's load (2 ms), for a write that meets its own name

    return f"pack-{hashlib.sha1(f'{stem} {os.urandom(16).hex()}'.encode()).hexdigest()}"
