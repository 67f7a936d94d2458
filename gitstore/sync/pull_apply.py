"""Pull's local ref moves: the steps the plan decided, applied by compare-and-swap.

Plain steps go in batches (one transaction each, one lock file per ref held
open), falling back to one step at a time when something moved meanwhile; a
fork moves the local continuation to a fresh id.  A conversation a query is
writing is left alone and reported ``busy``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from gitstore import ids
from gitstore.errors import ConcurrentUpdate, ConversationBusy
from gitstore.git import refs
from gitstore.git.refs.transaction import SYMBOLIC, RefUpdate
from gitstore.sync import meta as syncmeta
from gitstore.sync.outcome import Outcome, Tips
from gitstore.sync.plan import PullStep, Side

if TYPE_CHECKING:
    from gitstore.sync.pull import Syncer


def moves(cid: str, target: Side, now: Tips) -> list[RefUpdate]:
    """Local ref updates that leave ``cid`` in state ``target``."""
    want, other = (refs.archived(cid), refs.live(cid))
    want_now, other_now = now.archived, now.live
    if not target.archived:
        want, other, want_now, other_now = other, want, other_now, want_now
    updates = [] if want_now == target.tip else [RefUpdate(want, want_now, target.tip)]
    if other_now is not None:
        updates.append(RefUpdate(other, other_now, None))
    return updates


def step_moves(step: PullStep, now: Tips) -> list[RefUpdate]:
    return [] if step.target is None else moves(step.cid, step.target, now)


@contextmanager
def holding(syncer: Syncer, cids: list[str]) -> Iterator[set[str]]:
    """Hold each conversation that no query is writing; yields the busy ones."""
    busy: set[str] = set()
    with ExitStack() as stack:
        for cid in cids:
            try:
                stack.enter_context(syncer.here.refs.hold(cid))
            except ConversationBusy:
                busy.add(cid)
        yield busy


def _message(syncer: Syncer, step: PullStep) -> str:
    return f"jp pull {syncer.remote}: {step.action.value} {step.cid}"


def apply_batch(syncer: Syncer, batch: list[tuple[PullStep, Tips]]) -> list[Outcome]:
    held = [s.cid for s, now in batch if now.live or now.archived]
    with holding(syncer, held) as busy:
        ready = [(s, now) for s, now in batch if s.cid not in busy]
        updates = [u for s, now in ready for u in step_moves(s, now)]
        out = [Outcome(cid, "busy", detail="in use by another jp process") for cid in busy]
        try:
            syncer.here.refs.move(updates, f"jp pull {syncer.remote}")
            return out + [Outcome(s.cid, s.action.value) for s, _ in ready]
        except ConcurrentUpdate:
            pass
        for step, now in ready:  # one at a time, so one change does not block the rest
            try:
                syncer.here.refs.move(step_moves(step, now), _message(syncer, step))
                out.append(Outcome(step.cid, step.action.value))
            except ConcurrentUpdate:
                out.append(Outcome(step.cid, "changed", detail="changed during the pull"))
        return out


def apply_fork(syncer: Syncer, step: PullStep, now: Tips, taken: set[str]) -> Outcome:
    """The remote keeps the id; the local copy continues under a new id."""
    assert step.fork is not None and step.target is not None
    cid, here = step.cid, syncer.here
    new_id = ids.new_id(here.clock.now(), lambda c: c in taken or here.refs.exists(c))
    taken.add(new_id)
    syncmeta.copy_meta(here, syncer.signature, cid, new_id, step, syncer.remote)
    fork_ref = refs.archived(new_id) if step.fork.archived else refs.live(new_id)
    updates = [RefUpdate(fork_ref, None, step.fork.tip), *moves(cid, step.target, now)]
    active = syncmeta.active_target(syncer.repo)
    if active == refs.live(cid) and not step.fork.archived:
        updates.append(RefUpdate(refs.ACTIVE, SYMBOLIC + active, SYMBOLIC + fork_ref))
    with holding(syncer, [cid]) as busy:
        if busy:
            return Outcome(cid, "busy", detail="in use by another jp process")
        try:
            here.refs.move(updates, _message(syncer, step) + f" -> {new_id}")
        except ConcurrentUpdate:
            return Outcome(cid, "changed", detail="changed during the pull")
    return Outcome(cid, step.action.value, new_id=new_id)
