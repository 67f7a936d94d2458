"""What a session import says at its end: a row per file (``-F json``), the counts,
and the one summary line.

Shared by the full command and by the answer an unchanged re-import gets before
the command line loads (``porcelain/early/reimport.py``), so both print the same
bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from porcelain.domain.sessionfiles import NAMES, Found

ACTIONS = ("imported", "updated", "forked", "diverged", "unchanged", "empty", "unreadable")


class Skip(Protocol):
    @property
    def line(self) -> int: ...
    @property
    def reason(self) -> str: ...


class Outcome(Protocol):
    """What one file's import did (``porcelain.app.sessions.FileOutcome``)."""

    @property
    def found(self) -> Found: ...
    @property
    def action(self) -> str: ...
    @property
    def cid(self) -> str | None: ...
    @property
    def records(self) -> int: ...
    @property
    def new_records(self) -> int: ...
    @property
    def skipped(self) -> Sequence[Skip]: ...
    @property
    def more_skipped(self) -> int: ...
    @property
    def pending(self) -> bool: ...
    @property
    def branches(self) -> int: ...


def row(o: Outcome) -> dict[str, Any]:
    return {
        "path": str(o.found.path),
        "relative_path": o.found.rel,
        "id": o.cid,
        "action": o.action,
        "records": o.records,
        "new_records": o.new_records,
        "skipped_lines": [{"line": s.line, "reason": s.reason} for s in o.skipped],
        "more_skipped_lines": o.more_skipped,
        "still_being_written": o.pending,
        "rewind_branches": o.branches,
    }


def counts(done: Sequence[Outcome]) -> dict[str, int]:
    found = dict.fromkeys(ACTIONS, 0)
    for o in done:
        found[o.action] += 1
    found["skipped_lines"] = sum(len(o.skipped) + o.more_skipped for o in done)
    found["records"] = sum(o.new_records for o in done)
    found["rewind_branches"] = sum(o.branches for o in done)
    return found


def result(tool: str, done: Sequence[Outcome]) -> dict[str, Any]:
    """The ``-F json`` result."""
    return {"tool": tool, "files": [row(o) for o in done], "summary": counts(done)}


def summary(tool: str, done: Sequence[Outcome]) -> str:
    c = counts(done)
    parts = [f"{c['imported']} imported", f"{c['updated']} updated", f"{c['unchanged']} unchanged"]
    if c["forked"]:
        parts.append(f"{c['forked']} changed (kept as forks)")
    if c["diverged"]:
        n = c["diverged"]
        parts.append(f"{n} went on beside jp's turns (the tool's branch, a fork: see ls --all)")
    if c["unreadable"]:
        parts.append(f"{c['unreadable']} unreadable")
    if c["rewind_branches"]:  # a file that was rewound is more than one conversation
        n = c["rewind_branches"]
        parts.append(
            f"{n} /rewind branch{'es' if n != 1 else ''} as conversations of their own (ls --all)"
        )
    skipped = f", {c['skipped_lines']} line{'s' if c['skipped_lines'] != 1 else ''} skipped"
    files = f"{len(done)} {NAMES[tool]} file{'s' if len(done) != 1 else ''}"
    return f"{files}: {', '.join(parts)} ({c['records']} new records){skipped if c['skipped_lines'] else ''}"
