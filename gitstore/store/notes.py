"""Git notes on conversation anchors, written with our own compare-and-swap.

libgit2's ``create_note`` loses notes under concurrent writers, so a note is
written as a commit on the notes ref whose tree maps the annotated object's
hex id to the note blob, moved with the same CAS-and-retry as an append.

Notes are written in git's fan-out layout, ``ab/cdef...`` (2 + 38 hex), so a
write rewrites one subtree of about n/256 entries and the root of at most 256,
and reads only the notes its change asks for: its cost does not grow with the
number of conversations.  Any layout is read: flat (older jp, or git below its
fan-out threshold), ``ab/cd/ef...`` (git, for very many notes) and a mix.  A
write moves the flat notes at the root into the fan-out (once, O(n)) and
removes the note it writes from wherever else it is, so a note is stored once.

Metadata notes (``refs/notes/meta``) hold one JSON object per line,
``{"k": key, "v": value, "t": unix-ms, "m": machine}``; the newest line per
key wins (ties broken by machine), and two notes merge by the union of their
lines, like ``git notes merge -s cat_sort_uniq``.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore import faults
from gitstore.boundary import NOTES_MAX_DEPTH, meta_item
from gitstore.errors import ConcurrentUpdate, LockedRef
from gitstore.fs import flock
from gitstore.refs.transaction import RefUpdate

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

RETRIES = 60
# the operation log's hook around a ref move (``oprecord.Recorder.moving``)
Record = Callable[[Sequence[RefUpdate]], AbstractContextManager[None]]


def no_record(_: Sequence[RefUpdate]) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


def _stale_lock(repo: pygit2.Repository, ref: str) -> LockedRef | None:
    lock = Path(repo.path) / f"{ref}.lock"
    age = flock.ref_lock_age(lock)
    if age is None or age < flock.REF_LOCK_STALE:
        return None
    return LockedRef(ref, str(lock), age)


def _text(repo: pygit2.Repository, oid: pygit2.Oid) -> str:
    blob = repo[oid]
    assert isinstance(blob, pygit2.Blob)
    return bytes(blob.data).decode("utf-8", "replace")


# notes of SHA-1 or SHA-256 objects, as named flat at the root of a notes tree
_FLAT = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_HEX_PART = re.compile(r"[0-9a-f]{2}")
# the depth at which notes are written: ``ab/cdef...``
FANOUT = 1


def _tree_entries(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, pygit2.Oid]:
    """Annotated hex id -> note blob id, over flat and fan-out layouts.

    Only names that spell an object id count; folders deeper than any fan-out
    can be (``NOTES_MAX_DEPTH``) are not entered, so a hostile tree of
    thousands of levels costs nothing.
    """
    out: dict[str, pygit2.Oid] = {}
    stack: list[tuple[pygit2.Tree, str, int]] = [(tree, "", 0)]
    while stack:
        node, prefix, depth = stack.pop()
        for entry in node:
            name = prefix + (entry.name or "")
            if entry.type_str == "tree":
                if depth + 1 < NOTES_MAX_DEPTH and _HEX_PART.fullmatch(entry.name or ""):
                    sub = repo[entry.id]
                    if isinstance(sub, pygit2.Tree):
                        stack.append((sub, name, depth + 1))
            elif entry.type_str == "blob" and _FLAT.match(name):
                out.setdefault(name, entry.id)
    return out


def _subtree(repo: pygit2.Repository, tree: pygit2.Tree | None, name: str) -> pygit2.Tree | None:
    if tree is None or len(name) != 2:
        return None
    try:
        entry = tree[name]
    except KeyError:
        return None
    if entry.type_str != "tree":
        return None
    sub = repo[entry.id]
    assert isinstance(sub, pygit2.Tree)
    return sub


def _lookup(repo: pygit2.Repository, tree: pygit2.Tree, target: str) -> pygit2.Oid | None:
    """The note blob of ``target`` in any layout: ``target``, ``ab/cdef...``, ``ab/cd/ef...``..."""
    node: pygit2.Tree | None = tree
    rest = target
    while node is not None and rest:
        try:
            entry = node[rest]
        except KeyError:
            pass
        else:
            if entry.type_str == "blob":
                oid: pygit2.Oid = entry.id
                return oid
        if len(rest) <= 2:
            return None
        node, rest = _subtree(repo, node, rest[:2]), rest[2:]
    return None


class NoteTexts(Mapping[str, str]):
    """The notes of one notes tree, annotated hex id -> text, each read when asked for.

    Looking one up costs a few tree lookups whatever the number of notes;
    iterating or ``len`` lists the whole tree once (but reads no text).
    """

    def __init__(self, repo: pygit2.Repository, tree: pygit2.Tree | None) -> None:
        self._repo = repo
        self._tree = tree
        self._texts: dict[str, str] = {}
        self._entries: dict[str, pygit2.Oid] | None = None

    def _blob(self, target: str) -> pygit2.Oid | None:
        if self._entries is not None:
            return self._entries.get(target)
        if self._tree is None or not target:
            return None
        return _lookup(self._repo, self._tree, target)

    def __getitem__(self, target: str) -> str:
        if target in self._texts:
            return self._texts[target]
        oid = self._blob(target) if isinstance(target, str) else None
        if oid is None:
            raise KeyError(target)
        text = self._texts[target] = _text(self._repo, oid)
        return text

    def __contains__(self, target: object) -> bool:
        return isinstance(target, str) and (target in self._texts or self._blob(target) is not None)

    def _all(self) -> dict[str, pygit2.Oid]:
        if self._entries is None:
            self._entries = _tree_entries(self._repo, self._tree) if self._tree is not None else {}
        return self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _tip_tree(repo: pygit2.Repository, ref: str) -> pygit2.Tree | None:
    try:
        commit = repo.lookup_reference(ref).peel(pygit2.Commit)
    except (KeyError, pygit2.InvalidSpecError, ValueError):
        return None
    tree: pygit2.Tree = commit.tree
    return tree


def read_all(repo: pygit2.Repository, ref: str) -> dict[str, str]:
    """Every note under ``ref``: annotated hex id -> text."""
    tree = _tip_tree(repo, ref)
    if tree is None:
        return {}
    entries = _tree_entries(repo, tree)
    return {k: _text(repo, v) for k, v in entries.items()}


def read(repo: pygit2.Repository, ref: str, target: str) -> str | None:
    tree = _tip_tree(repo, ref)
    oid = _lookup(repo, tree, target) if tree is not None and target else None
    return _text(repo, oid) if oid is not None else None


def _edit(
    repo: pygit2.Repository,
    tree: pygit2.Tree | None,
    edits: Mapping[str, pygit2.Oid | None],
    depth: int = 0,
) -> pygit2.Oid | None:
    """``tree`` with each note in ``edits`` (named relative to it) set to its blob at
    depth ``FANOUT``, or removed when None, and removed wherever else it is (flat at
    the root, deeper fan-out).  Only the subtrees on those notes' paths are rewritten.
    None when the tree ends up empty (below the root)."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    edits = dict(edits)
    if depth == 0 and tree is not None:
        # flat notes at the root (older jp, small git trees) move into the fan-out
        # once; the root then holds at most 256 subtrees
        for entry in tree:
            name = entry.name or ""
            if entry.type_str == "blob" and _FLAT.match(name):
                edits.setdefault(name, entry.id)
    inner: dict[str, dict[str, pygit2.Oid | None]] = {}
    for name, blob in edits.items():
        if depth == FANOUT and blob is not None:
            builder.insert(name, blob, pygit2.GIT_FILEMODE_BLOB)
        elif builder.get(name) is not None:
            builder.remove(name)
        if len(name) <= 2:
            continue
        if depth < FANOUT:  # placed one level down
            inner.setdefault(name[:2], {})[name[2:]] = blob
        elif _subtree(repo, tree, name[:2]) is not None:  # a copy in a deeper fan-out goes
            inner.setdefault(name[:2], {})[name[2:]] = None
    for prefix, sub_edits in inner.items():
        sub = _edit(repo, _subtree(repo, tree, prefix), sub_edits, depth + 1)
        if sub is not None:
            builder.insert(prefix, sub, pygit2.GIT_FILEMODE_TREE)
        elif builder.get(prefix) is not None:
            builder.remove(prefix)
    if depth > 0 and len(builder) == 0:
        return None
    oid: pygit2.Oid = builder.write()
    return oid


def _write(
    repo: pygit2.Repository, tree: pygit2.Tree | None, edits: Mapping[str, pygit2.Oid | None]
) -> pygit2.Oid:
    oid = _edit(repo, tree, edits)
    assert oid is not None, "the root is written even when empty"
    return oid


def write_tree(repo: pygit2.Repository, texts: Mapping[str, str]) -> pygit2.Oid:
    """A new notes tree, in the fan-out layout, holding ``texts`` (annotated hex id -> text)."""
    return _write(repo, None, {t: repo.create_blob(text.encode()) for t, text in texts.items()})


def update(
    repo: pygit2.Repository,
    ref: str,
    changes: Callable[[NoteTexts], Mapping[str, str | None]],
    signature: pygit2.Signature,
    message: str,
    record: Record = no_record,
) -> None:
    """Apply ``changes(current notes) -> {target: new text or None to remove}`` with CAS.

    ``current notes`` is a lazy mapping: only the notes ``changes`` looks up are read.
    ``record`` is told of the ref move (the operation log).  A lock file that
    outlived its writer raises ``LockedRef`` at once instead of retrying.
    """
    for attempt in range(RETRIES):
        try:
            current = repo.lookup_reference(ref)
            parent: pygit2.Commit | None = current.peel(pygit2.Commit)
        except KeyError:
            parent = None
        existing = parent.tree if parent is not None else None
        wanted = changes(NoteTexts(repo, existing))
        if not wanted:
            return
        for target in wanted:
            if not _FLAT.match(target):
                raise ValueError(f"not an object id to annotate: {target!r}")
        blobs = {
            target: repo.create_blob(text.encode()) if text is not None else None
            for target, text in wanted.items()
        }
        tree = _write(repo, existing, blobs)
        faults.point("notes:objects-written")
        old = str(parent.id) if parent is not None else None
        try:
            oid = repo.create_commit(
                None, signature, signature, message, tree, [parent.id] if parent else []
            )
            with record([RefUpdate(ref, old, str(oid))]):
                if parent is None:
                    repo.create_reference_direct(ref, oid, False, message=message)
                else:
                    # set_target moves the ref only if it still holds what ``current``
                    # was read with (compare-and-swap), and logs ``message`` as is
                    current.set_target(oid, message)
            return
        except (pygit2.AlreadyExistsError, pygit2.GitError, OSError):
            locked = _stale_lock(repo, ref)
            if locked is not None:
                raise locked from None
            time.sleep(random.uniform(0, 0.002 * (1 + attempt)))
    raise _stale_lock(repo, ref) or ConcurrentUpdate(ref)


# -- metadata lines -------------------------------------------------------------


def meta_values(text: str | None) -> dict[str, Any]:
    """The newest value of each key in a metadata note (None values mean unset).

    Lines that are not well-formed (``boundary.meta_item``) are skipped.
    """
    best: dict[str, tuple[int, str, Any]] = {}
    for line in (text or "").splitlines():
        item = meta_item(line)
        if item is None:
            continue
        key = item.key
        if key not in best or (item.stamp, item.machine) > best[key][:2]:
            best[key] = (item.stamp, item.machine, item.value)
    return {k: v[2] for k, v in best.items() if v[2] is not None}


def meta_line(key: str, value: Any, stamp_ms: int, machine: str) -> str:
    return json.dumps({"k": key, "v": value, "t": stamp_ms, "m": machine}, sort_keys=True)


def last_stamp(text: str | None, machine: str) -> int:
    """The newest stamp ``machine`` wrote into a metadata note (0 if none)."""
    best = 0
    for line in (text or "").splitlines():
        item = meta_item(line)
        if item is not None and item.machine == machine:
            best = max(best, item.stamp)
    return best


def union(a: str | None, b: str | None) -> str:
    """Union of two notes' lines, sorted and de-duplicated (cat_sort_uniq)."""
    lines = {line for line in (a or "").splitlines() + (b or "").splitlines() if line.strip()}
    return "".join(line + "\n" for line in sorted(lines))


def compact_meta(text: str, limit: int = 20) -> str:
    """Keep only the newest line per key once a note grows past ``limit`` lines."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) <= limit:
        return text
    newest: dict[str, tuple[tuple[int, str], str]] = {}
    for line in lines:
        item = meta_item(line)
        if item is None:
            continue
        rank = (item.stamp, item.machine)
        if item.key not in newest or rank > newest[item.key][0]:
            newest[item.key] = (rank, line)
    return "".join(v[1] + "\n" for v in sorted(newest.values()))
