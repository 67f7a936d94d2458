"""Reading another tool's session file: JSON lines, each one checked on its own.

A session file (Claude Code's transcript, a Codex rollout) is one JSON object
a line.  Everything in it is data from elsewhere: a line that is not strict
JSON, not an object, or over the size limit is skipped and named
(``FILE:LINE: reason``), never fatal to the rest.  A last line without its
newline is a record the tool is still writing: it is left for a later import,
neither read nor counted as skipped.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from gitstore import load_record, parse_time
from porcelain.domain.sessionfiles import open_session

MAX_LINE_SHARE = 3  # a record is stored twice (mapped, and whole): a third of an event's limit
MAX_NAMED = 20  # skipped lines named one by one; the rest are counted
MAX_RECORDS = 250_000  # records a session file may hold (the longest real ones: a few thousand)


class TooManyRecords(ValueError):
    """A file with more records than a session holds: refused whole."""

    def __init__(self) -> None:
        super().__init__(f"over {MAX_RECORDS:,} records: not a session jp imports")


@dataclass(frozen=True)
class Skipped:
    line: int  # 1-based
    reason: str


@dataclass
class SessionLines:
    """The whole records of one file, in order, with what was skipped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the 1-based line of each record
    skipped: list[Skipped] = field(default_factory=list)  # the first ``MAX_NAMED``
    skipped_total: int = 0
    pending: bool = False  # a last line still being written was left out
    size: int = 0  # the bytes read (up to the last whole line)
    sha1: str = ""  # of those bytes
    newlines: int = 0  # the lines they hold
    max_line: int | None = None  # the longest line read (``scan``'s)

    def skip(self, skipped: Skipped) -> None:
        """Count a skipped line; name it while fewer than ``MAX_NAMED`` are."""
        self.skipped_total += 1
        if len(self.skipped) < MAX_NAMED:
            self.skipped.append(skipped)


def scan(handle: BinaryIO, max_line: int) -> SessionLines:
    """The records of a session file open for reading, one line at a time: no more
    than a line over ``max_line`` is held at once (a longer one is read through in
    blocks and skipped)."""
    out = SessionLines(max_line=max_line)
    digest = hashlib.sha1()
    while True:
        line = handle.readline(max_line + 2)  # room for the line's "\r\n"
        if not line:
            break
        if not line.endswith(b"\n"):
            if len(line) < max_line + 2:  # the last line, without its newline: being written
                out.pending = bool(line.strip())
                break
            through = _read_through(handle, line, digest)
            if through is None:  # a long last line, still being written
                out.pending = True
                break
            length, digest = through
            out.size += length
            out.newlines += 1
            out.skip(Skipped(out.newlines, f"line of {length - 1} bytes, over {max_line}"))
            continue
        digest.update(line)
        out.size += len(line)
        out.newlines += 1
        _take(out, line, max_line)
    out.sha1 = digest.hexdigest()
    return out


def _read_through(handle: BinaryIO, head: bytes, digest: Any) -> tuple[int, Any] | None:
    """Read the rest of a line too long to keep: its length, newline included, and
    ``digest`` with its bytes (None when the file ends first: ``digest`` stays as it was)."""
    trial = digest.copy()
    trial.update(head)
    length = len(head)
    while True:
        block = handle.readline(1 << 20)
        if not block:
            return None
        trial.update(block)
        length += len(block)
        if block.endswith(b"\n"):
            break
    return length, trial


def _take(out: SessionLines, line: bytes, max_line: int) -> None:
    """Parse one whole line (newline included) into ``out``."""
    number = out.newlines
    body = line[:-1]
    if body.endswith(b"\r"):
        body = body[:-1]
    if not body.strip():
        return
    if len(body) > max_line:
        out.skip(Skipped(number, f"line of {len(body)} bytes, over {max_line}"))
        return
    try:  # vouched for (``Checked``): the events that carry it do not walk it again
        value = load_record(body)
    except ValueError as exc:
        out.skip(Skipped(number, str(exc)))
        return
    if not isinstance(value.get("type"), str):  # every tool's record names its type
        out.skip(Skipped(number, "not a session record: no type"))
        return
    if len(out.records) >= MAX_RECORDS:
        raise TooManyRecords
    out.records.append(value)
    out.lines.append(number)


def parse_lines(data: bytes, max_line: int) -> SessionLines:
    """The records of ``data`` (a session file's bytes); pure."""
    return scan(io.BytesIO(data), max_line)


def line_limit(max_event_bytes: int) -> int:
    """The longest line read, for a store whose events may be ``max_event_bytes`` long."""
    return max(1024, max_event_bytes // MAX_LINE_SHARE)


def read_lines(path: Path, max_event_bytes: int) -> SessionLines:
    """``scan`` of a file; an unreadable file raises ``OSError``."""
    with open_session(path) as handle:
        return scan(handle, line_limit(max_event_bytes))


def valid_time(value: Any) -> str | None:
    """``value`` when it is a time stamp jp can store, else None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        parse_time(value)
    except ValueError:
        return None
    return value
