"""Notes on conversation anchors: their trees, their metadata lines, the ``Notes`` part.

A conversation's notes hang on the blob ``jp-conversation <id>`` (its anchor),
under ``refs/notes/jp-meta`` (metadata lines) and ``refs/notes/jp-source`` (the
conversation a review reviews); a project's repository keeps them under
``refs/notes/jp/``.  ``Notes`` is the part a ``Store`` shows (``store.notes``).

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
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore import faults, ids, intake
from gitstore.boundary import NOTES_MAX_DEPTH, meta_item, source_id
from gitstore.events.canonical import encoder
from gitstore.fs.place import Place
from gitstore.git import objects, pruned
from gitstore.git import refs as refnames
from gitstore.intake import Record, no_record

if TYPE_CHECKING:
    import pygit2

    from gitstore.store import packwrite
    from gitstore.store.ground import Ground
    from gitstore.store.parts.ops import Ops
    from gitstore.store.parts.refs import Refs
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")
    packwrite = lazy_module("gitstore.store.packwrite")  # only a write of many notes


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

    def prefetch(self, targets: Iterable[str]) -> None:
        """Read the fan-out subtrees that may hold ``targets`` in one exchange with git
        (``CatFile.fetch``), not one each as they are looked up (an import's titles:
        a subtree for most of them)."""
        fetch = getattr(self._read, "fetch", None)
        if fetch is not None and self._tree is not None:
            found = (self._tree.get(t[:2]) for t in targets)
            fetch(f[1].hex() for f in found if f is not None and f[0] == objects.TREE_MODE)

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
    held: objects.CatFile | None = None,
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
    by one git process (``held``: the command's) and the ref as a file: a write of
    many notes (an import's titles) then never loads it (a write of a few does, for
    its loose objects).
    """
    place = where if isinstance(where, Place) else Place.of(where)
    read, tip, cat = objects.reading(place, ref, held)
    person = objects.person(signature)
    attempt = partial(_prepare, read, tip, place, changes, person, message, also, onto)
    try:
        intake.land(place, ref, attempt, message, record)
    finally:
        if cat is not None:
            cat.done()


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
        made = ((kind, data, bytes.fromhex(oid)) for oid, (kind, data) in self._made.items())
        self._packs += packwrite.write_objects(self._gitdir, made)  # each hashed once

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


# -- metadata lines ---------------------------------------------------------------------


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


_LINE = encoder(sort_keys=True)  # ``json.dumps(line, sort_keys=True)``


def meta_line(key: str, value: Any, stamp_ms: int, machine: str) -> str:
    return _LINE({"k": key, "v": value, "t": stamp_ms, "m": machine})


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


# -- the part a store shows ------------------------------------------------------------


class Notes:
    """Notes on conversations' anchors: metadata lines and review sources."""

    def __init__(self, ground: Ground, refs: Refs, ops: Ops) -> None:
        self._g = ground
        self._refs = refs
        self._ops = ops

    @property
    def refs(self) -> refnames.NotesRefs:
        """This store's notes refs (``refs/notes/jp/...`` in a project's repository)."""
        return self._g.notes_refs

    @property
    def machine(self) -> str:
        """This machine's id in metadata lines (``jp.machine`` in the store's config)."""
        return self._g.machine

    def signature(self, at: float | None = None) -> pygit2.Signature:
        """The signature of a notes commit: the store's identity, at ``at`` (seconds),
        else its clock's time."""
        return self._g.signature(at)

    def anchor(self, cid: str) -> str:
        """The id of the blob ``jp-conversation <id>``, as ``git hash-object`` computes it."""
        data = ids.anchor_bytes(cid)
        return _sha1_hex(b"blob %d\0" % len(data) + data)

    def note(self, ref: str, cid: str) -> str | None:
        """The note on ``cid``'s anchor, cached under the notes ref's commit."""
        anchor = self.anchor(cid)
        tip = self._refs.target(ref)
        if tip is None:
            return None
        key = f"note {ref} {anchor}"
        cache = self._g.cache
        found = cache.values([key], tip).get(key)
        if isinstance(found, dict):
            text = found.get("text")
            return text if isinstance(text, str) else None
        text = read(self._g.repo, ref, anchor)
        if self._refs.target(ref) == tip:  # not moved while it was read
            cache.keep_values(tip, {key: {"text": text}})
        return text

    def all(self, ref: str) -> dict[str, str]:
        """Anchor -> note text, for every note under ``ref``."""
        return read_all(self._g.repo, ref)

    def set_note(self, ref: str, cid: str, text: str | None, reason: str) -> None:
        target = self.anchor(cid)
        update(
            self._g.place,
            ref,
            lambda _: {target: text},
            self._g.person(),
            reason,
            self._ops.moving,
            also=[ids.anchor_bytes(cid)],  # in the note's kept pack, not a loose file of its own
        )

    def meta(self, cid: str) -> dict[str, Any]:
        """The metadata values of ``cid`` (title, pin, labels, archived_at...)."""
        return meta_values(self.note(self.refs.meta, cid))

    def metas(
        self, cids: Iterable[str], keys: Collection[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        """``meta`` of each of ``cids``, the notes read in one pass (not one per id).

        With ``keys``, a note whose text names none of them (as a JSON string, or
        with an escape in it that could spell one) is not parsed and reads as empty:
        a first pull's report asks 10,000 notes for one key few hold."""
        anchors = {self.anchor(c): c for c in cids}
        texts = read_many(self._g.repo, self.refs.meta, anchors) if anchors else {}
        wanted = None if keys is None else [f'"{k}"' for k in keys]
        return {
            cid: meta_values(text) if _may_name(text, wanted) else {}
            for a, cid in anchors.items()
            for text in (texts.get(a),)
        }

    def set_meta(self, cid: str, values: dict[str, Any], reason: str) -> None:
        self.set_metas({cid: values}, reason)

    def set_metas(
        self, values: dict[str, dict[str, Any]], reason: str, anchored: Collection[str] = ()
    ) -> None:
        """Add metadata values to each conversation of ``values`` in one notes commit
        (an import of many conversations titles them all at once).  ``anchored``: the
        conversations this command created, whose anchors their packs hold already."""
        targets = {self.anchor(cid): changes for cid, changes in values.items()}
        moment = self._g.seconds()  # one reading: the lines' stamp and the commit's time
        machine = self.machine

        def change(current: NoteTexts) -> dict[str, str | None]:
            current.prefetch(targets)
            out: dict[str, str | None] = {}
            for target, changes in targets.items():
                text = current.get(target, "")
                # later writes from this machine must win even within one millisecond
                stamp = max(int(moment * 1000), last_stamp(text, machine) + 1)
                lines = "".join(meta_line(k, v, stamp, machine) + "\n" for k, v in changes.items())
                out[target] = compact_meta(text + lines)
            return out

        # the anchors go in the note's kept pack, not a loose file each; an anchor is
        # no object's part (an old one may be pruned): written again, unless just written
        anchors = [ids.anchor_bytes(cid) for cid in values if cid not in anchored]
        who = self._g.person(moment)
        update(
            self._g.place,
            self.refs.meta,
            change,
            who,
            reason,
            self._ops.moving,
            also=anchors,
            held=self._g.held_reads(),
        )

    def outgoing(
        self, tip: str, known: Collection[str], keep: Callable[[str], bool] | None = None
    ) -> list[tuple[str, str]]:
        """(conversation id, or the annotated id when it names none; note text) of each
        note a push of the notes commit ``tip`` would send to a remote holding the
        commits ``known``: every blob a commit from ``tip`` down to ``known`` brings
        (one a merge takes from a parent is its parent's), each read once; with
        ``keep``, only the notes whose text it keeps (the others are not named).  The
        check asked before notes leave (porcelain's secret scan)."""
        repo = self._g.repo
        walker = repo.walk(pygit2.Oid(hex=tip))
        for oid in known:
            if oid in repo:
                walker.hide(pygit2.Oid(hex=oid))
        blobs: dict[str, str] = {}  # blob id -> annotated id
        for commit in walker:
            new: dict[str, str] | None = None
            olds: list[pygit2.Tree | None] = [p.tree for p in commit.parents] or [None]
            for old in olds:
                brought = dict(_brought(repo, old, commit.tree))
                new = brought if new is None else {b: p for b, p in new.items() if b in brought}
            blobs.update(new or {})
        out: list[tuple[str, str]] = []
        for blob, target in sorted(blobs.items(), key=lambda item: item[1]):
            found = repo[blob]
            text = found.data.decode("utf-8", "replace") if isinstance(found, pygit2.Blob) else ""
            if keep is None or keep(text):
                out.append((self._named(target), text))
        return out

    def _named(self, target: str) -> str:
        """The conversation whose anchor ``target`` is, else ``target`` itself."""
        repo = self._g.repo
        obj = repo.get(target)
        if isinstance(obj, pygit2.Blob):
            data = bytes(obj.data)
            if data.startswith(b"jp-conversation ") and data.endswith(b"\n"):
                cid = data[len("jp-conversation ") : -1].decode("ascii", "replace")
                if ids.is_valid(cid):
                    return cid
        return target

    def source_of(self, cid: str) -> str | None:
        """The conversation a review ``cid`` reviews, if it is one."""
        return source_id(self.note(self.refs.source, cid))

    def sources(self) -> dict[str, str]:
        """Anchor hex id -> source id, for every compaction review."""
        out: dict[str, str] = {}
        for anchor, text in self.all(self.refs.source).items():
            value = source_id(text)
            if value is not None:
                out[anchor] = value
        return out


def _brought(
    repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree
) -> Iterator[tuple[str, str]]:
    """(blob id, annotated id) of each note ``new`` holds that ``old`` does not."""
    if old is None:
        for target, oid in tree_notes(repo, new).items():
            yield str(oid), target
        return
    for delta in old.diff_to_tree(new).deltas:
        if delta.status_char() in ("A", "M"):
            yield str(delta.new_file.id), delta.new_file.path.replace("/", "")


def _sha1_hex(data: bytes) -> str:
    try:  # CPython's own SHA-1: spares loading OpenSSL (3 ms of a read command's start)
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha1  # lazy: the fallback, where CPython has no _sha1
    return str(sha1(data).hexdigest())


def _may_name(text: str | None, quoted: list[str] | None) -> bool:
    """Whether a note's ``text`` may hold one of the ``quoted`` keys (None: any)."""
    if quoted is None:
        return True
    if not text:
        return False
    return "\\" in text or any(q in text for q in quoted)
