"""The tools `jp mcp serve` offers an agent: their names, descriptions and input
schemas, what their arguments mean, and how an answer is kept within its bytes.

Pure: the arguments arrive from a model through an MCP client, so they are
untrusted and checked here into typed requests (``ToolInputError`` names the
first problem, as the error result the model reads); an answer is cut to its
limit here, saying so in a plain line or field.  No git, no store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

SEARCH = "search_conversations"
READ = "read_conversation"
LIST = "list_conversations"

DEFAULT_MAX_BYTES = 24 * 1024  # an answer: about 6,000 tokens
LEAST_BYTES = 1024
MOST_BYTES = 1024 * 1024  # whatever the configuration says
LONGEST_QUERY = 1000  # characters: a query is a needle, not a document
LONGEST_FIELD = 200  # characters of a title, a preview, a folder in one row
EXCERPT = 240  # characters around a hit
TOOLS = ("claude-code", "codex", "jp")  # what a conversation came from: jp is its own

_ID = {"type": "string", "description": "A conversation id (or a unique prefix of one)."}
_TOOL = {
    "type": "string",
    "enum": list(TOOLS),
    "description": "Only conversations imported from this tool (jp: jp's own).",
}
_PROJECT = {
    "type": "string",
    "description": "Only sessions run in a folder whose path contains this text.",
}
_SINCE = {"type": "string", "description": "From this date (YYYY-MM-DD or an RFC 3339 time)."}
_UNTIL = {"type": "string", "description": "Up to this date (inclusive; same forms)."}
_ARCHIVED = {"type": "boolean", "description": "Include archived conversations."}

SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    SEARCH: (
        "Search every conversation the user kept in jp (their own, and imported Claude "
        "Code and Codex sessions from every machine) for text. query is a fixed string, "
        "case-insensitive unless it has an upper-case letter (regex=true: a regular "
        "expression). Returns JSON: the conversations with hits, most hits first, each "
        "with its id, title, tool, project, last activity and up to a few hits (turn, "
        "where: user/assistant/reasoning/tool-call/tool-result, a short excerpt). Read a "
        "hit's turns with read_conversation. Narrow with tool, project, since/until (the "
        "time of the matching message) or conversation.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The text to find."},
                "regex": {"type": "boolean", "description": "query is a regular expression."},
                "tool": _TOOL,
                "project": _PROJECT,
                "since": _SINCE,
                "until": _UNTIL,
                "conversation": _ID,
                "archived": _ARCHIVED,
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "description": "At most this many conversations (default 10).",
                },
            },
            "required": ["query"],
        },
    ),
    READ: (
        "Read turns of one conversation kept in jp, as plain text: each turn's user "
        "message, answers, reasoning, tool calls and results. view=raw (the default) "
        "shows every turn as it was written, also those a compaction summarized; "
        "view=model shows what a model is sent now (a summary in place of compacted "
        "turns). Turns are 1-based and inclusive, as search_conversations names them; "
        "without from_turn the last turns are read. The answer is bounded in size and "
        "ends with a line saying so when it was cut: ask for fewer turns then.",
        {
            "type": "object",
            "properties": {
                "conversation": _ID,
                "from_turn": {"type": "integer", "minimum": 1, "description": "First turn."},
                "to_turn": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Last turn (inclusive; default: from_turn + 4).",
                },
                "view": {
                    "type": "string",
                    "enum": ["raw", "model"],
                    "description": "raw: every event as written; model: as a model is sent it.",
                },
            },
            "required": ["conversation"],
        },
    ),
    LIST: (
        "List the conversations kept in jp, the most recent activity first: JSON rows "
        "of id, title, tool (claude-code, codex or jp), project (the folder an imported "
        "session ran in), turns, last activity and the first request. Narrow with tool, "
        "project and since/until (the last activity).",
        {
            "type": "object",
            "properties": {
                "tool": _TOOL,
                "project": _PROJECT,
                "since": _SINCE,
                "until": _UNTIL,
                "archived": _ARCHIVED,
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "description": "At most this many rows (default 20).",
                },
            },
        },
    ),
}


class ToolInputError(ValueError):
    """Arguments a tool cannot take; the text is the error result the model reads."""


@dataclass(frozen=True)
class Filters:
    """What narrows a search or a listing (None: anything)."""

    tool: str | None = None
    project: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    archived: bool = False

    def keeps(self, tool: str, project: str | None) -> bool:
        if self.tool is not None and tool != self.tool:
            return False
        return self.project is None or (project is not None and self.project in project)

    def within(self, when: datetime | None) -> bool:
        if self.since is None and self.until is None:
            return True
        if when is None:
            return False
        return (self.since is None or when >= self.since) and (
            self.until is None or when <= self.until
        )


@dataclass(frozen=True)
class SearchRequest:
    query: str
    regex: bool
    conversation: str | None
    limit: int
    filters: Filters


@dataclass(frozen=True)
class ReadRequest:
    conversation: str
    first: int | None  # 1-based, inclusive
    last: int | None
    view: str


@dataclass(frozen=True)
class ListRequest:
    limit: int
    filters: Filters


def _known(arguments: Mapping[str, Any], name: str) -> None:
    unknown = sorted(set(arguments) - set(SPECS[name][1]["properties"]))
    if unknown:
        raise ToolInputError(f"unknown argument {unknown[0]!r} (see the tool's input schema)")


def _string(arguments: Mapping[str, Any], key: str, longest: int = LONGEST_QUERY) -> str | None:
    value = arguments.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolInputError(f"{key} must be a string")
    if len(value) > longest:
        raise ToolInputError(f"{key} is longer than {longest} characters")
    return value


def _flag(arguments: Mapping[str, Any], key: str) -> bool:
    value = arguments.get(key, False)
    if not isinstance(value, bool):
        raise ToolInputError(f"{key} must be true or false")
    return value


def _number(arguments: Mapping[str, Any], key: str, default: int | None, most: int) -> int | None:
    value = arguments.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ToolInputError(f"{key} must be a whole number from 1 to {most}")
    return value


def _date(arguments: Mapping[str, Any], key: str, end: bool) -> datetime | None:
    text = _string(arguments, key, 64)
    if text is None:
        return None
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = datetime.fromisoformat(text).replace(tzinfo=UTC)
            return day.replace(hour=23, minute=59, second=59, microsecond=999999) if end else day
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ToolInputError(f"{key} must be a date (YYYY-MM-DD) or an RFC 3339 time") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _filters(arguments: Mapping[str, Any]) -> Filters:
    tool = _string(arguments, "tool", 32)
    if tool is not None and tool not in TOOLS:
        raise ToolInputError(f"tool must be one of {', '.join(TOOLS)}")
    found = Filters(
        tool,
        _string(arguments, "project") or None,
        _date(arguments, "since", False),
        _date(arguments, "until", True),
        _flag(arguments, "archived"),
    )
    if found.since and found.until and found.since > found.until:
        raise ToolInputError("since is after until")
    return found


def search_request(arguments: Mapping[str, Any]) -> SearchRequest:
    _known(arguments, SEARCH)
    query = _string(arguments, "query")
    if not query:
        raise ToolInputError("query is required: the text to find")
    limit = _number(arguments, "limit", 10, 50)
    assert limit is not None
    return SearchRequest(
        query, _flag(arguments, "regex"), _string(arguments, "conversation", 100), limit,
        _filters(arguments),
    )  # fmt: skip


def read_request(arguments: Mapping[str, Any]) -> ReadRequest:
    _known(arguments, READ)
    conversation = _string(arguments, "conversation", 100)
    if not conversation:
        raise ToolInputError("conversation is required: an id from search or list")
    view = _string(arguments, "view", 16) or "raw"
    if view not in ("raw", "model"):
        raise ToolInputError("view must be raw or model")
    first = _number(arguments, "from_turn", None, 10**9)
    last = _number(arguments, "to_turn", None, 10**9)
    if first is not None and last is not None and last < first:
        raise ToolInputError(f"to_turn {last} is before from_turn {first}")
    return ReadRequest(conversation, first, last, view)


def list_request(arguments: Mapping[str, Any]) -> ListRequest:
    _known(arguments, LIST)
    limit = _number(arguments, "limit", 20, 100)
    assert limit is not None
    return ListRequest(limit, _filters(arguments))


def turn_range(request: ReadRequest, count: int, most: int = 5) -> range:
    """The 0-based turns to read of ``count``: as asked, else the last ``most``
    (``ToolInputError`` when none of them exists)."""
    if count == 0:
        raise ToolInputError("this conversation has no turns yet")
    if request.first is None:
        last = count if request.last is None else min(request.last, count)
        return range(max(0, last - most), last)
    if request.first > count:
        raise ToolInputError(f"turn {request.first} does not exist: it has {count} turn(s)")
    last = request.first + most - 1 if request.last is None else request.last
    return range(request.first - 1, min(last, count))


def excerpt(line: str, matcher: re.Pattern[str], width: int = EXCERPT) -> str:
    """About ``width`` characters of ``line`` around its first match, with ``...``
    where it was cut."""
    found = matcher.search(line)
    start = 0 if found is None else max(0, found.start() - width // 3)
    end = min(len(line), start + width)
    start = max(0, min(start, end - width))
    return ("..." if start else "") + line[start:end].strip() + ("..." if end < len(line) else "")


def clip(text: str, longest: int = LONGEST_FIELD) -> str:
    return text if len(text) <= longest else text[: longest - 3] + "..."


def bounded(text: str, max_bytes: int) -> str:
    """``text`` in at most ``max_bytes`` of UTF-8 (besides a last line saying it was cut)."""
    data = text.encode()
    if len(data) <= max_bytes:
        return text
    kept = data[:max_bytes].decode(errors="ignore")
    line = kept.rfind("\n")
    if line >= len(kept) * 3 // 4:  # whole lines, unless that leaves out much
        kept = kept[: line + 1]
    return (
        kept + f"\n[jp: cut to {len(kept.encode())} of {len(data)} bytes (the answer limit); "
        "ask for fewer turns for the rest]\n"
    )


def json_bounded(head: dict[str, Any], key: str, items: list[Any], max_bytes: int) -> str:
    """``head`` with as many of ``items`` under ``key`` as fit in ``max_bytes`` (JSON);
    a ``cut`` field says how many were left out."""

    def dump(value: dict[str, Any]) -> str:
        return json.dumps(value, ensure_ascii=False, indent=1)

    shown = list(items)
    text = dump({**head, key: shown})
    while len(text.encode()) > max_bytes and shown:
        shown.pop()  # the lowest ranked first
        cut = f"{len(items) - len(shown)} more left out by the answer limit: narrow the request"
        text = dump({**head, key: shown, "cut": cut})
    return text
