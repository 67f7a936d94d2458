"""The conversations one command creates, written as one set of packs and one ref update.

An import of 250 conversations written one at a time made 250 packs, each
indexed by its own ``git index-pack`` (which checks the new pack against every
earlier one, so each import cost more than the last) and 250 ref creations.
Inside ``Log.batch()`` a creation of a packed conversation instead adds its
commits and its anchor to the packs this command writes (``packwrite.Writer``,
a new pack every ``CHUNK`` events, so memory stays bounded) and reserves its
id; ``flush`` (at the end of the block, or when a caller must read what was
created) publishes the packs, each behind a ``.keep``, then creates every ref
in one step: 100 or more straight into ``packed-refs`` (``refs.bulk``, no
loose file or reflog per ref, as a pull of many writes them), fewer in one
transaction of ``git update-ref --stdin``; one by one when that fails (a name
taken meanwhile, a lock held).  It is recorded as one move in the operation
log (``jp undo`` deletes them), and only then are the ``.keep`` files dropped.

A kill before the refs move leaves packs nothing names (git's prune takes them
after its grace period) or a temporary folder the next ``Store`` sweeps; git's
transaction creates all the refs or none, and each names a complete chain.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore import faults, ids, refs
from gitstore.clock import seconds
from gitstore.errors import ConversationExists, EnvironmentFault, RefBusy, environment_fault
from gitstore.events import validate
from gitstore.fs import gcwatch
from gitstore.refs import bulk
from gitstore.refs import create as refcreate
from gitstore.refs.transaction import WAIT_SECONDS, RefUpdate
from gitstore.store import packwrite
from gitstore.store.types import EventSource

if TYPE_CHECKING:
    from gitstore.store.ground import Ground
    from gitstore.store.parts.ops import Ops


PACKED_AT = 100  # refs created at once from which they go straight into packed-refs
ID_ATTEMPTS = 20  # fresh ids tried for a creation whose id another writer took
Alone = Callable[[str, EventSource, "str | None", str, "dict[str, str] | None", bool], str]


@dataclass(frozen=True)
class _Pending:
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
        self, ground: Ground, ops: Ops, alone: Alone, taken: Callable[[str], bool]
    ) -> None:
        self._g = ground
        self._ops = ops
        self._alone = alone  # a creation outside the batch (an id another writer took)
        self._taken = taken
        self.pending: dict[str, _Pending] = {}
        self.renamed: dict[str, str] = {}  # id asked for -> the id it was created under
        self._writer: packwrite.Writer | None = None

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
        g = self._g
        if parent is not None:
            g.commit(parent)  # a ref plain git pointed at a blob: CorruptEvent, not a crash
        if self._writer is None:
            self._writer = packwrite.Writer(g.gitdir).__enter__()
        fitted = (g.fit(validate(e, f"event {n}")) for n, e in enumerate(events))
        names = dict(tool_names or {})
        tip = self._writer.chain(
            fitted, parent, names, g.signature_line, g.identity.name, on_rows=g.cache.add
        )
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
        try:
            written = self._writer.publish()
            faults.point("create:objects-written")  # packs there, no ref yet
            wanted = {refs.live(cid): p.tip for cid, p in pending.items()}
            made = self._create(wanted, {refs.live(c): p.reason for c, p in pending.items()})
            gcwatch.after_gc(
                self._g.gitdir
            )  # a prune that walked before the move deletes until then
            _check_present(self._g.gitdir, written)
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

    def _create(self, wanted: dict[str, str], reasons: dict[str, str]) -> set[str]:
        """The refs of ``wanted`` created: many in one rewrite of ``packed-refs``,
        a few in one transaction of ``git update-ref --stdin`` (each ref created
        only where none is, each with its reflog line; all or none), else, when
        that fails (a name taken meanwhile, a lock held), one by one, each a
        compare-and-swap against absence.  Recorded as one operation step."""
        made: set[str] = set()
        updates = [RefUpdate(n, None, tip) for n, tip in wanted.items()]
        with self._ops.moving(updates, verify=lambda: made):
            packed = _packed(self._g.gitdir, wanted) if len(wanted) >= PACKED_AT else None
            if packed is not None:
                made.update(packed)
            elif _update_refs(self._g.gitdir, wanted, "jp conversation import"):
                made.update(wanted)
            for name, tip in wanted.items():
                if name not in made and refcreate.create(self._g.place, name, tip, reasons[name]):
                    made.add(name)
        return made

    def close(self) -> None:
        """Drop what was not flushed (its packs were never published)."""
        writer, self._writer = self._writer, None
        self.pending = {}
        if writer is not None:
            writer.__exit__(None, None, None)


def _packed(gitdir: Path, wanted: dict[str, str]) -> list[str] | None:
    """The refs of ``wanted`` created straight into ``packed-refs`` in one rewrite
    (``refs.bulk``, as a pull of many does; a name that exists is left out): a
    loose file, its lock and a reflog file per ref cost about a millisecond each
    of file creation, most of an import of small conversations.  None, nothing
    written, where hard links fail or git holds the lock past the wait: the
    caller then creates them through git."""
    try:
        return bulk.create(gitdir, wanted, WAIT_SECONDS)
    except (bulk.NoHardLinks, RefBusy):
        return None
    except OSError as exc:  # a full disk, a read-only store: named as such
        raise environment_fault(exc, str(gitdir)) or exc from None


def _update_refs(gitdir: Path, wanted: dict[str, str], message: str) -> bool:
    """Create every ref of ``wanted`` in one ``git update-ref --stdin`` transaction;
    whether it committed (git leaves every ref as it was when one cannot be created)."""
    lines = "".join(f"create {name}\0{tip}\0" for name, tip in wanted.items())
    args = ["update-ref", "--create-reflog", "-z", "--stdin", "-m", message]
    return _git(gitdir, args, lines.encode())


def _git(gitdir: Path, args: list[str], data: bytes) -> bool:
    """Run ``git args`` on ``data``; whether it succeeded."""
    try:
        done = subprocess.run(
            ["git", "--git-dir", str(gitdir), *args], input=data, capture_output=True
        )
    except OSError as exc:
        raise environment_fault(exc, str(gitdir)) or exc from None
    return done.returncode == 0


def _check_present(gitdir: Path, written: tuple[str, ...]) -> None:
    """The published packs are all there (git's repack leaves a kept pack alone)."""
    if not packwrite.Packed(None, written).present(gitdir):
        raise EnvironmentFault("pruned", str(gitdir / "objects"), "objects were not stored")


__all__ = ["Batch"]
