"""The conversations one command creates, written as one set of packs and one ref update.

An import of 250 conversations written one at a time made 250 packs, each
indexed by its own ``git index-pack`` (which checked the new pack against every
earlier one, so each import cost more than the last; packs are now indexed by
jp as they are written, ``git.pack.PackFile``) and 250 ref creations.
Inside ``Log.batch()`` a creation of a packed conversation instead adds its
commits and its anchor to the packs this command writes (``packwrite.Writer``,
a new pack every ``CHUNK`` events, so memory stays bounded) and reserves its
id; ``flush`` (at the end of the block, or when a caller must read what was
created) publishes the packs, each behind a ``.keep``, then creates every ref
in one transaction of ``git update-ref --stdin`` (one by one when that fails:
a name taken meanwhile, a lock held), recorded as one move in the operation
log (``jp undo`` deletes them), and only then drops the ``.keep`` files.

A kill before the refs move leaves packs nothing names (git's prune takes them
after its grace period) or a temporary folder the next ``Store`` sweeps; git's
transaction creates all the refs or none, and each names a complete chain.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitstore import faults, ids, intake
from gitstore.clock import seconds
from gitstore.errors import ConversationExists
from gitstore.git import objects, pruned, refs
from gitstore.git.refs.transaction import RefUpdate
from gitstore.store import packwrite
from gitstore.store.types import EventSource

if TYPE_CHECKING:
    from gitstore.store.ground import Ground
    from gitstore.store.parts.ops import Ops


ID_ATTEMPTS = 20  # fresh ids tried for a creation whose id another writer took
Alone = Callable[[str, EventSource, "str | None", str, "dict[str, str] | None", bool], str]


class _Pending(NamedTuple):
    """A creation whose ref is not yet written."""

    tip: str
    reason: str
    parent: str | None
    tool_names: dict[str, str] | None
    remake: Callable[[str], EventSource] | None


class Batch:
    """Creations gathered until ``flush``: their ids reserved (``pending``), their
    objects in this command's packs, their refs not yet written."""

    def __init__(
        self,
        ground: Ground,
        ops: Ops,
        alone: Alone,
        taken: Callable[[str], bool],
        moved: Callable[[], None] = lambda: None,
    ) -> None:
        self._g = ground
        self._ops = ops
        self._alone = alone  # a creation outside the batch (an id another writer took)
        self._taken = taken
        self._moved = moved  # tells the refs' look-ups that this batch created refs
        self.pending: dict[str, _Pending] = {}
        self.renamed: dict[str, str] = {}  # id asked for -> the id it was created under
        self._writer: packwrite.Writer | None = None
        # the cache's rows of every chain (and a session's positions) in one
        # transaction at the end, not one or two each
        ground.cache.hold()

    def pending_ids(self, cid: str) -> bool:
        """Whether ``cid`` is taken by a creation not yet flushed."""
        return cid in self.pending

    def pending_tip(self, cid: str) -> str | None:
        """The tip ``cid`` will have once flushed (None: not created here)."""
        step = self.pending.get(cid)
        return step.tip if step is not None else None

    def add(
        self,
        cid: str,
        events: EventSource,
        parent: str | None,
        reason: str,
        tool_names: dict[str, str] | None,
        remake: Callable[[str], EventSource] | None = None,
    ) -> str:
        """Write the chain of ``cid`` (on ``parent``) into the packs; its tip."""
        self._g.cache.hold()  # again after a flush
        g = self._g
        if parent is not None:
            g.commit(parent)  # a ref plain git pointed at a blob: CorruptEvent, not a crash
        if self._writer is None:
            self._writer = packwrite.Writer(g.gitdir).__enter__()
        fitted = intake.checked(events, g.limits)
        names = dict(tool_names or {})
        tip = self._writer.chain(fitted, parent, names, g.who, g.identity.name, on_rows=g.cache.add)
        if tip is None:
            raise ValueError("a conversation needs at least one event")
        self._writer.blob(ids.anchor_bytes(cid))
        self.pending[cid] = _Pending(tip, reason, parent, tool_names, remake)
        return tip

    def flush(self) -> list[str]:
        """Publish the packs, then create every pending ref in one update; the ids
        created.  ``ConversationExists`` names one another writer created first."""
        if not self.pending:
            self.close()
            return []
        assert self._writer is not None
        pending, self.pending = self.pending, {}
        self._moved()  # the ids looked up absent so far are about to be created
        try:
            written = self._writer.publish()
            faults.point("create:objects-written")  # packs there, no ref yet
            wanted = {refs.live(cid): p.tip for cid, p in pending.items()}
            made = self._create(wanted, "jp conversation import")
            check = partial(_check_present, self._g.gitdir, written)
            pruned.after_move(self._g.gitdir, check)  # a prune that walked before the move
        finally:
            packwrite.release()  # the refs name the packs now (or never will)
            self.close()
        for cid, step in pending.items():
            if refs.live(cid) not in made:
                self.renamed[cid] = self._again(cid, step)
        return [self.renamed.get(cid, cid) for cid in pending]

    def _again(self, cid: str, step: _Pending) -> str:
        """Create the conversation another writer took ``cid`` from under a fresh id."""
        if step.remake is None:
            raise ConversationExists(cid)
        for _ in range(ID_ATTEMPTS):
            moment = datetime.fromtimestamp(seconds(self._g.clock), UTC)
            new = ids.new_id(moment, self._taken)
            reason = step.reason.replace(cid, new)
            try:
                self._alone(new, step.remake(new), step.parent, reason, step.tool_names, True)
                return new
            except ConversationExists:
                continue
        raise ConversationExists(cid)

    def _create(self, wanted: dict[str, str], reason: str) -> set[str]:
        """The refs of ``wanted`` created where their names are free (``update_refs``:
        one ``git update-ref --stdin`` for an import's hundreds, all or none, else
        one by one), recorded as one operation step."""
        updates = [RefUpdate(n, None, tip) for n, tip in wanted.items()]
        return intake.move(self._g.place, updates, reason, self._ops.moving, atomic=False)

    def close(self) -> None:
        """Drop what was not flushed (its packs were never published)."""
        writer, self._writer = self._writer, None
        self.pending = {}
        self._g.cache.release()  # keyed by commit: rows of commits never named do no harm
        if writer is not None:
            writer.__exit__(None, None, None)


def _check_present(gitdir: Path, written: tuple[str, ...]) -> None:
    """The published packs are all there (git's repack leaves a kept pack alone)."""
    if not packwrite.Packed(None, written).present(gitdir):
        raise pruned.pruned(objects.folder(gitdir))


__all__ = ["Batch"]
