"""The quick reading of one event commit a remote sent: its raw commit and tree
parsed here (one object database read each), instead of a libgit2 commit, tree
and entry object per commit.

It only ever accepts the plain shape, and takes nothing on trust: a commit that
starts with its tree, then at most one parent, then an author and a committer;
a tree of exactly one entry, ``event.json``, a file whose blob is present.
Anything else answers ``None``, and the caller reads the commit the slow way,
which refuses it with its reason (or accepts what is merely unusual, such as a
second parent line, to refuse it in its own words)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

COMMIT, TREE, BLOB = 1, 2, 3  # git's object type numbers
_HEAD = re.compile(
    rb"tree ([0-9a-f]{40}|[0-9a-f]{64})\n(?:parent ([0-9a-f]{40}|[0-9a-f]{64})\n)?"
    rb"author [^\n]*\ncommitter [^\n]*\n"
)
_ENTRY = re.compile(rb"10[0-7]{4} event\.json\x00")  # a file: libgit2 reads any 10xxxx so


class Plain:
    """An event commit of the plain shape: its parent and its blob's id."""

    __slots__ = ("blob", "parent")

    def __init__(self, parent: str | None, blob: bytes) -> None:
        self.parent = parent
        self.blob = blob


def read_plain(odb: pygit2.Odb, oid: str) -> Plain | None:
    """``oid`` as a plain event commit, or None (not one, or not present: the slow
    reading says which)."""
    try:
        kind, raw = odb.read(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if int(kind) != COMMIT:
        return None
    head = _HEAD.match(raw)
    if head is None:
        return None
    tree, parent = head.group(1), head.group(2)
    try:
        kind, entries = odb.read(tree.decode("ascii"))
    except (KeyError, ValueError, pygit2.GitError):
        return None
    width = len(tree) // 2  # the raw id's bytes: 20 (SHA-1) or 32 (SHA-256)
    entry = _ENTRY.match(entries)
    if int(kind) != TREE or entry is None or len(entries) != entry.end() + width:
        return None
    return Plain(parent.decode("ascii") if parent is not None else None, entries[-width:])
