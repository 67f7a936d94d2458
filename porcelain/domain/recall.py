"""`recall`: the raw events of compacted turns, for a model that reads a summary.

A compaction is an overlay: the turns it covers are still in the stream.  The
model names what it wants back by a range of turns (1-based, inclusive, as
the summary block names them), by a search over the compacted turns (grep's
reading of a pattern: `porcelain/domain/grepmatch.py`), or both.  The answer
is the selected events as text, at most ``max_bytes`` of UTF-8, and says so
plainly when it was cut.

The pattern is the model's, and a pulled conversation can steer the model, so
a regular expression runs on the ``regex`` engine (Python's syntax, grep's
reading) within one budget for the whole search (``BUDGET_SECONDS``): a
pattern that backtracks without end (``^(\\w+\\s?)*$`` on a sentence ending in
punctuation, exponential on Python's ``re``) is an error result, never a
query that does not end.  A fixed string is matched by ``re`` (linear).

Pure: plain functions over a stream, no git, no model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitstore import Event, Kind
from porcelain import clock
from porcelain.domain.grepmatch import Searcher, compile_pattern, matches
from porcelain.domain.stream import Stream

RECALL = "recall"
DEFAULT_MAX_BYTES = 32 * 1024
# what the recalled text may never exceed, whatever the configuration says
MOST_BYTES = 1024 * 1024
LONGEST_QUERY = 1000  # characters: a query is a needle, not a document
BUDGET_SECONDS = 2.0  # all the regular-expression matching of one recall
RECALLED_KINDS = (
    Kind.CHAT_REQUEST,
    Kind.CHAT_RESPONSE,
    Kind.TOOL_CALL_REQUEST,
    Kind.TOOL_CALL_RESPONSE,
)

RECALL_DESCRIPTION = (
    "Read the raw events (user messages, answers, reasoning, tool calls and results) "
    "of turns that a summary or a compaction shortened in this conversation. Give "
    "from_turn and to_turn (1-based, inclusive, as the summary names them), or query "
    "(a fixed string, case-insensitive unless it has an upper-case letter; regex=true "
    "for a regular expression) to search every compacted turn, or both. The answer "
    "is bounded in size and says when it was cut: ask for fewer turns or a narrower "
    "query then."
)
RECALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "from_turn": {"type": "integer", "minimum": 1, "description": "First turn (1-based)."},
        "to_turn": {
            "type": "integer",
            "minimum": 1,
            "description": "Last turn (1-based, inclusive); from_turn alone recalls one turn.",
        },
        "query": {
            "type": "string",
            "description": "Only the events with a line holding this text.",
        },
        "regex": {"type": "boolean", "description": "query is a regular expression."},
    },
}


class RecallError(ValueError):
    """A request the tool cannot answer; its text is the error result the model reads."""


@dataclass(frozen=True)
class RecallQuery:
    """What the model asked for: 0-based turns, and an optional matcher."""

    turns: range
    matcher: Searcher | None = None
    query: str = ""


class Bounded:
    """A model's regular expression: every search within what is left of one budget."""

    def __init__(self, pattern: Any, seconds: float) -> None:
        self._pattern = pattern
        self._left = seconds

    def search(self, line: str, /) -> object:
        if self._left <= 0:
            raise RecallError(_TOO_SLOW)
        # a budget of work, not a time of record: the real clock, whatever clock jp runs on
        start = clock.elapsed()
        try:
            return self._pattern.search(line, timeout=self._left)
        except TimeoutError:
            raise RecallError(_TOO_SLOW) from None
        finally:
            self._left -= clock.elapsed() - start


_TOO_SLOW = (
    f"the regular expression took more than {BUDGET_SECONDS:g} s over the compacted turns "
    "(it backtracks too much); search for a fixed string (regex false) or a simpler pattern"
)


def compacted_turns(stream: Stream) -> list[int]:
    """The 0-based turns that a standing overlay covers (sent shortened or replaced)."""
    covered: set[int] = set()
    for overlay in stream.overlays:
        covered.update(range(overlay.from_turn, min(overlay.to_turn, stream.count - 1) + 1))
    return sorted(covered)


def spans(turns: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted turns as runs of consecutive turns, (first, last)."""
    out: list[tuple[int, int]] = []
    for turn in turns:
        if out and out[-1][1] == turn - 1:
            out[-1] = (out[-1][0], turn)
        else:
            out.append((turn, turn))
    return out


def label(first: int, last: int) -> str:
    """``turn 4`` or ``turns 3-5`` for 0-based ``first..last``."""
    return f"turn {first + 1}" if first == last else f"turns {first + 1}-{last + 1}"


def labels(turns: Sequence[int]) -> str:
    return ", ".join(label(a, b) for a, b in spans(turns)) or "none"


def _turn_number(arguments: Mapping[str, Any], key: str) -> int | None:
    value = arguments.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecallError(f"{key} must be a whole number (a 1-based turn), not {value!r}")
    return value


def parse_request(arguments: Mapping[str, Any], stream: Stream) -> RecallQuery:
    """The model's arguments as a query over ``stream``'s compacted turns, or a
    ``RecallError`` naming what is wrong (a missing turn, one not compacted)."""
    first = _turn_number(arguments, "from_turn")
    last = _turn_number(arguments, "to_turn")
    text = arguments.get("query")
    if text is not None and not isinstance(text, str):
        raise RecallError("query must be a string")
    if text is not None and len(text) > LONGEST_QUERY:
        raise RecallError(f"the query is longer than {LONGEST_QUERY} characters")
    compacted = compacted_turns(stream)
    if not compacted:
        raise RecallError("no turn of this conversation is compacted: there is nothing to recall")
    matcher = _matcher(text, arguments.get("regex") is True) if text else None
    if first is None and last is None:
        if matcher is None:
            raise RecallError("give from_turn and to_turn, or a query (or both)")
        return RecallQuery(range(compacted[0], compacted[-1] + 1), matcher, str(text))
    first = last if first is None else first
    last = first if last is None else last
    assert first is not None and last is not None
    return RecallQuery(_checked(first, last, stream.count, compacted), matcher, str(text or ""))


def _matcher(text: str, regex: bool) -> Searcher:
    if not regex:
        return compile_pattern(text, regex)  # a fixed string: linear on re
    import regex as engine  # type: ignore[import-untyped]  # lazy: only a model's regular expression needs it

    smart = not any(c.isupper() for c in text)
    try:
        pattern = engine.compile(text, engine.IGNORECASE if smart else 0)
    except (engine.error, re.error, ValueError, OverflowError, RecursionError) as exc:
        raise RecallError(f"the query is not a valid regular expression: {exc}") from None
    return Bounded(pattern, BUDGET_SECONDS)


def _checked(first: int, last: int, count: int, compacted: Sequence[int]) -> range:
    """1-based ``first..last`` as 0-based turns, all of them existing and compacted."""
    where = f"the compacted turns are {labels(compacted)}"
    if first < 1 or last < first:
        raise RecallError(f"turns {first}-{last} are not a range of turns; {where}")
    if last > count:
        raise RecallError(
            f"turn {last} does not exist: this conversation has {count} turns; {where}"
        )
    turns = range(first - 1, last)
    covered = set(compacted)
    whole = [t for t in turns if t not in covered]
    if whole:
        one = len(whole) == 1
        raise RecallError(
            f"{labels(whole)} {'is' if one else 'are'} not compacted: the model is sent "
            f"{'it' if one else 'them'} as written, so there is nothing to recall; {where}"
        )
    return turns


def select(stream: Stream, query: RecallQuery) -> list[tuple[int, Event]]:
    """(0-based turn, event) of the recalled kinds in the query's turns, only those
    with a matching line when it has a matcher; compacted turns only."""
    wanted = set(compacted_turns(stream)) & set(query.turns)
    out: list[tuple[int, Event]] = []
    for event, turn in zip(stream.events, stream.indices, strict=True):
        if turn not in wanted or event.get("type") not in RECALLED_KINDS:
            continue
        if query.matcher is not None and not matches(event, query.matcher):
            continue
        out.append((turn, event))
    return out


def event_text(event: Event) -> str:
    """One event as the model reads it back: a role, then its text."""
    kind = event.get("type")
    if kind == Kind.CHAT_REQUEST:
        return f"user: {event.get('content') or ''}"
    if kind == Kind.TOOL_CALL_REQUEST:
        arguments = json.dumps(event.get("arguments") or {}, ensure_ascii=False)
        return f"tool call {event.get('name')} (id {event.get('id')}): {arguments}"
    if kind == Kind.TOOL_CALL_RESPONSE:
        failed = " (error)" if event.get("is_error") else ""
        return f"tool result{failed} (id {event.get('id')}): {event.get('content') or ''}"
    parts = []
    if event.get("reasoning"):
        parts.append(f"reasoning: {event['reasoning']}")
    if event.get("message"):
        parts.append(f"assistant: {event['message']}")
    return "\n".join(parts) or "assistant: (empty)"


def render(selected: Sequence[tuple[int, Event]], query: RecallQuery, max_bytes: int) -> str:
    """The recalled events under a heading per turn, at most ``max_bytes`` of UTF-8
    (besides the first and last lines); a cut is said in the last line."""
    asked = label(query.turns.start, query.turns.stop - 1)
    found = f" matching {query.query!r}" if query.matcher is not None else ""
    if not selected:
        return f"No event of the compacted {asked} has a line{found or ' to show'}."
    head = f"Raw events of the compacted {asked}{found}: {len(selected)} event(s)."
    body: list[str] = []
    used, total, shown, turn = 0, 0, 0, None
    for number, event in selected:
        block = (f"\n[turn {number + 1}]\n" if number != turn else "") + event_text(event) + "\n"
        turn = number
        size = len(block.encode())
        total += size
        if used + size <= max_bytes:
            body.append(block)
            used += size
            shown += 1
        elif used < max_bytes:
            body.append(_cut(block, max_bytes - used) + " [...]\n")
            used = max_bytes
    text = head + "\n" + "".join(body)
    if total > max_bytes:
        text += (
            f"\n[recall: cut to {max_bytes} of {total} bytes; {shown} of {len(selected)} "
            "event(s) shown whole. Ask for fewer turns or a narrower query for the rest.]"
        )
    return text


def _cut(text: str, room: int) -> str:
    """The longest start of ``text`` that is at most ``room`` bytes of UTF-8."""
    return text.encode()[:room].decode(errors="ignore")


def recall(arguments: Mapping[str, Any], stream: Stream, max_bytes: int) -> str:
    """The tool's answer to ``arguments`` (raises ``RecallError`` for an error result)."""
    query = parse_request(arguments, stream)
    return render(select(stream, query), query, max(1, min(max_bytes, MOST_BYTES)))


def summary_note(first: int, last: int) -> str:
    """What the summary block says of itself when ``recall`` is offered (0-based turns)."""
    return (
        f"[Summary of previous conversation: it stands for {label(first, last)}; their raw "
        f"events can be read with the {RECALL} tool (from_turn={first + 1}, to_turn={last + 1})]"
    )
