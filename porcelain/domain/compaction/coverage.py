"""What a proposal drops: its coverage report, computed without a model.

The facts of the proposal's range (``facts.py``, from the source's raw
events) that the text the model would read in its place no longer holds:
the summary for a summary proposal, the stripped turns for a mechanical one.
Each gap names the turn it came from.  The report also gives the
model-visible size of the whole conversation before and after (tokens,
estimated).  Nothing is refused for a gap: the report is there to be read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitstore import Event, Kind, turn_indices
from porcelain.domain.compaction.facts import KINDS, Fact, facts_of, range_turns
from porcelain.domain.compaction.overlays import Overlay, overlay_from_event, standing_overlays
from porcelain.domain.compaction.projection import project
from porcelain.domain.compaction.proposal import Proposal
from porcelain.domain.tokens import estimate_tokens, event_text

PROSE_KINDS = frozenset({"request", "decision", "question"})
_WORD = re.compile(r"[\w./:-]{4,}")
_SHOWN = 12


@dataclass(frozen=True)
class Coverage:
    missing: tuple[Fact, ...]
    before: int  # model-visible tokens of the conversation now (estimated)
    after: int  # ... with the proposal applied

    def to_json(self) -> dict[str, Any]:
        return {
            "missing": [{"kind": f.kind, "text": f.text, "turn": f.turn} for f in self.missing],
            "tokens": {"before": self.before, "after": self.after},
        }

    @staticmethod
    def from_json(value: dict[str, Any]) -> Coverage:
        missing = tuple(
            Fact(str(m["kind"]), str(m["text"]), int(m["turn"])) for m in value.get("missing", [])
        )
        tokens = value.get("tokens") or {}
        return Coverage(missing, int(tokens.get("before", 0)), int(tokens.get("after", 0)))

    def lines(self, limit: int = _SHOWN) -> list[str]:
        """The report as the user and the model read it."""
        size = f"Model-visible size: about {self.before} tokens before, {self.after} after."
        if not self.missing:
            return ["Coverage: the text keeps every path, command, number and request found.", size]
        gaps = len(self.missing)
        out = [f"Coverage: {gaps} fact{'' if gaps == 1 else 's'} of the range not in the text:"]
        for fact in self.missing[:limit]:
            out.append(f"- turn {fact.turn}, {fact.kind}: {fact.text}")
        if gaps > limit:
            out.append(f"- ... and {gaps - limit} more (`jp conversation show -F json`)")
        out.append(size)
        return out


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def kept(fact: Fact, text: str) -> bool:
    """Whether ``text`` (already normalized) holds the fact.

    Exact facts must appear verbatim (whitespace and case aside); a request,
    decision or question also counts as kept when most of its words do.
    """
    wanted = _norm(fact.text)
    if wanted in text:
        return True
    if fact.kind not in PROSE_KINDS:
        return False
    words = {w.casefold() for w in _WORD.findall(fact.text)}
    if not words:
        return False
    present = sum(1 for w in words if w in text)
    return present >= 0.8 * len(words)


def _replacement_text(
    events: Sequence[Event], indices: Sequence[int], proposal: Proposal, overlays: list[Overlay]
) -> str:
    if proposal.summary is not None:
        return proposal.summary
    view = project(events, indices=indices, overlays=overlays)
    picked = range_turns(view.events, proposal.from_turn - 1, proposal.to_turn - 1)
    return "\n".join(_visible_text(e) for _, e in picked)


def _visible_text(event: Event) -> str:
    return event_text(event)


def _tokens(events: Sequence[Event], indices: Sequence[int], overlays: list[Overlay]) -> int:
    from porcelain.domain.view import PROVIDER_VISIBLE

    view = project(events, indices=indices, overlays=overlays)
    return estimate_tokens(e for e in view.events if e.get("type") in PROVIDER_VISIBLE)


def coverage(source_events: Sequence[Event], proposal: Proposal) -> Coverage:
    """The report for ``proposal`` (1-based turns) over the source's raw events."""
    indices = turn_indices(source_events)
    standing = standing_overlays(source_events)
    overlay = overlay_from_event(proposal.to_compaction_event(""), len(source_events))
    applied = [*standing, overlay]
    pairs = _still_visible(
        range_turns(source_events, proposal.from_turn - 1, proposal.to_turn - 1, indices=indices),
        standing,
    )
    text = _norm(_replacement_text(source_events, indices, proposal, applied))
    missing = [f for f in facts_of(pairs) if not kept(f, text)]
    missing.sort(key=lambda f: (KINDS.index(f.kind), f.turn))
    return Coverage(
        tuple(missing),
        _tokens(source_events, indices, standing),
        _tokens(source_events, indices, applied),
    )


def _still_visible(
    pairs: list[tuple[int, Event]], standing: list[Overlay]
) -> list[tuple[int, Event]]:
    """The pairs the model still reads: what a standing compaction already took away
    (a summarized turn, an omitted or stripped tool call) is not this proposal's to drop,
    and listing it would put hidden text back in front of the model."""
    summarized: set[int] = set()
    tools_gone: set[int] = set()
    for o in standing:
        turns = range(o.from_turn + 1, o.to_turn + 2)  # 1-based, as the pairs
        (summarized if o.has_summary else tools_gone if o.tool_calls else set()).update(turns)
    tool_kinds = (Kind.TOOL_CALL_REQUEST, Kind.TOOL_CALL_RESPONSE)
    return [
        (turn, e)
        for turn, e in pairs
        if turn not in summarized and not (turn in tools_gone and e.get("type") in tool_kinds)
    ]


def coverage_json(source_events: Sequence[Event], proposal: Proposal) -> dict[str, Any]:
    return coverage(source_events, proposal).to_json()
