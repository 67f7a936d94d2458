"""The ``-k/--compact=SPEC`` grammar (reference section 3.4).

``SPEC = POLICIES [":" RANGE]``.  POLICIES joins with ``+`` one or more of
``r``/``reasoning``, ``s``/``summarize``, ``t``/``tools`` (strip) or
``t=MODE``/``tools=MODE``.  RANGE is ``FROM..TO`` (either side may be empty)
or one bound: a positive ``N`` is a 1-based turn position, ``-N`` counts N
turns back from the end; ``-N`` alone means ``..-N`` and ``N`` alone ``N..``.

A SPEC with a range sets both bounds of its rule (an open side compacts to that
end); without one the rule keeps the default bounds (first 1, last 1).
"""

from __future__ import annotations

from porcelain.domain.compaction.bounds import Count, FromEnd, Position, RuleBound, parse_int
from porcelain.domain.compaction.overlays import TOOL_MODE_HELP, ToolCalls, lookup_tool_mode
from porcelain.domain.compaction.rules import Rule, SummarySpec
from porcelain.errors import UsageError


def _error(spec: str, why: str) -> UsageError:
    return UsageError(f"invalid compaction spec '{spec}': {why}")


def _bound(spec: str, text: str) -> RuleBound:
    if not text:
        return Count(0)
    n = parse_int(text)
    if n is None:
        raise _error(spec, f"'{text}' is not a turn number")
    if n == 0:
        raise _error(spec, "turn positions start at 1 (-N counts back from the end)")
    return Position(n) if n > 0 else FromEnd(-n)


def _range(spec: str, text: str) -> tuple[RuleBound, RuleBound]:
    text = text.strip()
    if not text:
        raise _error(spec, "nothing after ':' (give a range like 2..-3)")
    if ".." in text:
        left, _, right = text.partition("..")
    elif text.startswith("-"):
        left, right = "", text
    else:
        left, right = text, ""
    return _bound(spec, left.strip()), _bound(spec, right.strip())


def parse_spec(text: str) -> Rule:
    """One inline rule; ``UsageError`` naming the spec when it does not parse."""
    spec = text.strip()
    if not spec:
        raise UsageError("empty compaction spec (give policies like r+t or s:..-3)")
    policies, colon, range_text = spec.partition(":")
    reasoning = False
    tools: ToolCalls | None = None
    summary: SummarySpec | None = None
    seen: set[str] = set()
    for part in policies.split("+"):
        name, eq, value = (p.strip() for p in part.strip().partition("="))
        key = name.lower()
        if not name:
            raise _error(spec, "empty policy (join policies with a single +)")
        if key in ("r", "reasoning", "s", "summarize") and eq:
            raise _error(spec, f"'{name}' takes no value")
        if key in ("r", "reasoning"):
            key, reasoning = "r", True
        elif key in ("s", "summarize"):
            key, summary = "s", SummarySpec()
        elif key in ("t", "tools"):
            key, tools = "t", lookup_tool_mode(value) if eq else ToolCalls.STRIP
            if tools is None:
                raise _error(spec, f"unknown tool mode '{value}' ({TOOL_MODE_HELP})")
        else:
            raise _error(spec, f"unknown policy '{name}' (use r, s, t or t=MODE)")
        if key in seen:
            raise _error(spec, f"policy '{name}' given twice")
        seen.add(key)
    rule = Rule(reasoning=reasoning, tool_calls=tools, summary=summary)
    if colon:
        first, last = _range(spec, range_text)
        rule = Rule(first, last, reasoning, tools, summary)
    return rule
