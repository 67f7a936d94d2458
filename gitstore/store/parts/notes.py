"""A store's notes: what hangs on a conversation's anchor blob, metadata and review sources.

A conversation's notes hang on the blob ``jp-conversation <id>`` (its anchor),
under ``refs/notes/jp-meta`` (metadata lines, ``gitstore.store.notes``) and
``refs/notes/jp-source`` (the conversation a review reviews); a project's
repository keeps them under ``refs/notes/jp/``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from gitstore import ids
from gitstore.git import refs as refnames
from gitstore.store import notes

if TYPE_CHECKING:
    import pygit2

    from gitstore.store.ground import Ground
    from gitstore.store.parts.ops import Ops
    from gitstore.store.parts.refs import Refs
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # only a push's notes check reads history


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
        found = cache.derived(key, tip)
        if isinstance(found, dict):
            text = found.get("text")
            return text if isinstance(text, str) else None
        text = notes.read(self._g.repo, ref, anchor)
        if self._refs.target(ref) == tip:  # not moved while it was read
            cache.put_derived(key, tip, {"text": text})
        return text

    def all(self, ref: str) -> dict[str, str]:
        """Anchor -> note text, for every note under ``ref``."""
        return notes.read_all(self._g.repo, ref)

    def set_note(self, ref: str, cid: str, text: str | None, reason: str) -> None:
        target = self.anchor(cid)
        notes.update(
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
        return notes.meta_values(self.note(self.refs.meta, cid))

    def metas(
        self, cids: Iterable[str], keys: Collection[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        """``meta`` of each of ``cids``, the notes read in one pass (not one per id).

        With ``keys``, a note whose text names none of them (as a JSON string, or
        with an escape in it that could spell one) is not parsed and reads as empty:
        a first pull's report asks 10,000 notes for one key few hold."""
        anchors = {self.anchor(c): c for c in cids}
        texts = notes.read_many(self._g.repo, self.refs.meta, anchors) if anchors else {}
        wanted = None if keys is None else [f'"{k}"' for k in keys]
        return {
            cid: notes.meta_values(text) if _may_name(text, wanted) else {}
            for a, cid in anchors.items()
            for text in (texts.get(a),)
        }

    def set_meta(self, cid: str, values: dict[str, Any], reason: str) -> None:
        self.set_metas({cid: values}, reason)

    def set_metas(self, values: dict[str, dict[str, Any]], reason: str) -> None:
        """Add metadata values to each conversation of ``values`` in one notes commit
        (an import of many conversations titles them all at once)."""
        targets = {self.anchor(cid): changes for cid, changes in values.items()}
        moment = self._g.seconds()  # one reading: the lines' stamp and the commit's time
        machine = self.machine

        def change(current: notes.NoteTexts) -> dict[str, str | None]:
            out: dict[str, str | None] = {}
            for target, changes in targets.items():
                text = current.get(target, "")
                # later writes from this machine must win even within one millisecond
                stamp = max(int(moment * 1000), notes.last_stamp(text, machine) + 1)
                lines = "".join(
                    notes.meta_line(k, v, stamp, machine) + "\n" for k, v in changes.items()
                )
                out[target] = notes.compact_meta(text + lines)
            return out

        # the anchors go in the note's kept pack, not a loose file each
        anchors = [ids.anchor_bytes(cid) for cid in values]
        who = self._g.person(moment)
        notes.update(
            self._g.place, self.refs.meta, change, who, reason, self._ops.moving, also=anchors
        )

    def outgoing(self, tip: str, known: Collection[str]) -> list[tuple[str, str]]:
        """(conversation id, or the annotated id when it names none; note text) of each
        note a push of the notes commit ``tip`` would send to a remote holding the
        commits ``known``: every blob a commit from ``tip`` down to ``known`` brings
        (one a merge takes from a parent is its parent's), each read once.  The check
        asked before notes leave (porcelain's secret scan)."""
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
        return _source(self.note(self.refs.source, cid))

    def sources(self) -> dict[str, str]:
        """Anchor hex id -> source id, for every compaction review."""
        out: dict[str, str] = {}
        for anchor, text in self.all(self.refs.source).items():
            value = _source(text)
            if value is not None:
                out[anchor] = value
        return out


def _brought(
    repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree
) -> Iterator[tuple[str, str]]:
    """(blob id, annotated id) of each note ``new`` holds that ``old`` does not."""
    if old is None:
        for target, oid in notes.tree_notes(repo, new).items():
            yield str(oid), target
        return
    for delta in old.diff_to_tree(new).deltas:
        if delta.status_char() in ("A", "M"):
            yield str(delta.new_file.id), delta.new_file.path.replace("/", "")


def _source(text: str | None) -> str | None:
    """The id a source note names (its first line), if it is one."""
    if not text or not text.strip():
        return None
    value = text.strip().splitlines()[0].strip()
    return value if ids.is_valid(value) else None


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
