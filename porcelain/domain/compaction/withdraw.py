"""What `compact --reset` says: which compactions it withdraws, and how to get them back.

A reset appends one ``compaction_reset`` event (history is never rewritten),
so the words are "withdraw" and "append", and `jp undo` is named as the way
back.  Plain functions over overlays and the events they came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from gitstore import Event
from porcelain.domain.compaction.overlays import Overlay, overlay_label
from porcelain.domain.compaction.proposal import span


def origin(overlay: Overlay, events: Sequence[Event]) -> str:
    """Where a compaction came from: a review, or a plain `compact` (or an import)."""
    if 0 <= overlay.position < len(events):
        meta = events[overlay.position].get("metadata") or {}
        proposal = meta.get("proposal") if isinstance(meta, dict) else None
        if isinstance(proposal, dict) and isinstance(proposal.get("review"), str):
            return f"from review {proposal['review']}"
    return "not from a review"


def describe(overlay: Overlay, events: Sequence[Event]) -> str:
    """``turns 2-8 (reasoning + tools), not from a review``."""
    label = overlay_label(overlay) or "no policy"
    return (
        f"{span(overlay.from_turn + 1, overlay.to_turn + 1)} ({label}), {origin(overlay, events)}"
    )


def count(n: int) -> str:
    return "1 compaction" if n == 1 else f"{n} compactions"


def plan_lines(cid: str, chosen: Sequence[Overlay], events: Sequence[Event]) -> list[str]:
    """What the prompt shows before asking."""
    lines = [f"Withdraw {count(len(chosen))} of {cid}:"]
    lines += [f"  {n}. {describe(o, events)}" for n, o in enumerate(chosen, 1)]
    lines.append(
        "This appends one withdrawal event; no history is rewritten, and `jp undo` "
        "brings the compactions back."
    )
    return lines


def done_line(chosen: Sequence[Overlay], *, dry_run: bool) -> str:
    spans = ", ".join(span(o.from_turn + 1, o.to_turn + 1) for o in chosen)
    if dry_run:
        return f"Would withdraw {count(len(chosen))} ({spans}); nothing was written."
    return (
        f"Withdrew {count(len(chosen))} ({spans}): appended one withdrawal event. "
        "`jp undo` brings them back."
    )
