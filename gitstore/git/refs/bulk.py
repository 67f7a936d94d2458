"""Creating many refs at once straight into ``packed-refs``, as ``git clone`` does.

A ref transaction of libgit2 writes each ref as a loose file (a lock file, a
rename, a reflog line): for the thousands of refs of a first pull that is
most of the pull, and ``git pack-refs`` then deletes them again.  Here the new
refs go into one new ``packed-refs``, written under git's own lock:

1. ``jp/ops/<id>.packed`` is created and ``flock``-ed: it will hold the new file;
2. it is hard-linked as ``packed-refs.lock`` (a link, like git's ``O_EXCL``
   create, fails when the lock exists: git's gc or pack-refs is packing, and
   is waited for), so the lock is known to be ours by its inode;
3. ``packed-refs`` is read under the lock; a name that exists already (packed,
   as a loose file, or with a loose lock being written) is left out: this is a
   compare-and-swap against absence, and the caller moves those one by one;
4. the merged, sorted file is written and synced, then renamed over
   ``packed-refs`` (one atomic step: every new ref exists, or none);
5. ``jp/ops/<id>.packed`` is removed.

A crash before the rename leaves the old ``packed-refs``; one after it, every
ref.  A lock left by a dead writer is ours by its inode, and ``recover``
(called by the store's repair) removes it; git's own locks are never touched.
No reflog is written for these refs, as ``git clone`` writes none for the refs
it packs; the operation log records the creation (``jp undo``).

``drop`` deletes refs under the same lock, as git does, for the journaled
transaction (``transaction.py``) and for a remote's copies (``sync/remotes.py``:
one copy, or all of a removed remote's): libgit2 would rewrite ``packed-refs`` from
what it read before it took the lock, and unlink a loose ref without it, so a
``git pack-refs`` in between (git gc, the background gc jp starts) lost the
refs it had just packed, or brought the deleted one back.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import fcntl
import os
import uuid
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from gitstore import faults
from gitstore.errors import RefBusy, environment_fault
from gitstore.fs import atomic, retry
from gitstore.git.refs import files as refread

SUFFIX = ".packed"
_NO_LINKS = (errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV)


class NoHardLinks(Exception):
    """The file system of the store takes no hard links (the lock cannot be ours by
    its inode): nothing was written."""


_HEX = frozenset(b"0123456789abcdef")


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _lock(gitdir: Path, held: Path, wait: float, poll: float) -> None:
    """Take ``packed-refs.lock`` as a hard link to ``held``, waiting out another's."""
    lock = gitdir / "packed-refs.lock"
    for attempt in retry.until(wait, poll):
        try:
            os.link(held, lock)
            return
        except FileExistsError:
            if attempt.last:
                raise RefBusy("packed-refs", str(lock), by_maintenance=True) from None
        except OSError as exc:
            if exc.errno in _NO_LINKS:  # nothing was taken: the caller moves refs as before
                raise NoHardLinks(str(gitdir)) from None
            raise


def _free(gitdir: Path, new: Mapping[str, str]) -> dict[str, str]:
    """The refs of ``new`` with no loose file, lock or folder of their name (one
    listing per folder, not a look-up per ref): a loose ref wins over a packed one."""
    listed: dict[str, set[str]] = {}
    out: dict[str, str] = {}
    for name, oid in new.items():
        folder, _, leaf = name.rpartition("/")
        there = listed.get(folder)
        if there is None:
            try:
                there = set(os.listdir(gitdir / folder))
            except (FileNotFoundError, NotADirectoryError):
                there = set()
            listed[folder] = there
        if leaf not in there and leaf + ".lock" not in there:
            out[name] = oid
    return out


def _header(old: bytes) -> tuple[bytes, bytes]:
    """The header the new ``packed-refs`` gets, and ``old``'s own header line (or b"")."""
    first = old[: old.find(b"\n")] if old.startswith(b"# pack-refs with:") else b""
    traits = first.split(b":", 1)[1].split() if first else []
    # the old lines' own peeling is kept as they state it (new refs name commits)
    keep = [t for t in (b"peeled", b"fully-peeled") if t in traits] if old else [b"peeled",
            b"fully-peeled"]  # fmt: skip
    return b"# pack-refs with: " + b"".join(t + b" " for t in [*keep, b"sorted"]) + b"\n", first


Pieces = list[bytes | memoryview]  # a file's bytes, in order: written as they are
BLOCK = 1000  # new records per piece (a first pull adds 100,000 in one run)
NEAR = 256  # bytes past the last gap where the next name's gap is looked for first
WRITE_MOST = 1 << 20  # bytes of short pieces joined into one write


def _merged(old: bytes, new: Mapping[str, str]) -> tuple[Pieces, list[str]]:
    """``packed-refs`` with the lines of ``new`` added (sorted bytewise, as git sorts),
    as pieces, and the names added; a name the old file holds is kept as it was.

    A sorted ``old`` (git always writes it so) is not taken apart: the new names go
    in as runs, each between two old records found by bisection, so that the
    100,000 refs of a first pull cost one gap in the file, not 200,000 records.
    The old file's runs are views of it, not copies, and the new records are
    formatted a block at a time: the merge holds the old file and the new records."""
    header, first = _header(old)
    if old and (not first or b" sorted" not in first):
        return _merged_whole(header, old, new)
    view = memoryview(old)
    names = sorted(new, key=str.encode)
    pieces: Pieces = [header]
    added: list[str] = []
    at = len(first) + 1 if first else 0  # the old header is not kept: ``header`` is new
    i = 0
    while i < len(names):
        key = names[i].encode()
        gap = refread.lower_bound(old, key, at, NEAR)  # past the header line and ``at``
        while old[gap : gap + 1] == b"^":  # a peeled line stays with its record
            gap = old.index(b"\n", gap) + 1
        pieces.append(view[at:gap])
        at = gap
        after = old[gap + 41 : old.index(b"\n", gap)] if gap < len(old) else None
        if after == key:
            i += 1  # there already: kept as it was
            continue
        end = len(names) if after is None else bisect.bisect_left(names, after, i, key=str.encode)
        for block in range(i, end, BLOCK):
            run = names[block : min(block + BLOCK, end)]
            pieces.append("".join(f"{new[n]} {n}\n" for n in run).encode())
        added += names[i:end]
        i = end
    pieces.append(view[at:])
    return pieces, added


def _merged_whole(header: bytes, old: bytes, new: Mapping[str, str]) -> tuple[Pieces, list[str]]:
    """``_merged`` of an ``old`` not known to be sorted: every record read and sorted."""
    records: list[tuple[bytes, bytes]] = []  # (name, the record's lines)
    for line in old.split(b"\n"):
        if not line:
            continue
        if line.startswith(b"^") and records:
            name, text = records[-1]
            records[-1] = (name, text + line + b"\n")
        elif not line.startswith(b"#"):
            records.append((line[41:], line + b"\n"))
    present = {name for name, _ in records}
    added = [n for n in new if n.encode() not in present]
    records += [(n.encode(), f"{new[n]} {n}\n".encode()) for n in added]
    records.sort(key=lambda r: r[0])
    return [header + b"".join(text for _, text in records)], added


def create(
    gitdir: Path,
    new: Mapping[str, str],
    wait: float = 5.0,
    poll: float = 0.05,
    stage: str = "packed",
) -> list[str]:
    """Create each ref of ``new`` (name -> commit id) that does not exist, in one
    rewrite of ``packed-refs``; returns the names created (the others exist).
    ``stage`` names its crash points (``packed:locked``...) for the tests."""
    if any(len(v) != 40 or not _HEX.issuperset(v.encode()) for v in new.values()):
        raise ValueError("a packed ref must name an object id")
    with _claimed(gitdir) as (held, fd):
        _lock(gitdir, held, wait, poll)
        faults.point(f"{stage}:locked")
        pieces, added = _merged(_packed(gitdir), _free(gitdir, new))
        if added:
            _replace(gitdir, fd, pieces, stage)
        return added


def delete(gitdir: Path, names: Collection[str], wait: float, poll: float = 0.05) -> bool:
    """``drop``, or False (nothing changed) in a store that is not plain files or
    takes no hard links: the caller deletes them through libgit2 there."""
    if not names:
        return True
    if refread.plain_gitdir(gitdir) != gitdir:
        return False
    try:
        drop(gitdir, names, wait, poll)
    except NoHardLinks:
        return False
    return True


def drop(gitdir: Path, names: Collection[str], wait: float, poll: float = 0.05) -> None:
    """Delete the refs ``names`` in git's order: under ``packed-refs.lock``, their
    records go from ``packed-refs`` (a new file renamed over it), then their loose
    files, and only then is the lock let go, so that no packing in between puts one
    back.  A caller that checks their values holds their own locks.  Raises
    ``RefBusy`` (the lock held past ``wait``) or ``NoHardLinks`` with nothing
    changed.  A crash leaves the lock to ``recover`` and the new file, a ``.tmp``,
    to the store's repair; a transaction's journal finishes the deletion."""
    with _claimed(gitdir) as (held, _):
        _lock(gitdir, held, wait, poll)
        old = _packed(gitdir)
        spans = _spans(old, set(names))
        if spans:  # git writes the new file beside its lock: the lock stays held
            new = held.with_suffix(".tmp")
            fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # alive: repair leaves it alone
                view, at = memoryview(old), 0
                pieces: Pieces = []
                for start, end in spans:
                    pieces.append(view[at:start])
                    at = end
                _replace(gitdir, fd, [*pieces, view[at:]], "drop", new)
            finally:
                os.close(fd)
                new.unlink(missing_ok=True)
        for name in names:
            (gitdir / name).unlink(missing_ok=True)


SEARCHED_MOST = 32  # up to this many names a search each; one pass costs as much at about 45


def _spans(data: bytes, names: set[str]) -> list[tuple[int, int]]:
    """Where the records of ``names`` (with their peeled lines) are in ``data``, in
    order: a search each for a few; for more (a removed remote's 100,000 copies),
    one pass over the lines, a name looked up in a set."""
    if len(names) <= SEARCHED_MOST:
        return sorted(filter(None, (_span(data, name) for name in names)))
    wanted = {name.encode() for name in names}
    spans: list[tuple[int, int]] = []
    at, dropping = 0, False
    for line in data.split(b"\n")[:-1]:  # ``_packed`` ends the file in a newline
        end = at + len(line) + 1
        if line.startswith(b"^"):  # a peeled line goes with its record
            if dropping:
                spans[-1] = (spans[-1][0], end)
        else:
            dropping = not line.startswith(b"#") and line[41:] in wanted
            if dropping:
                spans.append((at, end))
        at = end
    return spans


def _span(data: bytes, name: str) -> tuple[int, int] | None:
    """Where the record of ``name`` (with its peeled lines) is in ``data``, if there."""
    needle = b" " + name.encode() + b"\n"
    at = data.find(needle)
    while at != -1 and not (at == 40 or (at > 40 and data[at - 41 : at - 40] == b"\n")):
        at = data.find(needle, at + 1)
    if at == -1:
        return None
    end = at + len(needle)
    while data[end : end + 1] == b"^":
        end = data.index(b"\n", end) + 1
    return at - 40, end


def forget(gitdir: Path, names: Collection[str]) -> None:
    """The reflogs of the deleted refs ``names``, and the folders their deletion left
    empty, gone as git removes them: a reflog left behind keeps its commits
    reachable for ``git fsck`` after a prune took them, and a ``packed-refs``
    rebuild (``packed.py``) would bring the ref back from it."""
    folders: set[Path] = set()
    for name in names:
        with contextlib.suppress(OSError):  # the ref is gone either way
            (gitdir / "logs" / name).unlink(missing_ok=True)
        folders.update(((gitdir / name).parent, (gitdir / "logs" / name).parent))
    for folder in sorted(folders, key=lambda f: -len(f.parts)):  # the deepest first
        with contextlib.suppress(OSError):  # not empty (or gone): its parents stay too
            while folder.name != "refs" and folder not in (gitdir, gitdir / "logs"):
                folder.rmdir()
                folder = folder.parent


@contextmanager
def _claimed(gitdir: Path) -> Iterator[tuple[Path, int]]:
    """``jp/ops/<id>.packed``, created and ``flock``-ed (alive: ``recover`` leaves it
    alone), to be linked as ``packed-refs.lock``; both removed on the way out."""
    folder = gitdir / "jp" / "ops"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        held = folder / f"{uuid.uuid4().hex}{SUFFIX}"
        fd = os.open(held, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        fault = environment_fault(exc, str(gitdir))
        raise fault or exc from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield held, fd
    except NoHardLinks:
        raise
    except OSError as exc:
        fault = environment_fault(exc, str(gitdir))
        raise fault or exc from None
    finally:
        lock = gitdir / "packed-refs.lock"
        if _same(lock, fd):
            lock.unlink(missing_ok=True)  # failed before the rename: our lock goes
        held.unlink(missing_ok=True)
        os.close(fd)


def _packed(gitdir: Path) -> bytes:
    """``packed-refs`` as it is (under its lock), ending in a newline."""
    try:
        old = (gitdir / "packed-refs").read_bytes()
    except FileNotFoundError:
        return b""
    return old if not old or old.endswith(b"\n") else old + b"\n"


def _replace(
    gitdir: Path, fd: int, pieces: Pieces, stage: str = "packed", written: Path | None = None
) -> None:
    """The new ``packed-refs`` (its pieces in order), written through ``fd`` (the held
    lock, or the file ``written``), synced, renamed over.  Short pieces go out
    together (an import's 250 new refs between old ones are 500 pieces: a write
    each cost as much as the merge)."""
    held: Pieces = []
    size = 0
    for piece in [*pieces, None]:
        if held and (piece is None or size + len(piece) > WRITE_MOST):
            _write_all(fd, b"".join(held) if len(held) > 1 else held[0])
            held, size = [], 0
        if piece is not None:
            held.append(piece)
            size += len(piece)
    os.fsync(fd)
    faults.point(f"{stage}:written")
    atomic.replace(written or gitdir / "packed-refs.lock", gitdir / "packed-refs")
    faults.point(f"{stage}:renamed")


def _same(path: Path, fd: int) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except OSError:
        return False


def recover(gitdir: Path, held: Path, fd: int) -> None:
    """After a writer died (``fd`` holds its claimed ``held`` file): drop the
    ``packed-refs.lock`` it left, known by its inode, then its file."""
    if _same(gitdir / "packed-refs.lock", fd):
        (gitdir / "packed-refs.lock").unlink(missing_ok=True)
    held.unlink(missing_ok=True)
