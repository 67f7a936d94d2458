"""The store: conversations as chains of event commits under refs.

Every write is a compare-and-swap on one ref, or a journaled transaction
(``transaction.py``) when several refs move together.  Nothing here prints,
reads the environment or knows about models and commands.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore import ids, refs
from gitstore.boundary import Limits
from gitstore.clock import Clock, seconds
from gitstore.errors import (
    ConversationBusy,
    RefBusy,
    environment_fault,
)
from gitstore.fs import diskfault, flock
from gitstore.refs import transaction
from gitstore.refs.transaction import ANY, RefUpdate
from gitstore.store import notes, parts
from gitstore.store.types import Identity
from gitstore.store.writing import Writing

if TYPE_CHECKING:
    import pygit2

else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # loaded by the first command that touches git objects


class Store(Writing):
    """A store: conversations as chains of event commits, read and written.

    Reading and writing live in the layers below (``reading.py``,
    ``writing.py``); here are the active conversation, notes and metadata,
    the values kept in the cache and the hold on a conversation.  What callers
    use are its parts (``parts.py``): ``log``, ``refs``, ``notes``, ``local``
    and ``ops``.
    """

    def __init__(
        self,
        path: Path,
        identity: Identity | None = None,
        limits: Limits | Callable[[], Limits] | None = None,
        repair: bool = True,
        clock: Clock | None = None,
    ) -> None:
        self.log = parts.Log(self)
        self.refs = parts.Refs(self)
        self.notes = parts.Notes(self)
        self.local = parts.Local(self)
        self.ops = parts.Ops(self)
        super().__init__(path, identity, limits, repair, clock)

    def check_unlocked(self, name: str, wait: float | None = None) -> None:
        """Raise ``RefBusy`` when ``name``'s lock file stays (so moving it would fail).

        A lock a sibling holds for a moment (another jp moving ``JP_HEAD``) is
        waited for, up to ``wait`` seconds; one that outlived its writer is not.
        """
        lock = self.gitdir / f"{name}.lock"
        deadline = time.monotonic() + (transaction.WAIT_SECONDS if wait is None else wait)
        while lock.exists():
            locked = self._locked(name)
            if locked is not None:
                raise locked
            if time.monotonic() >= deadline:
                raise RefBusy(name, str(lock))
            time.sleep(transaction.POLL_SECONDS)

    def set_active(self, cid: str | None) -> None:
        """Point ``JP_HEAD`` at ``cid`` (None: no active one), waiting for a sibling's lock."""
        new = None if cid is None else transaction.SYMBOLIC + refs.live(cid)
        if cid is None and transaction.current(self.repo, refs.ACTIVE) is None:
            return
        deadline = time.monotonic() + transaction.WAIT_SECONDS
        while True:
            try:
                with self.ops.moving([RefUpdate(refs.ACTIVE, ANY, new)]):
                    if cid is None:
                        self.repo.references.delete(refs.ACTIVE)
                    else:
                        self.repo.create_reference_symbolic(refs.ACTIVE, refs.live(cid), True)
                return
            except (pygit2.GitError, OSError) as exc:
                fault = environment_fault(exc, str(self.gitdir))
                if fault is not None:
                    raise fault from None
                locked = self._locked(refs.ACTIVE)
                if locked is not None:
                    raise locked from None
                if time.monotonic() >= deadline:
                    self.check_unlocked(refs.ACTIVE, wait=0)
                    raise
                time.sleep(transaction.POLL_SECONDS)

    def anchor(self, cid: str) -> str:
        """The id of the blob ``jp-conversation <id>``, as ``git hash-object`` computes it."""
        data = ids.anchor_bytes(cid)
        return _sha1_hex(b"blob %d\0" % len(data) + data)

    def note(self, ref: str, cid: str) -> str | None:
        """The note on ``cid``'s anchor, cached under the notes ref's commit."""
        anchor = self.anchor(cid)
        tip = self.ref_target(ref)
        if tip is None:
            return None
        key = f"note {ref} {anchor}"
        found = self.cache.derived(key, tip)
        if isinstance(found, dict):
            text = found.get("text")
            return text if isinstance(text, str) else None
        text = notes.read(self.repo, ref, anchor)
        if self.ref_target(ref) == tip:  # not moved while it was read
            self.cache.put_derived(key, tip, {"text": text})
        return text

    def all_notes(self, ref: str) -> dict[str, str]:
        return notes.read_all(self.repo, ref)

    def set_note(self, ref: str, cid: str, text: str | None, reason: str) -> None:
        target = self.anchor(cid)
        diskfault.retried(partial(self.repo.create_blob, ids.anchor_bytes(cid)))
        notes.update(
            self.repo,
            ref,
            lambda _: {target: text},
            self._notes_signature(),
            reason,
            record=self.ops.moving,
        )

    def meta(self, cid: str) -> dict[str, Any]:
        return notes.meta_values(self.note(self.notes_refs.meta, cid))

    def metas(self, cids: Iterable[str]) -> dict[str, dict[str, Any]]:
        anchors = {self.anchor(c): c for c in cids}
        texts = notes.read_many(self.repo, self.notes_refs.meta, anchors) if anchors else {}
        return {cid: notes.meta_values(texts.get(a)) for a, cid in anchors.items()}

    def set_meta(self, cid: str, values: dict[str, Any], reason: str) -> None:
        target = self.anchor(cid)
        moment = seconds(self.clock)  # one reading: the lines' stamp and the commit's time

        def change(current: notes.NoteTexts) -> dict[str, str | None]:
            text = current.get(target, "")
            # later writes from this machine must win even within one millisecond
            stamp = max(int(moment * 1000), notes.last_stamp(text, self.machine) + 1)
            lines = "".join(
                notes.meta_line(k, v, stamp, self.machine) + "\n" for k, v in values.items()
            )
            return {target: notes.compact_meta(text + lines)}

        diskfault.retried(partial(self.repo.create_blob, ids.anchor_bytes(cid)))
        notes.update(
            self.repo,
            self.notes_refs.meta,
            change,
            self._notes_signature(moment),
            reason,
            self.ops.moving,
        )

    def source_of(self, cid: str) -> str | None:
        text = self.note(self.notes_refs.source, cid)
        if not text:
            return None
        value = text.strip().splitlines()[0].strip() if text.strip() else ""
        return value if ids.is_valid(value) else None

    def sources(self) -> dict[str, str]:
        """Anchor hex id -> source id, for every compaction conversation."""
        out: dict[str, str] = {}
        for anchor, text in self.all_notes(self.notes_refs.source).items():
            value = text.strip().splitlines()[0].strip() if text.strip() else ""
            if ids.is_valid(value):
                out[anchor] = value
        return out

    def cached_summaries(self, tips: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The summaries kept for ``tips`` (``keep_summaries``); a tip without one is absent."""
        return self.cache.summaries(tips)

    def keep_summaries(self, items: dict[str, dict[str, Any]]) -> None:
        """Keep a summary (a JSON object) per tip: commits never change, so neither do they."""
        self.cache.put_summaries(items)

    def cached_value(self, name: str, version: str) -> Any:
        """The value kept under ``name`` for ``version`` (e.g. a ref's commit), else None."""
        return self.cache.derived(name, version)

    def keep_value(self, name: str, version: str, value: Any) -> None:
        """Keep one JSON value per ``name``: the one for the newest ``version`` seen."""
        self.cache.put_derived(name, version, value)

    @contextmanager
    def hold(self, cid: str, wait: float = 0.0) -> Iterator[None]:
        """An advisory lock that the kernel releases if the process dies."""
        with flock.held(self.gitdir, ids.check(cid), wait, ConversationBusy(cid)):
            yield

    @contextmanager
    def hold_named(self, name: str, wait: float, busy: Exception) -> Iterator[None]:
        """``hold`` for a lock of jp's own that names no conversation (``name``: a
        fixed word of the caller's, such as ``session-import``)."""
        with flock.held(self.gitdir, name, wait, busy):
            yield


def _sha1_hex(data: bytes) -> str:
    try:  # CPython's own SHA-1: spares loading OpenSSL (3 ms of a read command's start)
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha1
    return str(sha1(data).hexdigest())
