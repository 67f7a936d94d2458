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
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitstore import Event, Kind
from porcelain.domain.compaction.facts import KINDS, Fact, facts_of, range_turns
from porcelain.domain.compaction.overlays import Overlay, overlay_from_event
from porcelain.domain.compaction.projection import project, project_part
from porcelain.domain.compaction.proposal import Proposal
from porcelain.domain.stream import Stream
from porcelain.domain.tokens import event_text, visible_chars

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


def _replacement_text(applied: Stream, proposal: Proposal) -> str:
    """What the model reads in the range's place, ``applied``: the source with the proposal."""
    if proposal.summary is not None:
        return proposal.summary
    view = project(applied)
    picked = range_turns(view.events, proposal.from_turn - 1, proposal.to_turn - 1)
    return "\n".join(_visible_text(e) for _, e in picked)


def _visible_text(event: Event) -> str:
    return event_text(event)


def _covered(overlays: Sequence[Overlay], count: int) -> list[tuple[int, int]]:
    """The runs of turns some overlay covers (0-based, inclusive), merged, in order."""
    spans = sorted((o.from_turn, min(o.to_turn, count - 1)) for o in overlays)
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if lo > hi:
            continue
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def _visible_size(stream: Stream, raw: int) -> int:
    """``estimate_tokens`` of the projection's provider-visible events, from the raw
    stream's ``raw`` characters: only the turns an overlay covers are read and projected
    (the others are the model's as they are)."""
    chars = raw
    events, indices = stream.events, stream.indices
    for lo, hi in _covered(stream.overlays, stream.count):
        part = range(bisect_left(indices, lo), bisect_right(indices, hi))
        chars -= visible_chars([events[i] for i in part])
        chars += visible_chars(project_part(stream, part))
    return chars // 4


def coverage(source: Sequence[Event] | Stream, proposal: Proposal) -> Coverage:
    """The report for ``proposal`` (1-based turns) over the source's raw events.

    A stream of a view (``ChainView``) is read only where the range and the
    standing compactions are: its turns and compactions come from its facts.
    """
    stream = Stream.of(source)
    events, standing = stream.events, stream.overlays
    overlay = overlay_from_event(proposal.to_compaction_event(""), len(events))
    applied = stream.with_overlays([*standing, overlay])
    pairs = _still_visible(
        range_turns(stream, proposal.from_turn - 1, proposal.to_turn - 1), standing
    )
    text = _norm(_replacement_text(applied, proposal))
    missing = [f for f in facts_of(pairs) if not kept(f, text)]
    missing.sort(key=lambda f: (KINDS.index(f.kind), f.turn))
    raw = visible_chars(events)
    return Coverage(tuple(missing), _visible_size(stream, raw), _visible_size(applied, raw))


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


def coverage_json(source: Sequence[Event] | Stream, proposal: Proposal) -> dict[str, Any]:
    return coverage(source, proposal).to_json()
