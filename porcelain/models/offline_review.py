"""The offline model inside a compaction review: plain directives → a proposal.

Pure text work.  The directives, case-insensitive, anywhere in the message:

- ``turns 4-17``, ``turns 4 to 17``, ``from 4 to 17``, ``start at 4``,
  ``stop at 17``: the range (1-based source turns, as in the markers);
- ``keep the last N``: ``to_turn`` = highest ``[turn N]`` marker minus N
  (and ``from_turn`` = 1 when the range would otherwise start after it);
  ``keep the first N``: ``from_turn`` = N + 1 (N may be a number word);
- ``summary: TEXT`` replaces the summary, ``add: TEXT`` appends a sentence;
  everything after the colon is TEXT, so these come last;
- ``no summary``; ``strip reasoning`` / ``keep reasoning``;
  ``tools strip|strip-requests|strip-responses|omit|keep``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gitstore import PROPOSE_COMPACTION, Event, Kind
from porcelain.domain.compaction.proposal import span
from porcelain.domain.review.markers import turn_numbers

PROPOSE = PROPOSE_COMPACTION

_WORDS = "one two three four five six seven eight nine ten eleven twelve".split()  # noqa: SIM905
_NUMBER_WORDS = {w: i for i, w in enumerate(_WORDS, start=1)}
_N = r"(\d+|" + "|".join(_WORDS) + r")"
_TURN = r"(?:turns?\s+)?"
_TEXT_DIRECTIVE = re.compile(r"(?:^|(?<=[\s,;.(]))(summary|add)\s*:", re.IGNORECASE)
_RANGES = (
    re.compile(r"\bturns?\s+(\d+)\s*(?:-|–|—|\.\.|to|through|thru)\s*(?:turn\s+)?(\d+)\b"),
    re.compile(r"\bfrom\s+" + _TURN + r"(\d+)\s+(?:to|through|until)\s+" + _TURN + r"(\d+)\b"),
)
_START = re.compile(r"\bstart(?:ing)?\s+(?:at|from|with)\s+" + _TURN + r"(\d+)\b")
_STOP = re.compile(r"\b(?:stop|end)(?:ping|ing)?\s+(?:at|with|after)\s+" + _TURN + r"(\d+)\b")
_KEEP = re.compile(r"\bkeep\s+(?:only\s+)?(?:the\s+)?(last|first)\s+" + _N + r"\b")
_NO_SUMMARY = re.compile(r"\b(?:no|without(?:\s+a)?|drop\s+the|remove\s+the)\s+summary\b")
_KEEP_REASONING = re.compile(
    r"\b(?:keep\s+(?:the\s+)?reasoning|(?:don'?t|do\s+not|no)\s+strip(?:ping)?\s+(?:the\s+)?reasoning)\b"
)
_STRIP_REASONING = re.compile(r"\bstrip(?:ping)?\s+(?:the\s+)?reasoning\b")
_MODE = r"(strip[-_ ]requests?|strip[-_ ]responses?|sreq|sres|strip|omit|keep)"
_TOOLS = (
    re.compile(r"\btool(?:s|\s+calls?)?\s*[:=]?\s*" + _MODE + r"\b"),
    re.compile(
        r"\b(strip|omit|keep)\s+(?:the\s+)?tool(?:s|\s+calls?)?\b(?!\s+(?:requests?|responses?))"
    ),
    re.compile(r"\bstrip\s+(?:the\s+)?tool\s+(?:call\s+)?(requests?|responses?)\b"),
)


@dataclass
class Directives:
    """What one user message asks for; ``None`` = not mentioned."""

    from_turn: int | None = None
    to_turn: int | None = None
    keep_last: int | None = None
    keep_first: int | None = None
    summary: str | None = None
    add: str | None = None
    no_summary: bool = False
    reasoning: str | None = None  # "strip" | "keep"
    tools: str | None = None  # one of TOOL_MODES, or "keep"
    understood: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.understood)


def _number(token: str) -> int:
    return _NUMBER_WORDS.get(token.lower()) or int(token)


def _tool_mode(raw: str) -> str:
    word = raw.lower().replace("_", "-").replace(" ", "-")
    if word.startswith("strip-req") or word == "sreq" or word in ("request", "requests"):
        return "strip-requests"
    if word.startswith("strip-res") or word == "sres" or word in ("response", "responses"):
        return "strip-responses"
    return word


def parse_directives(message: str) -> Directives:
    """Read the directives of one user message (see the module docstring)."""
    found = Directives()
    head, text, kind = message, "", ""
    split = _TEXT_DIRECTIVE.search(message)
    if split:
        head, text, kind = message[: split.start()], message[split.end() :].strip(), split.group(1)
    _parse_head(head.lower(), found)
    if text and kind.lower() == "summary":
        found.summary = text
        found.understood.append("replace the summary")
    elif text:
        found.add = text
        found.understood.append("add a sentence to the summary")
    return found


def _parse_head(low: str, found: Directives) -> None:
    for pattern in _RANGES:
        if m := pattern.search(low):
            found.from_turn, found.to_turn = int(m.group(1)), int(m.group(2))
            found.understood.append(span(found.from_turn, found.to_turn))
            break
    if m := _START.search(low):
        found.from_turn = int(m.group(1))
        found.understood.append(f"start at turn {found.from_turn}")
    if m := _STOP.search(low):
        found.to_turn = int(m.group(1))
        found.understood.append(f"stop at turn {found.to_turn}")
    for m in _KEEP.finditer(low):
        count = _number(m.group(2))
        if m.group(1) == "last":
            found.keep_last = count
        else:
            found.keep_first = count
        found.understood.append(f"keep the {m.group(1)} {count}")
    if _NO_SUMMARY.search(low):
        found.no_summary = True
        found.understood.append("no summary")
    if _KEEP_REASONING.search(low):
        found.reasoning = "keep"
        found.understood.append("keep reasoning")
    elif _STRIP_REASONING.search(low):
        found.reasoning = "strip"
        found.understood.append("strip reasoning")
    for pattern in _TOOLS:
        if m := pattern.search(low):
            found.tools = _tool_mode(m.group(1))
            found.understood.append(f"tools {found.tools}")
            break


# -- the review's history -----------------------------------------------------


def highest_marker(events: Sequence[Event]) -> int | None:
    """The highest ``[turn N]`` marker in the user messages, if any."""
    numbers = [
        n
        for e in events
        if e.get("type") == Kind.CHAT_REQUEST
        for n in turn_numbers(str(e.get("content") or ""))
    ]
    return max(numbers) if numbers else None


def proposal_calls(events: Sequence[Event]) -> dict[str, Event]:
    """The ``propose_compaction`` calls by id, in order."""
    return {
        str(e.get("id")): e
        for e in events
        if e.get("type") == Kind.TOOL_CALL_REQUEST and e.get("name") == PROPOSE
    }


def latest_proposal(events: Sequence[Event]) -> dict[str, Any]:
    """Arguments of the most recent proposal that was not refused (else the most recent)."""
    calls = proposal_calls(events)
    refused = {
        str(e.get("id"))
        for e in events
        if e.get("type") == Kind.TOOL_CALL_RESPONSE and e.get("is_error")
    }
    ordered = list(calls.values())
    for call in reversed(ordered):
        if str(call.get("id")) not in refused:
            return dict(call.get("arguments") or {})
    return dict(ordered[-1].get("arguments") or {}) if ordered else {}


def _append_sentence(summary: str | None, sentence: str) -> str:
    sentence = sentence.strip()
    sentence = sentence[:1].upper() + sentence[1:]
    if sentence[-1:] not in ".!?":
        sentence += "."
    if not summary or not summary.strip():
        return sentence
    summary = summary.rstrip()
    if summary[-1] not in ".!?":
        summary += "."
    return f"{summary} {sentence}"


def merge(
    base: dict[str, Any],
    found: Directives,
    *,
    highest: int | None,
    reasoning_value: Any = "strip",
) -> tuple[dict[str, Any], list[str]]:
    """The proposal after the directives, and notes on what else changed.

    When the message sets a policy but no summary text, a standing summary is
    dropped (a summary makes the policies moot), and the other way round.
    """
    args = {k: v for k, v in base.items() if v is not None}
    notes: list[str] = []
    if found.from_turn is not None:
        args["from_turn"] = found.from_turn
    if found.to_turn is not None:
        args["to_turn"] = found.to_turn
    if found.keep_first is not None:
        args["from_turn"] = found.keep_first + 1
    if found.keep_last is not None:
        if highest is None:
            notes.append("no [turn N] markers to count from, so `keep the last` changed nothing")
        else:
            args["to_turn"] = highest - found.keep_last
            start = args.get("from_turn")
            unset = found.from_turn is None and found.keep_first is None
            if unset and isinstance(start, int) and start > args["to_turn"] >= 1:
                args["from_turn"] = 1  # "keep the last N" compacts what comes before them
                notes.append(
                    "the range now starts at turn 1, so that it ends before the kept turns"
                )
    if found.summary is not None:
        args["summary"] = found.summary
    if found.add is not None:
        args["summary"] = _append_sentence(args.get("summary"), found.add)
    if found.no_summary:
        args.pop("summary", None)
    if found.reasoning == "strip":
        args["reasoning"] = reasoning_value
    elif found.reasoning == "keep":
        args.pop("reasoning", None)
    if found.tools == "keep":
        args.pop("tool_calls", None)
    elif found.tools is not None:
        args["tool_calls"] = found.tools
    sets_text = found.summary is not None or found.add is not None
    sets_policy = found.reasoning == "strip" or found.tools not in (None, "keep")
    if sets_policy and not sets_text and args.pop("summary", None) is not None:
        notes.append("dropped the summary: with a summary the policies would have no effect")
    if sets_text and not sets_policy:
        dropped = [k for k in ("reasoning", "tool_calls") if args.pop(k, None) is not None]
        if dropped:
            notes.append(f"dropped {' and '.join(dropped)}: a summary replaces those turns")
    return args, notes


def describe(args: dict[str, Any]) -> str:
    """``turns 2-17, summary (42 words)`` — a proposal in one line."""
    lo, hi = args.get("from_turn"), args.get("to_turn")
    parts = [
        span(lo, hi)
        if isinstance(lo, int) and isinstance(hi, int)
        else f"turns {lo or '?'}-{hi or '?'}"
    ]
    summary = args.get("summary")
    if isinstance(summary, str) and summary:
        words = len(summary.split())
        parts.append(f"summary ({words} word{'' if words == 1 else 's'})")
    if args.get("reasoning"):
        parts.append("strip reasoning")
    if args.get("tool_calls"):
        parts.append(f"tools {args['tool_calls']}")
    return ", ".join(parts)
