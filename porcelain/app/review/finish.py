"""`compact --continue` and `--abort`: end a review, like `git rebase`.

`--continue` applies the latest valid proposal to the source in one ref
transaction: the source moves (compare-and-swap on the tip it validated
against) to a new `compaction` commit that names the proposal it came from,
the review moves under refs/archive/, and JP_HEAD points back at the source.
A rerun after an apply whose archive step did not happen finds the proposal
already standing as the source's latest compaction and only finishes the
archive and the switch back.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from gitstore import Located, Store, activity, errors
from porcelain import clock
from porcelain.domain.compaction.overlays import overlay_from_event
from porcelain.domain.compaction.proposal import Proposal, ProposalError
from porcelain.domain.review.state import latest_call, proposal_from_args, revalidate
from porcelain.domain.stream import Stream
from porcelain.errors import UserError

ATTEMPTS = 5


@dataclass(frozen=True)
class Finished:
    review_id: str
    source_id: str
    applied: bool
    already: bool = False
    proposal: Proposal | None = None


def active_review(store: Store) -> tuple[str, str]:
    """(review id, source id) of the active conversation, which must be a review."""
    cid = store.refs.active()
    if cid is None or not store.refs.exists(cid):
        raise UserError(
            "no active conversation, so no review to finish",
            "switch to the review with `jp conversation use ID`",
        )
    source = store.notes.source_of(cid)
    if source is None:
        raise UserError(
            f"the active conversation {cid} is not a compaction review",
            "start one with `jp conversation compact --interactive`, or switch to an open "
            "review with `jp conversation use ID` (`jp conversation ls` marks reviews)",
        )
    return cid, source


def abort(store: Store) -> Finished:
    rid, source = active_review(store)
    with store.refs.hold(rid, wait=10.0):
        _archive_and_switch(store, rid, source, None)
    return Finished(rid, source, applied=False)


def apply(store: Store, ask: Callable[[Proposal, int], bool]) -> Finished:
    """Apply the latest proposal; ``ask(proposal, turns)`` confirms (False: change nothing)."""
    rid, source_id = active_review(store)
    source = store.refs.locate(source_id)
    if source is None:
        raise UserError(
            f"the source conversation {source_id} no longer exists",
            "close the review with `jp conversation compact --abort`",
        )
    with ExitStack() as stack:
        stack.enter_context(store.refs.hold(source_id, wait=10.0))
        stack.enter_context(store.refs.hold(rid, wait=10.0))
        review = store.log.load(rid)
        found = latest_call(review.events)
        proposal = None if found is None else proposal_from_args(found[1])
        if proposal is None or found is None:
            raise UserError(
                f"the review {rid} holds no valid proposal yet",
                "discuss it with `jp q ...`; the model records each proposal "
                "with propose_compaction",
            )
        # each walk over the source made once, for the three uses below
        src = Stream(store.log.load(source_id).events)
        if _already_applied(src, proposal):
            _archive_and_switch(store, rid, source_id, None)
            return Finished(rid, source_id, applied=True, already=True, proposal=proposal)
        try:
            proposal = revalidate(proposal, src)
        except ProposalError as exc:
            raise UserError(
                f"the proposal no longer fits the source: {exc}",
                "ask the model for a new proposal with `jp q ...`",
            ) from None
        if not ask(proposal, src.count):  # a deliberate no is no failure
            return Finished(rid, source_id, applied=False, proposal=proposal)
        origin = {"review": rid, "commit": review.commits[found[0]]}
        for _ in range(ATTEMPTS):
            try:
                _apply_once(store, rid, store.refs.require(source_id), proposal, origin)
                return Finished(rid, source_id, applied=True, proposal=proposal)
            except errors.ConcurrentUpdate:
                proposal = revalidate(proposal, store.log.load(source_id).events)
        raise UserError(
            f"the source {source_id} kept changing; nothing was applied",
            "run `jp conversation compact --continue` again",
        )
    raise AssertionError("unreachable")


def _already_applied(source: Stream, proposal: Proposal) -> bool:
    """The proposal is the source's latest standing compaction."""
    standing = source.overlays
    if not standing:
        return False
    latest = standing[-1]
    wanted = overlay_from_event(proposal.to_compaction_event(clock.now_text()))
    return (
        latest.from_turn,
        latest.to_turn,
        latest.summary,
        latest.reasoning,
        latest.tool_calls,
    ) == (wanted.from_turn, wanted.to_turn, wanted.summary, wanted.reasoning, wanted.tool_calls)


def _apply_once(
    store: Store, rid: str, source: Located, proposal: Proposal, origin: dict[str, Any]
) -> None:
    event = proposal.to_compaction_event(clock.now_text())
    event["metadata"] = {"proposal": origin}
    commit = store.log.write_commits([event], source.tip)[-1]
    review = store.refs.require(rid)
    reason = f"jp conversation compact --continue: apply {rid} to {source.cid}"
    with store.refs.transaction(reason) as tx:
        tx.advance(source, commit).archive(review).activate(source.cid)
    _after_archive(store, rid, source.cid)


def _archive_and_switch(store: Store, rid: str, source_id: str, _: Any) -> None:
    review = store.refs.require(rid)
    with store.refs.transaction(f"jp conversation compact: close review {rid}") as tx:
        tx.archive(review).activate(source_id if store.refs.exists(source_id) else None)
    _after_archive(store, rid, source_id)


def _after_archive(store: Store, rid: str, source_id: str) -> None:
    store.notes.set_meta(rid, {"archived_at": clock.now_text()}, f"jp: archive review {rid}")
    if store.refs.exists(source_id):
        activity.record_activation(store, source_id)
