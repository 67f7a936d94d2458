"""The offline model's summaries: extractive, deterministic, a few hundred words.

Nothing is paraphrased.  The summary quotes the goal (the first request that is
more than an acknowledgement), later requests,
sentences that record decisions or constraints, the exact file paths,
commands, error lines and numbers it finds, the tools used, and the last
request and answer as the current state.  The same events give the same text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gitstore import Event, Kind
from porcelain.domain.compaction.facts import Fact, facts_of
from porcelain.domain.review.markers import strip_marker
from porcelain.models.offline_transcript import parse_transcript

_INSTRUCTION = re.compile(r"^\s*summari[sz]e\b", re.IGNORECASE)
_CONTEXT = re.compile(r"additional context:\s*(.+)", re.IGNORECASE | re.DOTALL)
HEADER = "Extractive summary by jp's offline model"
# (title, kinds, how many, separator) of each listed section
_SECTIONS = (
    ("Files", ("path", "url"), 12, ", "),
    ("Commands", ("command",), 6, "; "),
    ("Identifiers", ("identifier",), 10, ", "),
    ("Numbers", ("number",), 10, ", "),
)


def _words(text: str, limit: int) -> str:
    words = text.split()  # noqa: SIM905
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


def _content(event: Event) -> str:
    return strip_marker(str(event.get("content") or ""))


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _pick(facts: Sequence[Fact], kinds: tuple[str, ...], limit: int) -> list[str]:
    """Up to ``limit`` facts of ``kinds``; blank ones left out, so no heading stands
    over nothing."""
    return [f.text.strip() for f in facts if f.kind in kinds and f.text.strip()][:limit]


def _said(text: str) -> bool:
    """A decision that says something: not a lead-in ending in a colon ("Now let's
    add the configuration:"), a heading whose content the summary does not quote."""
    return not text.rstrip().endswith(":")


def _tools(events: Sequence[Event]) -> list[str]:
    counts: dict[str, int] = {}
    for e in events:
        if e.get("type") == Kind.TOOL_CALL_REQUEST:
            name = str(e.get("name") or "tool")
            counts[name] = counts.get(name, 0) + 1
    return [f"{name} ×{n}" for name, n in counts.items()][:6]


def _focus(instruction: str) -> str:
    context = _CONTEXT.search(instruction)
    return context.group(1).strip() if context else ""


def _split_instruction(events: list[Event]) -> tuple[list[Event], str]:
    """The conversation to summarize, and the focus the instruction asks for.

    The instruction is a trailing "Summarize ..." request, or the text after a
    transcript sent in the last request (``offline_transcript``).
    """
    if not events or events[-1].get("type") != Kind.CHAT_REQUEST:
        return events, ""
    last = str(events[-1].get("content") or "")
    transcript = parse_transcript(last)
    if transcript is not None:
        return events[:-1] + transcript[0], _focus(transcript[1])
    if _INSTRUCTION.match(_content(events[-1])):
        return events[:-1], _focus(last)
    return events, ""


def summarize(events: Sequence[Event]) -> str:
    """An extractive summary of the events (a trailing "Summarize ..." request is
    read as the instruction, its ``Additional context:`` as the focus; a
    transcript in the last request is read as the conversation)."""
    events, focus = _split_instruction([e for e in events if e.get("type") != Kind.TURN_START])
    requests = [
        r for r in (_content(e) for e in events if e.get("type") == Kind.CHAT_REQUEST) if r.strip()
    ]
    answers = [
        e["message"]
        for e in events
        if e.get("type") == Kind.CHAT_RESPONSE
        and isinstance(e.get("message"), str)
        and e["message"].strip()
    ]
    if not requests and not answers:
        return "Nothing to summarize: the range holds no messages."
    facts = facts_of([(0, e) for e in events])
    lines = [
        f"{HEADER} (not a language model) of {_count(len(requests), 'request')} "
        f"and {_count(len(answers), 'answer')}."
    ]
    asked = _pick(facts, ("request",), 4)
    if asked:
        lines.append(f"Goal: {asked[0]}")
    if focus:
        lines.append(f"Focus asked for: {_words(focus, 30)}")
    if asked[1:]:
        lines.append("Later requests:")
        lines += [f"- {r}" for r in asked[1:]]
    decisions = [d for d in _pick(facts, ("decision",), 20) if d not in asked and _said(d)][:4]
    if decisions:
        lines.append("Decisions and constraints:")
        lines += [f"- {d}" for d in decisions]
    for title, kinds, limit, sep in _SECTIONS:
        picked = _pick(facts, kinds, limit)
        if picked:
            quoted = [f"`{p}`" for p in picked] if title == "Commands" else picked
            lines.append(f"{title}: {sep.join(quoted)}")
    tools = _tools(events)
    if tools:
        lines.append(f"Tools used: {', '.join(tools)}")
    for title, kinds, limit in (
        ("Errors seen", ("error",), 3),
        ("Open", ("question", "approval"), 4),
    ):
        picked = _pick(facts, kinds, limit)
        if picked:
            lines.append(f"{title}:")
            lines += [f"- {p}" for p in picked]
    if len(requests) > 1:
        lines.append(f"Last request: {_words(requests[-1], 40)}")
    if answers:
        lines.append(f"Last answer: {_words(answers[-1], 60)}")
    return "\n".join(lines)
