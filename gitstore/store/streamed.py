"""A new chain of many events streamed into packs, never held whole.

``Log.create`` of ``PACK_AT`` events or more (an import) comes here: the
events are read from their source as the packs are written
(``packwrite.write_stream``), so memory holds one pack's worth of work, not
the chain; a source that raises part way (a file changed under the import)
publishes nothing.  What the write keeps is the tip and the names of its
packs, and that is enough to keep the chain beside git's prune as
``Log._keep_written`` keeps a short one: while every pack is where it was
published nothing is lost (git replaces packs whole, never edits one);
otherwise the chain is walked on disk, and written again from the source if
any of it is gone (the same events give the same commits).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore import intake
from gitstore.errors import EnvironmentFault
from gitstore.events import Event
from gitstore.fs import diskfault
from gitstore.fs.place import Place
from gitstore.git import objects, pruned
from gitstore.store import packwrite
from gitstore.store.repo import open_repo
from gitstore.store.types import EventSource

if TYPE_CHECKING:
    import pygit2

    from gitstore.store.ground import Ground
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")


class Streamed:
    """The packs of one streamed chain, written on creation; ``keep`` after each step
    at which git's prune may have taken them (before and after the ref moves)."""

    def __init__(
        self,
        store: Ground,
        events: EventSource,
        parent: str | None,
        tool_names: dict[str, str] | None,
    ) -> None:
        self.store = store
        self.events = events
        self.parent = parent
        self.tool_names = tool_names
        if parent is not None:
            store.commit(parent)  # a ref plain git pointed at a blob: CorruptEvent, not a crash
        self.packed = self._write()
        self.tip = self.packed.tip

    def _fitted(self) -> Iterator[tuple[Event, bytes]]:
        """Each event checked (a tool result over the size limit cut) as it is read,
        with its ``event.json`` bytes (made once, here)."""
        yield from intake.checked(self.events, self.store.limits)

    def _write(self) -> packwrite.Packed:
        store = self.store
        names = dict(self.tool_names or {})
        return packwrite.write_stream(
            store.gitdir, self._fitted(), self.parent, names, store.who,
            store.identity.name, store.cache.add,
        )  # fmt: skip

    def keep(self) -> None:
        """Write the chain again, once, if git's prune removed any of it; then name it."""
        gitdir = self.store.gitdir
        for attempt in range(pruned.ATTEMPTS):
            if self.packed.present(gitdir) or _on_disk(gitdir, self.tip, len(self.events)):
                return
            if attempt == pruned.ATTEMPTS - 1:
                break
            again = self._write()
            if again.tip != self.tip:
                break
            self.packed = again
        if self.tip is not None:
            diskfault.check_written(Place.of(open_repo(gitdir), gitdir), self.tip)
        if self.tip and diskfault.pruning(gitdir, self.tip):
            raise pruned.pruned(objects.folder(gitdir))
        raise EnvironmentFault("io", str(objects.folder(gitdir)), "objects were not stored")


def _on_disk(gitdir: Path, tip: str | None, count: int) -> bool:
    """Whether the ``count`` commits ending at ``tip``, their trees and blobs are all
    in the object database as it is on disk now (a repository opened afresh: one
    open before may still read a pack git has since deleted)."""
    if tip is None:
        return True
    repo = open_repo(gitdir)
    odb = repo.odb
    oid = tip
    for _ in range(count):
        try:
            commit = repo[oid].peel(pygit2.Commit)
            blob = commit.tree["event.json"].id
        except (KeyError, ValueError, pygit2.GitError):
            return False
        if blob not in odb:
            return False
        if not commit.parent_ids:
            break
        oid = str(commit.parent_ids[0])
    return True


__all__ = ["Streamed"]
