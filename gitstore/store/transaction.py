"""Several ref moves as one: ``store.refs.transaction(reason)`` and its named steps.

A caller says what happens to conversations (advance one, archive one, make
one active...) and the store spells the refs: each step becomes the
compare-and-swap updates of ``gitstore.git.refs.transaction``, all committed at
once through its intent journal (so a crash midway is finished by the next
command) and recorded as one move in the operation log, as ``store.refs.move``
does.  Nothing moves until ``commit`` (or the end of a ``with`` block that
raised nothing); a ref that moved since it was read fails the whole
transaction with ``ConcurrentUpdate``, and none of it happens.

    with store.refs.transaction("jp conversation compact --continue") as tx:
        tx.advance(source, commit).archive(review).activate(source.cid)
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self

from gitstore.git import refs
from gitstore.git.refs.transaction import ANY, SYMBOLIC, RefUpdate

if TYPE_CHECKING:
    from gitstore.store.types import Located


class Mover(Protocol):
    """What a transaction commits through (``store.refs.move``)."""

    def move(self, updates: list[RefUpdate], reason: str) -> None: ...


class Transaction:
    """Named steps on conversations, committed together (see the module's text)."""

    def __init__(self, mover: Mover, reason: str) -> None:
        self._mover = mover
        self.reason = reason
        self._updates: list[RefUpdate] = []
        self._done = False

    # -- the steps ----------------------------------------------------------------

    def advance(self, where: Located, new: str) -> Self:
        """Move the conversation's tip (live or archived, as found) from ``where.tip`` to ``new``."""
        return self._add(RefUpdate(where.ref, where.tip, new))

    def create(self, cid: str, tip: str) -> Self:
        """A new live conversation at ``tip`` (its id must be free)."""
        return self._add(RefUpdate(refs.live(cid), None, tip))

    def archive(self, where: Located) -> Self:
        """Move a live conversation under the archive (nothing if it is archived)."""
        if where.archived:
            return self
        self._add(RefUpdate(refs.live(where.cid), where.tip, None))
        return self._add(RefUpdate(refs.archived(where.cid), None, where.tip))

    def unarchive(self, where: Located) -> Self:
        """Bring an archived conversation back (nothing if it is live)."""
        if not where.archived:
            return self
        self._add(RefUpdate(refs.archived(where.cid), where.tip, None))
        return self._add(RefUpdate(refs.live(where.cid), None, where.tip))

    def delete(self, where: Located) -> Self:
        """Remove the conversation's ref (its commits stay until git prunes them)."""
        return self._add(RefUpdate(where.ref, where.tip, None))

    def activate(self, cid: str | None) -> Self:
        """Make ``cid`` the active conversation, whatever was (None: none is active)."""
        new = None if cid is None else SYMBOLIC + refs.live(cid)
        return self._add(RefUpdate(refs.ACTIVE, ANY, new))

    # -- committing ---------------------------------------------------------------

    @property
    def empty(self) -> bool:
        return not self._updates

    def commit(self) -> None:
        """Move every ref of the steps at once, or none (``ConcurrentUpdate``, ``RefBusy``)."""
        if self._done:
            raise RuntimeError("this transaction was committed already")
        self._done = True
        if self._updates:
            self._mover.move(list(self._updates), self.reason)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if kind is None and not self._done:
            self.commit()

    def _add(self, update: RefUpdate) -> Self:
        if self._done:
            raise RuntimeError("this transaction was committed already")
        if any(u.name == update.name for u in self._updates):
            raise ValueError(f"{update.name} moves twice in one transaction")
        self._updates.append(update)
        return self
