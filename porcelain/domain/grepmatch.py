"""What a grep matches: a pattern read as `jp conversation grep` reads it, and
the searchable lines of an event, by scope.

Shared by the command and by the model's `recall` tool, so both find the
same lines for the same pattern.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Protocol

from gitstore import Event

# scope -> (event kind, the field searched)
SCOPES = {
    "user": ("chat_request", "content"),
    "assistant": ("chat_response", "message"),
    "reasoning": ("chat_response", "reasoning"),
    "tool-call": ("tool_call_request", "arguments"),
    "tool-result": ("tool_call_response", "content"),
}


def compile_pattern(text: str, regex: bool = False, case: str | None = None) -> re.Pattern[str]:
    """``text`` as a matcher: a fixed string unless ``regex``; smart case (case-
    insensitive unless ``text`` has an upper-case letter) when ``case`` is None,
    ``"ignore"`` ignores case, ``"exact"`` never.  Raises ``re.error``."""
    smart = case is None and not any(c.isupper() for c in text)
    flags = re.IGNORECASE if case == "ignore" or smart else 0
    return re.compile(text if regex else re.escape(text), flags)


def scoped_lines(event: Event, scopes: tuple[str, ...]) -> Iterator[tuple[str, list[str]]]:
    """(scope, lines) of each of ``scopes`` that ``event`` has."""
    for scope in scopes:
        kind, key = SCOPES[scope]
        if event.get("type") != kind or key not in event:
            continue
        value = event[key]
        body = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        yield scope, body.splitlines()


class Searcher(Protocol):
    """What ``matches`` needs of a matcher: ``re.Pattern``, or recall's bounded one."""

    def search(self, line: str, /) -> object: ...


def matches(event: Event, matcher: Searcher) -> bool:
    """Some searchable line of ``event`` (any scope) holds a match of ``matcher``."""
    return any(
        matcher.search(line) for _, lines in scoped_lines(event, tuple(SCOPES)) for line in lines
    )
