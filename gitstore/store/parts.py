"""The named parts a ``Store`` shows: what a caller holds instead of the whole store.

- ``log``: the conversations' event chains: read them, view them, write on them;
- ``refs``: which conversations there are and where their tips stand: locate,
  list, the active one, moves, transactions, archive, delete, holds;
- ``notes``: what hangs on a conversation's anchor: metadata, review sources;
- ``local``: what this machine keeps for itself and never syncs: cached values
  and summaries, the store's configuration layer, housekeeping;
- ``ops``: the operation log: the operation this process records, the log
  itself and how long it keeps an operation.

Each part is a small object over the store it belongs to; the store itself
keeps only its opening (path, repository, identity, clock, limits), repair and
the format check.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pygit2

    from gitstore import refs as refnames
    from gitstore.cache.view import ChainView
    from gitstore.events import Event
    from gitstore.oplog.model import Op, RemoteChange
    from gitstore.oplog.recorder import Recorder
    from gitstore.refs.quarantine import Quarantined
    from gitstore.refs.transaction import RefUpdate
    from gitstore.store.core import Store
    from gitstore.store.transaction import Transaction
    from gitstore.store.types import Conversation, EventSource, Located


class Log:
    """The event chains: one commit per event, appended by compare-and-swap."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def load(self, cid: str) -> Conversation:
        """The conversation ``cid`` whole (``ConversationNotFound`` if there is none)."""
        return self._store.load(cid)

    def read_chain(self, tip: str) -> tuple[list[Event], list[str]]:
        """The events of the chain ending at ``tip``, oldest first, and their commits."""
        return self._store.read_chain(tip)

    def iter_chain(self, tip: str) -> Iterator[Event]:
        """The events from the root to ``tip``, read one at a time (only commit ids held)."""
        return self._store.iter_chain(tip)

    def text_candidates(self, tips: Sequence[str], needles: Sequence[str]) -> set[str] | None:
        """Which ``tips`` may hold every needle in one event's text (the cache's
        full-text index); None: read them all."""
        return self._store.text_candidates(tips, needles)

    def read_run(self, last: str, count: int | None = None) -> tuple[list[Event], list[str]]:
        """The last ``count`` events up to ``last`` (all with None)."""
        return self._store.read_run(last, count)

    def view(self, cid: str) -> tuple[Located, ChainView]:
        """Where ``cid`` is and a view of its chain (events parsed as they are asked for)."""
        return self._store.view(cid)

    def view_chain(self, tip: str) -> ChainView:
        return self._store.view_chain(tip)

    def current_turn(self, tip: str) -> list[Event]:
        return self._store.current_turn(tip)

    def event_at(self, commit: str) -> Event:
        return self._store.event_at(commit)

    def prefetch(self, tips: Sequence[str]) -> None:
        """Fill the cache for ``tips`` in one walk (what ``ls`` shows next)."""
        self._store.prefetch(tips)

    def create(
        self,
        cid: str,
        events: EventSource,
        parent: str | None,
        reason: str,
        tool_names: dict[str, str] | None = None,
    ) -> str:
        """Publish a new conversation whose chain ends with ``events``; its tip."""
        return self._store.create(cid, events, parent, reason, tool_names)

    def append(
        self,
        cid: str,
        events: Sequence[Event],
        expected: str,
        reason: str,
        tool_names: dict[str, str] | None = None,
    ) -> str:
        """Append on top of ``expected`` (``StaleTip`` if the tip moved); the new tip."""
        return self._store.append(cid, events, expected, reason, tool_names)

    def append_anyway(self, cid: str, events: Sequence[Event], reason: str) -> str:
        """Append on whatever the tip is now (retried on a concurrent move)."""
        return self._store.append_anyway(cid, events, reason)

    def write_commits(
        self, events: Sequence[Event], parent: str | None, tool_names: dict[str, str] | None = None
    ) -> list[str]:
        """One commit per event on top of ``parent``; moves no ref."""
        return self._store.write_commits(events, parent, tool_names)

    def write_packed(
        self, events: Iterable[Event], parent: str | None, names: dict[str, str]
    ) -> list[str]:
        """``write_commits`` for many (validated) events: into packs, nothing loose."""
        return self._store.write_packed(events, parent, names)


class Refs:
    """The conversations' refs, ``JP_HEAD``, and the locks and holds around moving them."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def list(self, archived: bool | None = False) -> builtins.list[Located]:
        """Conversations (live, archived, or both with None), in ref-name order."""
        return self._store._listed(archived)

    def locate(self, cid: str) -> Located | None:
        return self._store.locate(cid)

    def exists(self, cid: str) -> bool:
        return self._store.exists(cid)

    def require(self, cid: str) -> Located:
        """``locate``, or ``ConversationNotFound``."""
        return self._store.require(cid)

    def target(self, name: str) -> str | None:
        """The commit a ref points at, or None."""
        return self._store.ref_target(name)

    def active(self) -> str | None:
        """The active conversation (``JP_HEAD``), if any."""
        return self._store.active()

    def set_active(self, cid: str | None) -> None:
        self._store.set_active(cid)

    def move(self, updates: builtins.list[RefUpdate], reason: str) -> None:
        """Move several refs in one journaled transaction."""
        self._store.move(updates, reason)

    def transaction(self, reason: str) -> Transaction:
        """Named steps (advance, archive, activate...) moved together."""
        return self._store.transaction(reason)

    def archive(self, cid: str, reason: str) -> None:
        self._store.archive(cid, reason)

    def unarchive(self, cid: str, reason: str) -> None:
        self._store.unarchive(cid, reason)

    def delete(self, cid: str, reason: str) -> None:
        self._store.delete(cid, reason)

    def check_unlocked(self, name: str, wait: float | None = None) -> None:
        """``RefBusy`` when ``name``'s lock file stays (so moving it would fail)."""
        self._store.check_unlocked(name, wait)

    def hold(self, cid: str, wait: float = 0.0) -> AbstractContextManager[None]:
        """An advisory lock on ``cid`` that the kernel releases if the process dies."""
        return self._store.hold(cid, wait)

    def hold_named(self, name: str, wait: float, busy: Exception) -> AbstractContextManager[None]:
        """``hold`` for a lock of jp's own that names no conversation."""
        return self._store.hold_named(name, wait, busy)

    def quarantined(self) -> builtins.list[Quarantined]:
        """What pulls refused but kept aside (``refs/jp/quarantine/``)."""
        return self._store.quarantined()


class Notes:
    """Notes on conversations' anchors: metadata lines and review sources."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def refs(self) -> refnames.NotesRefs:
        """This store's notes refs (``refs/notes/jp/...`` in a project's repository)."""
        return self._store.notes_refs

    def signature(self) -> pygit2.Signature:
        """The signature of a notes commit: the store's identity, at its clock's time."""
        return self._store._notes_signature()

    def anchor(self, cid: str) -> str:
        """The id of the blob ``jp-conversation <id>`` the notes of ``cid`` hang on."""
        return self._store.anchor(cid)

    def note(self, ref: str, cid: str) -> str | None:
        return self._store.note(ref, cid)

    def all(self, ref: str) -> dict[str, str]:
        """Anchor -> note text, for every note under ``ref``."""
        return self._store.all_notes(ref)

    def set_note(self, ref: str, cid: str, text: str | None, reason: str) -> None:
        self._store.set_note(ref, cid, text, reason)

    def meta(self, cid: str) -> dict[str, Any]:
        """The metadata values of ``cid`` (title, pin, labels, archived_at...)."""
        return self._store.meta(cid)

    def metas(self, cids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``meta`` of each of ``cids``, the notes read in one pass (not one per id)."""
        return self._store.metas(cids)

    def set_meta(self, cid: str, values: dict[str, Any], reason: str) -> None:
        self._store.set_meta(cid, values, reason)

    def source_of(self, cid: str) -> str | None:
        """The conversation a review ``cid`` reviews, if it is one."""
        return self._store.source_of(cid)

    def sources(self) -> dict[str, str]:
        """Anchor hex id -> source id, for every compaction review."""
        return self._store.sources()


class Local:
    """What this machine keeps for itself and never syncs."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def config_file(self) -> Path:
        """The store's own layer of jp's configuration."""
        return self._store.config_file

    def value(self, name: str, version: str) -> Any:
        """The value kept under ``name`` for ``version`` (e.g. a ref's commit), else None."""
        return self._store.cached_value(name, version)

    def keep_value(self, name: str, version: str, value: Any) -> None:
        """Keep one JSON value per ``name``: the one for the newest ``version`` seen."""
        self._store.keep_value(name, version, value)

    def summaries(self, tips: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The summaries kept for ``tips``; a tip without one is absent."""
        return self._store.cached_summaries(tips)

    def keep_summaries(self, items: dict[str, dict[str, Any]]) -> None:
        self._store.keep_summaries(items)

    def maintain(self, force: bool = False, wait: bool = False) -> str:
        """git's housekeeping when it is due (``force``: now); what was done."""
        return self._store.maintain(force, wait)


class Ops:
    """The operation log: this process's operation, and the log it goes into."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def _recorder(self) -> Recorder:
        return self._store._recorder

    @property
    def command(self) -> str | None:
        """The command line of the operation being recorded, if one is."""
        return self._recorder().command

    @property
    def retention(self) -> Callable[[], float]:
        """Seconds the log keeps an operation (asked for when the log is trimmed)."""
        return self._store.oplog_retention

    @retention.setter
    def retention(self, value: Callable[[], float]) -> None:
        self._store.oplog_retention = value

    def begin(self, command: str) -> None:
        """Record every ref this process moves from now on as one operation, ``command``."""
        self._store.begin_operation(command)

    def end(self) -> Op | None:
        """Write the operation begun (if it moved anything); trims the log when due."""
        return self._store.end_operation()

    @contextmanager
    def operation(self, command: str) -> Iterator[Ops]:
        """``begin`` .. ``end`` around a block."""
        self.begin(command)
        try:
            yield self
        finally:
            self.end()

    def list(self, limit: int | None = None) -> builtins.list[Op]:
        """The operation log, newest first (at most ``limit``)."""
        return self._store.operations(limit)

    def moving(
        self,
        updates: Sequence[RefUpdate],
        partial: tuple[type[BaseException], ...] = (),
        verify: bool = False,
    ) -> AbstractContextManager[None]:
        """Around one ref move (or one transaction): recorded if it happens."""
        return self._recorder().moving(updates, partial, verify)

    def remote(self, change: RemoteChange) -> None:
        """A remote's configuration changed."""
        self._recorder().remote(change)

    def mark(self, *, undoes: str | None = None, restores: str | None = None) -> None:
        """Say what the operation is (an undo of one, a restore to one)."""
        self._recorder().mark(undoes=undoes, restores=restores)
