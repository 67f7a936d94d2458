"""Reading another tool's session file: JSON lines, each one checked on its own.

A session file (Claude Code's transcript, a Codex rollout) is one JSON object
a line.  Everything in it is data from elsewhere: a line that is not strict
JSON, not an object, or over the size limit is skipped and named
(``FILE:LINE: reason``), never fatal to the rest.  A last line without its
newline is a record the tool is still writing: it is left for a later import,
neither read nor counted as skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitstore import load_json, parse_time

MAX_LINE_SHARE = 3  # a record is stored twice (mapped, and whole): a third of an event's limit


@dataclass(frozen=True)
class Skipped:
    line: int  # 1-based
    reason: str


@dataclass
class SessionLines:
    """The whole records of one file, in order, with what was skipped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the 1-based line of each record
    skipped: list[Skipped] = field(default_factory=list)
    pending: bool = False  # a last line still being written was left out
    size: int = 0  # the bytes read (up to the last whole line)


def parse_lines(data: bytes, max_line: int) -> SessionLines:
    """The records of ``data`` (a session file's bytes); pure."""
    out = SessionLines()
    end = data.rfind(b"\n") + 1
    out.pending = end < len(data) and bool(data[end:].strip())
    out.size = end
    number = 0
    start = 0
    while start < end:
        stop = data.index(b"\n", start)
        number += 1
        line = data[start:stop]
        start = stop + 1
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            continue
        if len(line) > max_line:
            out.skipped.append(Skipped(number, f"line of {len(line)} bytes, over {max_line}"))
            continue
        try:
            value = load_json(line)
        except ValueError as exc:
            out.skipped.append(Skipped(number, str(exc)))
            continue
        if not isinstance(value, dict):
            out.skipped.append(Skipped(number, "not a JSON object"))
            continue
        out.records.append(value)
        out.lines.append(number)
    return out


def line_limit(max_event_bytes: int) -> int:
    """The longest line read, for a store whose events may be ``max_event_bytes`` long."""
    return max(1024, max_event_bytes // MAX_LINE_SHARE)


def read_lines(path: Path, max_event_bytes: int) -> SessionLines:
    """``parse_lines`` of a file; an unreadable file raises ``OSError``."""
    return parse_lines(path.read_bytes(), line_limit(max_event_bytes))


def valid_time(value: Any) -> str | None:
    """``value`` when it is a time stamp jp can store, else None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        parse_time(value)
    except ValueError:
        return None
    return value
