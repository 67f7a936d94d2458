"""Reading a review's state: its proposals, its source, open reviews of a source."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitstore import PROPOSE_COMPACTION, Event, Kind, Store
from porcelain.domain.compaction.overlays import lookup_tool_mode
from porcelain.domain.compaction.proposal import Proposal, validate_proposal
from porcelain.domain.stream import Stream

TOOL = PROPOSE_COMPACTION


def proposal_calls(events: Sequence[Event]) -> list[tuple[int, Event, Event | None]]:
    """Every propose_compaction call (position, request, its response or None)."""
    responses = {str(e.get("id")): e for e in events if e.get("type") == Kind.TOOL_CALL_RESPONSE}
    return [
        (pos, e, responses.get(str(e.get("id"))))
        for pos, e in enumerate(events)
        if e.get("type") == Kind.TOOL_CALL_REQUEST and e.get("name") == TOOL
    ]


def latest_call(events: Sequence[Event]) -> tuple[int, dict[str, Any]] | None:
    """Position and arguments of the most recent valid proposal.

    The arguments are the validated ones recorded with the result (where
    overlap growth widened the range), else the call's own.
    """
    for pos, request, response in reversed(proposal_calls(events)):
        if response is not None and not response.get("is_error"):
            recorded = (response.get("metadata") or {}).get("proposal")
            args = recorded if isinstance(recorded, dict) else request.get("arguments") or {}
            return pos, dict(args)
    return None


def latest_proposal(events: Sequence[Event]) -> Proposal | None:
    found = latest_call(events)
    if found is None:
        return None
    return proposal_from_args(found[1])


def proposal_from_args(args: dict[str, Any]) -> Proposal | None:
    """A recorded proposal read back (it was validated when it was made)."""
    lo, hi = args.get("from_turn"), args.get("to_turn")
    if not isinstance(lo, int) or not isinstance(hi, int):
        return None
    summary = args.get("summary") if isinstance(args.get("summary"), str) else None
    tools_raw = args.get("tool_calls")
    tools = lookup_tool_mode(tools_raw) if isinstance(tools_raw, str) else None
    if summary is not None:
        return Proposal(lo, hi, summary)
    return Proposal(lo, hi, None, args.get("reasoning") == "strip", tools)


def revalidate(proposal: Proposal, source: Sequence[Event] | Stream) -> Proposal:
    """The proposal checked again against the source as it stands now."""
    return validate_proposal(proposal.to_args(), source)


def open_reviews(store: Store, source_id: str) -> list[str]:
    """Live compaction conversations that name ``source_id`` (archived ones never block)."""
    sources = store.notes.sources()
    if source_id not in sources.values():
        return []
    return [
        loc.cid
        for loc in store.refs.list(archived=False)
        if sources.get(store.notes.anchor(loc.cid)) == source_id
    ]


def every_open_review(store: Store) -> list[tuple[str, str]]:
    """Every live compaction review and its source, as ``(review, source)`` pairs."""
    sources = store.notes.sources()
    if not sources:
        return []
    found = []
    for loc in store.refs.list(archived=False):
        source = sources.get(store.notes.anchor(loc.cid))
        if source is not None:
            found.append((loc.cid, source))
    return found
