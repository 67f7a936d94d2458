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

import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Protocol

COMMIT, TREE, BLOB = 1, 2, 3  # as pygit2's ``ObjectType`` numbers them
BLOB_MODE, TREE_MODE = 0o100644, 0o040000
_WORDS = {COMMIT: b"commit", TREE: b"tree", BLOB: b"blob", 4: b"tag"}


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


def person(signature: Signature) -> Who:
    """An author or committer's parts, from a pygit2 signature."""
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


def loose_estimate(gitdir: Path) -> int:
    """git's estimate of the loose objects: one fan-out folder's count times 256."""
    try:
        names = os.listdir(folder(gitdir) / _SAMPLE)
    except OSError:
        return 0
    return 256 * sum(1 for name in names if len(name) == 38)
