"""A damaged ``packed-refs``: found, and rebuilt from what survives.

git and libgit2 refuse a ``packed-refs`` with a line they cannot read (a
truncated write, a disk error, a bad edit), and the refs only it held vanish
from every listing.  ``damage`` names the first bad line; ``rebuild`` keeps
every good line, adds each ref the damage lost from the last value its reflog
recorded (when that commit is still in the store), and replaces the file under
its lock, as git would.  Loose refs are never touched: they win over packed ones.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from gitstore.fs import atomic
from gitstore.fs.place import Place
from gitstore.git.refs.packedform import HEADER, good
from gitstore.git.refs.packedform import damage as damage  # what doctor asks of this module
from gitstore.git.refs.transaction import RefUpdate

# the operation log's hook around a ref move (``Recorder.moving``)
Record = Callable[[Sequence[RefUpdate]], AbstractContextManager[None]]


def _no_record(_: Sequence[RefUpdate]) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


ZERO = "0" * 40


@dataclass(frozen=True)
class Rebuilt:
    dropped: int  # lines that could not be read
    restored: list[str]  # refs brought back from their reflogs


def _kept(gitdir: Path) -> dict[str, str]:
    """The refs of the good lines (a peeled line is dropped: git peels again)."""
    try:
        data = (gitdir / "packed-refs").read_bytes()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for number, line in enumerate(data.split(b"\n"), 1):
        if line.startswith((b"#", b"^")) or not good(line, number):
            continue
        oid, name = line.decode("ascii").split(" ", 1)
        out[name] = oid
    return out


def _last_logged(path: Path) -> str | None:
    """The value a reflog's last line moved its ref to (None: deleted, or unreadable)."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        fields = line.split(b" ", 2)
        if len(fields) >= 2 and re.fullmatch(rb"[0-9a-f]{40}", fields[1]):
            new = fields[1].decode()
            return None if new == ZERO else new
    return None


def _twin(name: str) -> str | None:
    """The other ref of a conversation (live <-> archived), for a conversation ref."""
    live, archived = "refs/conversations/", "refs/archive/conversations/"
    if name.startswith(live):
        return archived + name[len(live) :]
    if name.startswith(archived):
        return live + name[len(archived) :]
    return None


def rebuild(place: Place, record: Record = _no_record) -> Rebuilt:
    """Rewrite ``packed-refs`` from its good lines and the reflogs of refs it lost.

    ``record`` is told of the refs that come back (from absence: the operation log,
    so that ``jp undo`` takes them away again)."""
    import pygit2  # lazy: only a repair needs libgit2 here

    repo, gitdir = place.repo, place.gitdir
    before = (gitdir / "packed-refs").read_bytes().split(b"\n")
    kept = _kept(gitdir)
    dropped = sum(1 for n, line in enumerate(before, 1) if line and not good(line, n))
    restored: list[str] = []
    logs = gitdir / "logs"
    for path in sorted((logs / "refs").rglob("*")) if (logs / "refs").is_dir() else []:
        name = path.relative_to(logs).as_posix()
        if not path.is_file() or name in kept or (gitdir / name).is_file():
            continue
        twin = _twin(name)  # a conversation archived since: its other name holds it
        if twin is not None and (twin in kept or (gitdir / twin).is_file()):
            continue
        oid = _last_logged(path)
        if oid is not None and pygit2.Oid(hex=oid) in repo.odb:
            kept[name] = oid
            restored.append(name)
    text = HEADER + "\n" + "".join(f"{kept[n]} {n}\n" for n in sorted(kept))
    with record([RefUpdate(name, None, kept[name]) for name in restored]):
        _replace(gitdir, text.encode("ascii"))
    return Rebuilt(dropped, restored)


def _replace(gitdir: Path, data: bytes) -> None:
    """Write ``packed-refs`` under its lock (``packed-refs.lock``, as git takes it)."""
    lock = gitdir / "packed-refs.lock"
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        lock.unlink(missing_ok=True)
        raise
    os.close(fd)
    atomic.replace(lock, gitdir / "packed-refs")
