"""git's objects as bytes: an object's name, a tree's entries, a commit's lines.

The one place jp spells the bytes of a blob, tree or commit.  Every writer
makes them here and hands them to a pack (``git.pack``) or to the object
database as they are: an event's commit (``events.commits.objects``), a notes
or operation-log commit, an import's chains.

Each function gives exactly the bytes libgit2 writes for the same object (its
tree builder, ``git_commit_create``), so the ids are the ones it would give:
``tests/unit/gitstore/test_gitstore_gitobject.py`` checks both side by side and
with ``git fsck --strict``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.errors import StoreError, environment_fault
from gitstore.fs import atomic

if TYPE_CHECKING:
    import subprocess
    from typing import Protocol

    import pygit2

    from gitstore.fs.place import Place
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

COMMIT, TREE, BLOB = 1, 2, 3  # as pygit2's ``ObjectType`` numbers them
BLOB_MODE, TREE_MODE = 0o100644, 0o040000
TAG = 4
_WORDS = {COMMIT: b"commit", TREE: b"tree", BLOB: b"blob", TAG: b"tag"}
_KINDS = {word: kind for kind, word in _WORDS.items()}


def object_id(kind: int, data: bytes) -> bytes:
    """The SHA-1 name git gives an object of ``kind`` holding ``data`` (raw, 20 bytes)."""
    return hashlib.sha1(b"%s %d\0" % (_WORDS[kind], len(data)) + data).digest()


_ENTRY = re.compile(rb"(([0-7]{1,7}) ([^\0]*)\0.{20})", re.S)
_TREE_BYTES = re.compile(rb"(?:[0-7]{1,7} [^\0]*\0.{20})*", re.S)
_CANONICAL = frozenset({b"100644", b"100755", b"120000", b"40000", b"160000"})
_TREE = b"40000"
Entries = dict[bytes, tuple[bytes, bytes]]  # name -> (mode as libgit2 writes it, whole entry)


def tree_entries(raw: bytes) -> Entries:
    """A tree's entries by name, each with its mode and its bytes as libgit2 writes
    them; a malformed tree raises ``ValueError``."""
    if _TREE_BYTES.fullmatch(raw) is None:
        raise ValueError("not a tree's bytes")
    out: Entries = {}
    for whole, mode, name in _ENTRY.findall(raw):
        if mode not in _CANONICAL:  # zero-padded: libgit2 writes it again without
            mode = b"%o" % int(mode, 8)
            whole = b"%s %s\0%s" % (mode, name, whole[-20:])
        out[name] = (mode, whole)
    return out


def is_blob(mode: int) -> bool:
    """Whether an entry of ``mode`` names a blob (a file, executable or not, or a link)."""
    return mode & 0o170000 in (0o100000, 0o120000)


class TreeEdit:
    """A tree's entries, changed in memory as libgit2's tree builder changes them."""

    def __init__(self, raw: bytes = b"") -> None:
        self._entries = tree_entries(raw)

    def get(self, name: str) -> tuple[int, bytes] | None:
        """(mode, raw id) of the entry ``name``, or None."""
        found = self._entries.get(name.encode("utf-8", "surrogateescape"))
        return None if found is None else (int(found[0], 8), found[1][-20:])

    def entries(self) -> Iterator[tuple[str, int, bytes]]:
        """The name (decoded as ``insert`` encodes it), mode and raw id of each entry."""
        for name, (mode, whole) in self._entries.items():
            yield name.decode("utf-8", "surrogateescape"), int(mode, 8), whole[-20:]

    def copy(self) -> TreeEdit:
        """Another tree of the same entries, changed apart from this one."""
        other = TreeEdit()
        other._entries = dict(self._entries)
        return other

    def insert(self, name: str, oid: bytes, mode: int) -> None:
        raw = name.encode("utf-8", "surrogateescape")
        self._entries[raw] = (b"%o" % mode, b"%o %s\0%s" % (mode, raw, oid))

    def remove(self, name: str) -> None:
        self._entries.pop(name.encode("utf-8", "surrogateescape"), None)

    def blobs(self) -> Iterator[tuple[str, bytes]]:
        """The name (decoded as ``insert`` encodes it) and raw id of each blob entry."""
        for name, (mode, whole) in self._entries.items():
            if mode != _TREE and is_blob(int(mode, 8)):
                yield name.decode("utf-8", "surrogateescape"), whole[-20:]

    def __len__(self) -> int:
        return len(self._entries)

    def data(self) -> bytes:
        """The tree's bytes: ``<mode in octal> <name>\\0<raw id>`` per entry, in git's
        order (by name, a tree's as if it ended with ``/``)."""
        order = {
            name + b"/" if mode == _TREE else name: whole
            for name, (mode, whole) in self._entries.items()
        }
        return b"".join([order[key] for key in sorted(order)])


if TYPE_CHECKING:

    class Signature(Protocol):
        """What a pygit2 signature shows of itself."""

        @property
        def raw_name(self) -> bytes: ...
        @property
        def raw_email(self) -> bytes: ...
        @property
        def time(self) -> int: ...
        @property
        def offset(self) -> int: ...


Who = tuple[bytes, bytes, int, int]  # name, email, time, minutes east of UTC


def person(signature: Signature | Who) -> Who:
    """An author or committer's parts, from a pygit2 signature (or those parts)."""
    if isinstance(signature, tuple):
        return signature
    return bytes(signature.raw_name), bytes(signature.raw_email), signature.time, signature.offset


def _line(header: bytes, who: Who) -> bytes:
    name, email, time, offset = who
    hours, minutes = divmod(abs(offset), 60)
    sign = b"-" if offset < 0 else b"+"
    return b"%s %s <%s> %d %s%02d%02d\n" % (header, name, email, time, sign, hours, minutes)


# an event's commit: one parent, both times in UTC (``commit_data``'s most frequent
# shape, written in one formatting: 2.2 to 0.9 us a commit, an import's every event)
_ONE_PARENT_UTC = b"tree %s\nparent %s\nauthor %s <%s> %d +0000\ncommitter %s <%s> %d +0000\n\n%s"


def commit_data(
    tree: str, parents: Sequence[str], author: Who, committer: Who, message: str
) -> bytes:
    """A commit's bytes, as ``git_commit_create`` writes them (the message as given)."""
    if len(parents) == 1 and author[3] == 0 and committer[3] == 0:
        return _ONE_PARENT_UTC % (
            tree.encode("ascii"),
            parents[0].encode("ascii"),
            *author[:3],
            *committer[:3],
            message.encode("utf-8"),
        )
    head = [b"tree %s\n" % tree.encode("ascii")]
    head += [b"parent %s\n" % parent.encode("ascii") for parent in parents]
    head += [_line(b"author", author), _line(b"committer", committer), b"\n"]
    return b"".join(head) + message.encode("utf-8")


_SAMPLE = "17"  # the fan-out folder git samples too


def folder(gitdir: Path) -> Path:
    """The object database: loose objects in fan-out folders, packs in ``pack/``."""
    return gitdir / "objects"


def loose_path(gitdir: Path, oid: str) -> Path:
    """Where the object ``oid`` (hex) is, written loose."""
    return folder(gitdir) / oid[:2] / oid[2:]


def write_loose(gitdir: Path, kind: int, data: bytes) -> bytes:
    """Write one object loose, as git does (deflated into a temporary file of its
    fan-out folder, then renamed to its name); its raw id.  The folder vanishing
    under it (git's prune emptied it) raises ``FileNotFoundError``: ``pruned.write``
    writes it again."""
    import zlib  # lazy: only a write deflates

    oid = object_id(kind, data)
    path = loose_path(gitdir, oid.hex())
    path.parent.mkdir(exist_ok=True)
    fd, temporary = _temporary(path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(zlib.compress(b"%s %d\0" % (_WORDS[kind], len(data)) + data, 1))
        atomic.replace(Path(temporary), path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return oid


_made = [0]  # temporary files this process made


def _temporary(folder: Path) -> tuple[int, Path]:
    """A new file ``tmp_obj_*`` in ``folder`` (the name git's prune sweeps after its
    grace period), read-only once written, as git leaves objects."""
    while True:
        _made[0] += 1
        path = folder / f"tmp_obj_{os.getpid()}_{_made[0]}"
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444), path
        except FileExistsError:  # a killed process's, of the same pid
            continue


def loose_estimate(gitdir: Path) -> int:
    """git's estimate of the loose objects: one fan-out folder's count times 256."""
    try:
        names = os.listdir(folder(gitdir) / _SAMPLE)
    except OSError:
        return 0
    return 256 * sum(1 for name in names if len(name) == 38)


# -- reading ------------------------------------------------------------------------------

Put = Callable[[int, bytes], bytes]  # writes an object: its raw id
Read = Callable[[str], "tuple[int, bytes]"]
"""An object's kind and bytes by its hex id; ``KeyError`` when the store lacks it
(libgit2's ``Odb.read`` is one, ``CatFile`` another)."""

_HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


class CatFile:
    """The store's objects read by one ``git cat-file --batch``, started at the first
    read and ended by ``close``; each object read is kept (objects never change).

    A command that reads a few trees and commits (an import's titles, its
    operation record) reads them so when it has not loaded libgit2: loading it
    costs more than the whole of that git process.  A ``held`` one serves every
    write of a command (``Ops`` ends it with the command): ``done`` leaves it open."""

    def __init__(self, gitdir: Path, held: bool = False) -> None:
        self._gitdir = gitdir
        self.held = held
        self._git: subprocess.Popen[bytes] | None = None
        self._kept: dict[str, tuple[int, bytes]] = {}

    def __call__(self, oid: str) -> tuple[int, bytes]:
        found = self._kept.get(oid)
        if found is None:
            found = self._kept[oid] = self._ask(oid)
        return found

    def fetch(self, oids: Iterable[str]) -> None:
        """Read ``oids`` in one exchange, each kept (one missing is asked again when
        read).  Asked 1,000 at a time: git's answers fill its pipe until read, and a
        thousand questions fit in the other, so neither side waits on the other."""
        wanted = [o for o in dict.fromkeys(oids) if o not in self._kept and _HEX.fullmatch(o)]
        for at in range(0, len(wanted), 1000):
            chunk = wanted[at : at + 1000]
            self._send(b"".join(oid.encode("ascii") + b"\n" for oid in chunk))
            for oid in chunk:
                with contextlib.suppress(KeyError):
                    self._kept[oid] = self._answer(oid)

    def _ask(self, oid: str) -> tuple[int, bytes]:
        if not _HEX.fullmatch(oid):
            raise ValueError(f"not an object id: {oid!r}")
        self._send(oid.encode("ascii") + b"\n")
        return self._answer(oid)

    def _send(self, lines: bytes) -> None:
        git = self._started()
        assert git.stdin is not None
        try:
            git.stdin.write(lines)
            git.stdin.flush()
        except OSError:
            pass  # git is gone: its answer is then empty

    def _answer(self, oid: str) -> tuple[int, bytes]:
        git = self._started()
        assert git.stdout is not None
        head = git.stdout.readline().split()
        if head[1:] == [b"missing"]:
            raise KeyError(oid)
        if len(head) != 3 or head[1] not in _KINDS or not head[2].isdigit():
            raise StoreError(str(self._gitdir), f"git cat-file could not read {oid}")
        size = int(head[2])
        data = git.stdout.read(size + 1)  # the object and git's newline after it
        if len(data) != size + 1:
            raise StoreError(str(self._gitdir), f"git cat-file could not read {oid}")
        return _KINDS[head[1]], data[:size]

    def _started(self) -> subprocess.Popen[bytes]:
        if self._git is None:
            import subprocess  # lazy: start-up; only a read without libgit2 starts git

            argv = ["git", "--git-dir", str(self._gitdir), "cat-file", "--batch"]
            pipe = subprocess.PIPE
            try:
                self._git = subprocess.Popen(
                    argv, stdin=pipe, stdout=pipe, stderr=subprocess.DEVNULL
                )
            except OSError as exc:
                raise environment_fault(exc, str(self._gitdir)) or StoreError(
                    str(self._gitdir), f"cannot run git: {exc}"
                ) from None
        return self._git

    def done(self) -> None:
        """A write's reading is over: git's process ends, unless it is ``held``."""
        if not self.held:
            self.close()

    def close(self) -> None:
        """End git's process (if one was started)."""
        git, self._git = self._git, None
        if git is not None:
            for pipe in (git.stdin, git.stdout):
                with contextlib.suppress(OSError):
                    if pipe is not None:
                        pipe.close()
            git.wait()


def peeled(read: Read, oid: str | None, depth: int = 8) -> tuple[str, bytes] | None:
    """The commit ``oid`` names (tags followed): its id and bytes; None when it names
    none.  ``KeyError`` when one of them is missing."""
    for _ in range(depth):
        if oid is None:
            return None
        kind, data = read(oid)
        if kind == COMMIT:
            return oid, data
        head = data[: data.find(b"\n")].split(b" ")
        if kind != TAG or len(head) != 2 or head[0] != b"object":
            return None
        oid = head[1].decode("ascii", "replace")
    return None


def commit_tree(data: bytes) -> str | None:
    """The tree a commit's bytes name (None when their first line names none)."""
    head = data[: data.find(b"\n")].split(b" ")
    return head[1].decode("ascii", "replace") if len(head) == 2 and head[0] == b"tree" else None


def odb_reader(repo: pygit2.Repository) -> Read:
    """libgit2's reading of ``repo``'s objects."""

    def read(oid: str) -> tuple[int, bytes]:
        kind, data = repo.odb.read(oid)
        return int(kind), bytes(data)

    return read


def reading(
    place: Place, ref: str, held: CatFile | None = None
) -> tuple[Read, Callable[[], str | None], CatFile | None]:
    """How a write reads the store's objects and what ``ref`` points at: through
    libgit2 when this process has loaded it (or the refs are not plain files), else
    through one git process (the ``CatFile`` given, ``held`` when the command holds
    one, for the caller's ``done``) and the ref's file.  A command that needs nothing else of libgit2 (an import) so never
    loads it: that costs more than the whole of git's process."""
    from gitstore.git.refs import files  # lazy: the refs' floor is above this module's
    from gitstore.lazy import loaded

    if loaded("pygit2") or files.plain_gitdir(place.gitdir) is None:
        repo = place.repo

        def tip() -> str | None:
            try:
                return str(repo.lookup_reference(ref).resolve().target)
            except (KeyError, ValueError, pygit2.InvalidSpecError):
                return None

        return odb_reader(repo), tip, None
    cat = held or CatFile(place.gitdir)
    return cat, lambda: files.read_ref(place.gitdir, ref), cat
