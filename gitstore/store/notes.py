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
lines, like ``git notes merge -s cat_sort_uniq`` (``metalines.py``, whose
names this module re-exports).

A write reads the trees it changes as bytes (``objects.TreeEdit``), through
libgit2 where the process has loaded it, else through one ``git cat-file``
(``objects.reading``: an import never loads libgit2).  Its objects are written
loose (``pruned.Written``), or, for a write of many notes (``PACK_FROM``: an
import's titles), as one pack (``Packed``), and enter the store as every note
and operation record does, through ``gitstore/intake.py`` (``land``); a ``git
gc --prune=now`` beside it is met as ``gitstore/git/pruned.py`` says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore import faults, intake
from gitstore.boundary import NOTES_MAX_DEPTH
from gitstore.fs.place import Place
from gitstore.git import objects, pruned
from gitstore.intake import Record, no_record
from gitstore.store import packwrite
from gitstore.store.metalines import compact_meta, last_stamp, meta_line, meta_values, union

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

__all__ = ["compact_meta", "last_stamp", "meta_line", "meta_values", "union"]  # and the rest


Tree = objects.TreeEdit  # a tree's entries, read from its bytes
Read = objects.Read  # an object by its id: libgit2's, or one git process's (``objects.CatFile``)


def _get(read: Read, oid: str) -> tuple[int, bytes]:
    """``read(oid)``, raising ``Gone`` when it is missing."""
    try:
        return read(oid)
    except KeyError:
        raise pruned.Gone(oid) from None


def _text(read: Read, oid: str) -> str:
    kind, data = _get(read, oid)
    return data.decode("utf-8", "replace") if kind == objects.BLOB else ""


def _tree(read: Read, oid: str) -> Tree | None:
    """The tree ``oid`` (None when it is another kind of object), not to be changed:
    a write changes a copy."""
    kind, data = _get(read, oid)
    return _parsed(data) if kind == objects.TREE else None


@lru_cache(maxsize=512)
def _parsed(data: bytes) -> Tree:
    """A tree's bytes, parsed once (a write looks its subtrees up two or three times)."""
    return Tree(data)


# notes of SHA-1 or SHA-256 objects, as named flat at the root of a notes tree
_FLAT = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_HEX_PART = re.compile(r"[0-9a-f]{2}")
# the depth at which notes are written: ``ab/cdef...``
FANOUT = 1


def _tree_entries(read: Read, tree: Tree) -> dict[str, str]:
    """Annotated hex id -> note blob id, over flat and fan-out layouts.

    Only names that spell an object id count; folders deeper than any fan-out
    can be (``NOTES_MAX_DEPTH``) are not entered, so a hostile tree of
    thousands of levels costs nothing.
    """
    out: dict[str, str] = {}
    stack: list[tuple[Tree, str, int]] = [(tree, "", 0)]
    while stack:
        node, prefix, depth = stack.pop()
        for entry, mode, oid in node.entries():
            name = prefix + entry
            if mode == objects.TREE_MODE:
                if depth + 1 < NOTES_MAX_DEPTH and _HEX_PART.fullmatch(entry):
                    sub = _tree(read, oid.hex())
                    if sub is not None:
                        stack.append((sub, name, depth + 1))
            elif objects.is_blob(mode) and _FLAT.match(name):
                out.setdefault(name, oid.hex())
    return out


def tree_notes(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, str]:
    """Annotated hex id -> note blob id of every note in ``tree``."""
    return _tree_entries(_odb(repo), Tree(tree.read_raw()))


def _subtree(read: Read, tree: Tree | None, name: str) -> Tree | None:
    if tree is None or len(name) != 2:
        return None
    found = tree.get(name)
    if found is None or found[0] != objects.TREE_MODE:
        return None
    return _tree(read, found[1].hex())


def _lookup(read: Read, tree: Tree, target: str) -> str | None:
    """The note blob of ``target`` in any layout: ``target``, ``ab/cdef...``, ``ab/cd/ef...``..."""
    node: Tree | None = tree
    rest = target
    while node is not None and rest:
        found = node.get(rest)
        if found is not None and objects.is_blob(found[0]):
            return found[1].hex()
        if len(rest) <= 2:
            return None
        node, rest = _subtree(read, node, rest[:2]), rest[2:]
    return None


class NoteTexts(Mapping[str, str]):
    """The notes of one notes tree, annotated hex id -> text, each read when asked for.

    Looking one up costs a few tree lookups whatever the number of notes;
    iterating or ``len`` lists the whole tree once (but reads no text).
    """

    def __init__(self, read: Read, tree: Tree | None) -> None:
        self._read = read
        self._tree = tree
        self._texts: dict[str, str] = {}
        self._entries: dict[str, str] | None = None

    def _blob(self, target: str) -> str | None:
        if self._entries is not None:
            return self._entries.get(target)
        if self._tree is None or not target:
            return None
        return _lookup(self._read, self._tree, target)

    def __getitem__(self, target: str) -> str:
        if target in self._texts:
            return self._texts[target]
        oid = self._blob(target) if isinstance(target, str) else None
        if oid is None:
            raise KeyError(target)
        text = self._texts[target] = _text(self._read, oid)
        return text

    def __contains__(self, target: object) -> bool:
        return isinstance(target, str) and (target in self._texts or self._blob(target) is not None)

    def _all(self) -> dict[str, str]:
        if self._entries is None:
            self._entries = _tree_entries(self._read, self._tree) if self._tree is not None else {}
        return self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


_odb = objects.odb_reader


def _ref(repo: pygit2.Repository, ref: str) -> str | None:
    """What ``ref`` points at, read by libgit2 (None when there is no such ref)."""
    try:
        return str(repo.lookup_reference(ref).resolve().target)
    except (KeyError, pygit2.InvalidSpecError, ValueError):
        return None


def _tip(read: Read, oid: str | None) -> tuple[str, Tree] | None:
    """The commit a notes ref points at (a tag peeled) and its tree; None when the ref
    names no commit.  ``pruned.Gone`` when one of them is missing (git's prune beside
    its writer)."""
    try:
        found = objects.peeled(read, oid)
    except KeyError as exc:
        raise pruned.Gone(str(exc.args[0]) if exc.args else "") from None
    if found is None:
        return None
    tree = objects.commit_tree(found[1])
    sub = _tree(read, tree) if tree is not None else None
    if sub is None:
        raise pruned.Gone(tree or found[0])
    return found[0], sub


def _tip_tree(repo: pygit2.Repository, ref: str) -> Tree | None:
    tip = _tip(_odb(repo), _ref(repo, ref))
    return tip[1] if tip is not None else None


def _read_all(repo: pygit2.Repository, ref: str) -> dict[str, str]:
    tree = _tip_tree(repo, ref)
    if tree is None:
        return {}
    read = _odb(repo)
    return {k: _text(read, v) for k, v in _tree_entries(read, tree).items()}


def read_all(repo: pygit2.Repository, ref: str) -> dict[str, str]:
    """Every note under ``ref``: annotated hex id -> text."""
    return pruned.reread(partial(_read_all, repo, ref), Path(repo.path), ref)


def _read(repo: pygit2.Repository, ref: str, target: str) -> str | None:
    tree = _tip_tree(repo, ref)
    oid = _lookup(_odb(repo), tree, target) if tree is not None and target else None
    return _text(_odb(repo), oid) if oid is not None else None


def read(repo: pygit2.Repository, ref: str, target: str) -> str | None:
    return pruned.reread(partial(_read, repo, ref, target), Path(repo.path), ref)


def _read_many(repo: pygit2.Repository, ref: str, targets: list[str]) -> dict[str, str | None]:
    texts = NoteTexts(_odb(repo), _tip_tree(repo, ref))
    return {t: texts.get(t) for t in targets}


def read_many(repo: pygit2.Repository, ref: str, targets: Iterable[str]) -> dict[str, str | None]:
    """The note of each of ``targets`` (None: none), the notes tree read once: many
    ``read`` calls would each parse the whole tree again."""
    return pruned.reread(partial(_read_many, repo, ref, list(targets)), Path(repo.path), ref)


Put = Callable[[int, bytes], bytes]  # writes an object: its raw id


def _edit(
    read: Read,
    tree: Tree | None,
    edits: Mapping[str, bytes | None],
    put: Put,
    depth: int = 0,
) -> bytes | None:
    """``tree`` with each note in ``edits`` (named relative to it) set to its blob at
    depth ``FANOUT``, or removed when None, and removed wherever else it is (flat at
    the root, deeper fan-out).  Only the subtrees on those notes' paths are made
    again, each given to ``put``.  None when the tree ends up empty (below the root)."""
    builder = tree.copy() if tree is not None else Tree()
    edits = dict(edits)
    if depth == 0:
        # flat notes at the root (older jp, small git trees) move into the fan-out
        # once; the root then holds at most 256 subtrees
        for name, oid in list(builder.blobs()):
            if _FLAT.match(name):
                edits.setdefault(name, oid)
    inner: dict[str, dict[str, bytes | None]] = {}
    for name, blob in edits.items():
        if depth == FANOUT and blob is not None:
            builder.insert(name, blob, objects.BLOB_MODE)
        else:
            builder.remove(name)
        if len(name) <= 2:
            continue
        if depth < FANOUT:  # placed one level down
            inner.setdefault(name[:2], {})[name[2:]] = blob
        elif _subtree(read, tree, name[:2]) is not None:  # a copy in a deeper fan-out goes
            inner.setdefault(name[:2], {})[name[2:]] = None
    for prefix, sub_edits in inner.items():
        sub = _edit(read, _subtree(read, tree, prefix), sub_edits, put, depth + 1)
        if sub is not None:
            builder.insert(prefix, sub, objects.TREE_MODE)
        else:
            builder.remove(prefix)
    if depth > 0 and len(builder) == 0:
        return None
    return put(objects.TREE, builder.data())


def _write(read: Read, tree: Tree | None, edits: Mapping[str, bytes | None], put: Put) -> bytes:
    oid = _edit(read, tree, edits, put)
    assert oid is not None, "the root is written even when empty"
    return oid


def write_tree(repo: pygit2.Repository, texts: Mapping[str, str]) -> pygit2.Oid:
    """A new notes tree, in the fan-out layout, holding ``texts`` (annotated hex id -> text),
    its objects written loose (again when a prune takes their folder: ``pruned.write``)."""

    def put(kind: int, data: bytes) -> bytes:
        oid: pygit2.Oid = pruned.write(partial(repo.odb.write, kind, data))
        return oid.raw

    blobs: dict[str, bytes | None] = {t: put(objects.BLOB, x.encode()) for t, x in texts.items()}
    return pygit2.Oid(raw=_write(_odb(repo), None, blobs, put))


def update(
    where: Place | pygit2.Repository,
    ref: str,
    changes: Callable[[NoteTexts], Mapping[str, str | None]],
    signature: pygit2.Signature | objects.Who,
    message: str,
    record: Record = no_record,
    also: Sequence[bytes] = (),
    onto: Callable[[str], list[str]] | None = None,
) -> None:
    """Apply ``changes(current notes) -> {target: new text or None to remove}`` with CAS.

    ``onto(tip)``: the new commit's parents in place of the tip (the history since
    those folded into the new commit; its tree is still the tip's, changed).

    ``also``: blobs written with the note (the anchor it hangs on).

    ``current notes`` is a lazy mapping: only the notes ``changes`` looks up are read.
    ``record`` is told of the ref move (the operation log).  The commit enters the
    store through ``intake.land``: its objects written, the ref moved by
    compare-and-swap, made again on top of another writer (a lock that outlived
    its writer raises ``LockedRef`` at once; a prune beside: ``pruned.py``).

    Given a ``Place`` in a process that has not loaded libgit2, the notes are read
    by one git process and the ref as a file: a write of many notes (an import's
    titles) then never loads it (a write of a few does, for its loose objects).
    """
    place = where if isinstance(where, Place) else Place.of(where)
    read, tip, cat = objects.reading(place, ref)
    person = objects.person(signature)
    attempt = partial(_prepare, read, tip, place, changes, person, message, also, onto)
    try:
        intake.land(place, ref, attempt, message, record)
    finally:
        if cat is not None:
            cat.close()


def _prepare(
    read: Read,
    tip: Callable[[], str | None],
    place: Place,
    changes: Callable[[NoteTexts], Mapping[str, str | None]],
    person: objects.Who,
    message: str,
    also: Sequence[bytes] = (),
    onto: Callable[[str], list[str]] | None = None,
) -> tuple[str | None, str, pruned.Written] | None:
    """One attempt's objects: the commit the ref was read at, the new commit and
    the objects written; None: nothing to change."""
    found = _tip(read, tip())
    parent, existing = found if found is not None else (None, None)
    wanted = changes(NoteTexts(read, existing))
    if not wanted:
        return None
    for target in wanted:
        if not _FLAT.match(target):
            raise ValueError(f"not an object id to annotate: {target!r}")
    packed = Packed(place.gitdir) if len(also) + len(wanted) >= PACK_FROM else None
    written = packed if packed is not None else pruned.Written(place.gitdir)
    put = written.put
    for data in also:
        put(objects.BLOB, data)
    blobs = {
        target: put(objects.BLOB, text.encode()) if text is not None else None
        for target, text in wanted.items()
    }
    tree = _write(read, existing, blobs, put)
    parents = [parent] if parent is not None else []
    if onto is not None and parent is not None:
        parents = onto(parent)
    commit = objects.commit_data(tree.hex(), parents, person, person, message)
    oid = put(objects.COMMIT, commit)
    try:
        if packed is not None:
            packed.publish()
        faults.point("notes:objects-written")
    except BaseException:
        written.close()  # the attempt never reaches ``land``'s move
        raise
    return parent, oid.hex(), written


# notes (and anchors) from which a write's objects go into one pack, not a loose
# file each: an import's titles (hundreds), not a title set by hand (a few objects,
# where a pack would cost more than it saves and add to the packs git's gc counts)
PACK_FROM = 32


class Packed(pruned.Written):
    """The objects of one notes commit of many notes, written as one pack
    (``packwrite.write_objects``) once the commit is made, not one loose file each
    (an import of 250 titles wrote about 420, each its own ``openat`` and rename).

    Their ids are the loose ones' (the same bytes); the pack is published behind a
    ``.keep``, so git's repack (``gc --prune=now`` beside the write included) leaves
    it alone until the ref names it, and ``close`` (``intake.land``, moved or not)
    lets it go."""

    def __init__(self, gitdir: Path) -> None:
        super().__init__(gitdir)
        self._packs: tuple[str, ...] = ()

    def put(self, kind: int, data: bytes) -> bytes:
        """Keep one object for the pack; its raw id."""
        oid = objects.object_id(kind, data)
        self._made.setdefault(oid.hex(), (kind, data))
        return oid

    def publish(self) -> None:
        """Write the pack of every object kept (behind its ``.keep``)."""
        self._packs += packwrite.write_objects(self._gitdir, self._made.values())

    def _present(self) -> bool:
        return bool(self._packs) and packwrite.Packed(None, self._packs).present(self._gitdir)

    def refresh(self) -> None:
        """Before the ref moves: the pack again should it be gone (a kept pack is
        left alone by git; only a hand could remove it)."""
        if not self._present():
            self.publish()

    def settle(self) -> None:
        """After the ref moved: a ``gc --prune=now`` beside waited out, the pack still
        there (git's repack leaves a kept pack alone), else ``pruned``."""

        def check() -> None:
            if not self._present():
                raise pruned.pruned(objects.folder(self._gitdir))

        pruned.after_move(self._gitdir, check)

    def close(self) -> None:
        packwrite.release(self._packs)
        self._packs = ()
