"""Planning one compaction run: which overlays the rules produce, before any summary.

Every rule resolves its range against the stream as it was when the run
started, so ``last-compaction`` means the same for all of them.  A summary
rule's range then grows over the summaries it touches: the standing ones and
those planned earlier in the same run.  The caller generates the summaries and
turns each planned overlay into an event with ``planned_to_event``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gitstore import Event
from porcelain.domain.compaction.overlap import SummaryRange, grow_summary_range
from porcelain.domain.compaction.overlays import ToolCalls, compaction_event, mechanical_label
from porcelain.domain.compaction.ranges import (
    RangeOverrides,
    check_overrides,
    resolve_bounds,
)
from porcelain.domain.compaction.rules import Rule, SummarySpec
from porcelain.domain.stream import Stream


@dataclass(frozen=True)
class PlannedOverlay:
    from_turn: int  # 0-based, inclusive
    to_turn: int
    reasoning: bool
    tool_calls: ToolCalls | None
    summary_spec: SummarySpec | None  # set: a summary must be generated for the range
    rule_index: int  # which of the run's rules produced it

    @property
    def has_summary(self) -> bool:
        return self.summary_spec is not None

    @property
    def label(self) -> str | None:
        """``summary`` (it wins at projection) or the mechanical label."""
        if self.has_summary:
            return "summary"
        return mechanical_label(self.reasoning, self.tool_calls)


def plan_compaction(
    source: Sequence[Event] | Stream,
    rules: Sequence[Rule],
    overrides: RangeOverrides,
    now: datetime,
) -> list[PlannedOverlay]:
    """The overlays ``rules`` make of ``source``, in rule order; empty: nothing to compact."""
    stream = Stream.of(source)
    check_overrides(overrides, stream.count)
    summaries: list[SummaryRange] = list(stream.overlays)
    planned: list[PlannedOverlay] = []
    for index, rule in enumerate(rules):
        if not rule.has_policy:
            continue
        found = resolve_bounds(stream, rule.keep_first, rule.keep_last, overrides, now)
        if found is None:
            continue
        lo, hi = found
        if rule.summary is not None:
            lo, hi = grow_summary_range(summaries, lo, hi)
        overlay = PlannedOverlay(lo, hi, rule.reasoning, rule.tool_calls, rule.summary, index)
        planned.append(overlay)
        summaries.append(overlay)
    return planned


def planned_to_event(planned: PlannedOverlay, summary_text: str | None, timestamp: str) -> Event:
    """The ``compaction`` event; a summary overlay needs its generated text."""
    if planned.has_summary != (summary_text is not None):
        raise ValueError("a summary overlay needs its text, and only a summary overlay has one")
    return compaction_event(
        timestamp,
        planned.from_turn,
        planned.to_turn,
        summary=summary_text,
        reasoning=planned.reasoning,
        tool_calls=planned.tool_calls,
    )
