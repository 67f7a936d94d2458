"""``propose_compaction``: the review's tool, its arguments and their validation (D66).

Turns in the arguments are the 1-based source positions the model reads from
the ``[turn N]`` markers; the 0-based indices appear only in the compaction
event built when the review is applied.  Validation runs against the source
conversation as it stands and grows a summary range over the summaries it
touches at once, so the recorded range is final.  Errors name the numbers, so
the model can correct itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitstore import Event
from porcelain.domain.compaction.overlap import grow_summary_range
from porcelain.domain.compaction.overlays import (
    TOOL_MODE_HELP,
    TOOL_MODES,
    ToolCalls,
    compaction_event,
    lookup_tool_mode,
)
from porcelain.domain.stream import Stream
from porcelain.errors import UserError

ARGUMENTS = ("from_turn", "to_turn", "summary", "reasoning", "tool_calls")

PROPOSE_TOOL_DESCRIPTION = (
    "Record a compaction proposal for the source conversation under review. Each call "
    "replaces the previous proposal. Turn numbers are the 1-based N of the [turn N] "
    "markers on the source's messages. Set summary to replace the turns with that text; "
    "otherwise set reasoning and/or tool_calls to strip them mechanically. The result "
    "is the proposal as recorded, or an error to correct."
)

PROPOSE_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "from_turn": {
            "type": "integer",
            "minimum": 1,
            "description": "First turn to compact: the 1-based N of a [turn N] marker.",
        },
        "to_turn": {
            "type": "integer",
            "minimum": 1,
            "description": "Last turn to compact (inclusive): the 1-based N of a [turn N] marker.",
        },
        "summary": {
            "type": "string",
            "description": "Text that replaces the turns. When set, leave out reasoning and "
            "tool_calls: a summary replaces the turns whole.",
        },
        "reasoning": {
            "type": "string",
            "enum": ["strip"],
            "description": "strip: drop the model's reasoning in these turns.",
        },
        "tool_calls": {
            "type": "string",
            "enum": list(TOOL_MODES),
            "description": "strip: empty tool arguments and shorten results; strip-requests or "
            "strip-responses: only one side; omit: drop the tool calls entirely.",
        },
    },
    "required": ["from_turn", "to_turn"],
    "additionalProperties": False,
}

_TOOL_PHRASES = {
    ToolCalls.STRIP: "strip tools",
    ToolCalls.STRIP_REQUESTS: "strip tool requests",
    ToolCalls.STRIP_RESPONSES: "strip tool responses",
    ToolCalls.OMIT: "omit tools",
}


class ProposalError(UserError):
    """An invalid ``propose_compaction`` call; the message goes back to the model."""


def span(a: int, b: int) -> str:
    """A 1-based range as the user reads it everywhere: ``turn 3``, ``turns 2-6``."""
    return f"turn {a}" if a == b else f"turns {a}-{b}"


@dataclass(frozen=True)
class Proposal:
    """A validated proposal; turns are 1-based and inclusive."""

    from_turn: int
    to_turn: int
    summary: str | None = None
    reasoning: bool = False
    tool_calls: ToolCalls | None = None
    # The range asked for, when overlap growth changed it (1-based).
    grown_from: tuple[int, int] | None = field(default=None, compare=False)

    def to_args(self) -> dict[str, Any]:
        """The tool arguments recording this proposal (only the fields that are set)."""
        args: dict[str, Any] = {"from_turn": self.from_turn, "to_turn": self.to_turn}
        if self.summary is not None:
            args["summary"] = self.summary
        if self.reasoning:
            args["reasoning"] = "strip"
        if self.tool_calls is not None:
            args["tool_calls"] = self.tool_calls.value
        return args

    def to_json(self) -> dict[str, Any]:
        return {
            "from_turn": self.from_turn,
            "to_turn": self.to_turn,
            "summary": self.summary,
            "reasoning": "strip" if self.reasoning else None,
            "tool_calls": None if self.tool_calls is None else self.tool_calls.value,
        }

    def labels(self) -> list[str]:
        if self.summary is not None:
            return ["summarize"]
        out = ["strip reasoning"] if self.reasoning else []
        if self.tool_calls is not None:
            out.append(_TOOL_PHRASES[self.tool_calls])
        return out

    def render(self, turn_count: int) -> str:
        """``Proposed: compact turns 2-15 of 20 (summarize)``, then the summary."""
        head = (
            f"Proposed: compact {span(self.from_turn, self.to_turn)} of {turn_count} "
            f"({', '.join(self.labels())})"
        )
        lines = [head]
        if self.grown_from is not None:
            asked = span(*self.grown_from)
            lines.append(
                f"The range grew from {asked}: a summary takes in every summary it overlaps."
            )
        if self.summary is not None:
            lines += ["", self.summary]
        return "\n".join(lines)

    def to_compaction_event(self, timestamp: str) -> Event:
        """The stored ``compaction`` event (0-based turns)."""
        return compaction_event(
            timestamp,
            self.from_turn - 1,
            self.to_turn - 1,
            summary=self.summary,
            reasoning=self.reasoning,
            tool_calls=self.tool_calls,
        )


def _turn(args: Mapping[str, Any], name: str, problems: list[str]) -> int | None:
    value = args.get(name)
    if value is None:
        problems.append(f"{name} is required (a 1-based turn number from the [turn N] markers)")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(f"{name} must be a whole turn number, got {value!r}")
        return None
    if value < 1:
        problems.append(f"{name} must be at least 1, got {value}")
        return None
    return value


def _policies(args: Mapping[str, Any], problems: list[str]) -> tuple[str | None, bool, bool]:
    """The summary (None when absent or invalid), whether reasoning and tool_calls are set."""
    summary = args.get("summary")
    if summary is not None and not isinstance(summary, str):
        problems.append("summary must be a string")
        summary = None
    elif isinstance(summary, str) and not summary.strip():
        problems.append("summary is empty: write the summary text, or leave summary out")
        summary = None
    reasoning = args.get("reasoning")
    if reasoning is not None and reasoning != "strip":
        problems.append(
            f"unknown reasoning policy {reasoning!r} (the only policy is strip; "
            "leave reasoning out to keep it)"
        )
    tools_raw = args.get("tool_calls")
    tools = lookup_tool_mode(tools_raw) if isinstance(tools_raw, str) else None
    if tools_raw is not None and tools is None:
        problems.append(f"unknown tool_calls policy '{tools_raw}' ({TOOL_MODE_HELP})")
    return summary, reasoning is not None, tools_raw is not None


def validate_proposal(args: Any, source: Sequence[Event] | Stream) -> Proposal:
    """Check a call's arguments against the source; ``ProposalError`` lists every problem."""
    if not isinstance(args, Mapping):
        raise ProposalError("the arguments must be an object with from_turn and to_turn")
    problems: list[str] = []
    for name in args:
        if name not in ARGUMENTS:
            problems.append(f"unknown argument '{name}' (the arguments are {', '.join(ARGUMENTS)})")
    lo = _turn(args, "from_turn", problems)
    hi = _turn(args, "to_turn", problems)
    stream = Stream.of(source)
    count = stream.count
    if count == 0:
        problems.append("the conversation has no turns to compact")
    for name, value in (("from_turn", lo), ("to_turn", hi)):
        if count and value is not None and value > count:
            turns = "1 turn" if count == 1 else f"{count} turns"
            problems.append(f"the conversation has {turns}, {name} was {value}")
    if lo is not None and hi is not None and lo > hi:
        problems.append(f"from_turn {lo} is after to_turn {hi}")
    summary, reasoning_set, tools_set = _policies(args, problems)
    if summary is not None and (reasoning_set or tools_set):
        dead = " and ".join(
            n for n, s in (("reasoning", reasoning_set), ("tool_calls", tools_set)) if s
        )
        problems.append(f"summary is set, so {dead} would be ignored: drop {dead} or drop summary")
    if not (args.get("summary") is not None or reasoning_set or tools_set):
        problems.append("a proposal needs at least one of summary, reasoning or tool_calls")
    if problems or lo is None or hi is None:
        raise ProposalError("; ".join(problems))
    tools = lookup_tool_mode(str(args["tool_calls"])) if tools_set else None
    if summary is None:
        return Proposal(lo, hi, None, reasoning_set, tools)
    a, b = grow_summary_range(stream.overlays, lo - 1, hi - 1)
    grown = (lo, hi) if (a + 1, b + 1) != (lo, hi) else None
    return Proposal(a + 1, b + 1, summary, False, None, grown_from=grown)
