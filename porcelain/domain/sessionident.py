"""One session, one conversation id, on every machine.

A Claude Code or Codex session is named by its tool, its session id and, for a
subagent stream, the agent.  The conversation an import makes of it takes an
id derived from that name and from the time of its first record
(``jp-c<deciseconds>-<10 hex digits>``), and its commits are made from the
records alone (each dated by its record, authored by its speaker), so two
machines that import the same session independently write the same ref name
and the same commits: a sync finds equal tips, or one a prefix of the other
(a fast-forward).  When the copies differ (one machine added jp turns, or its
file holds other records), the sync keeps both as it keeps any divergence.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

SUFFIX_DIGITS = 10


def session_cid(tool: str, session: str, agent: str | None, first_time: str) -> str | None:
    """The conversation id of a session (None: a first time that does not parse)."""
    return _cid("\0".join((tool, session, agent or "")), first_time)


def branch_cid(
    tool: str,
    session: str,
    agent: str | None,
    shared: dict[str, Any] | None,
    first: dict[str, Any] | None,
    first_time: str,
) -> str | None:
    """The conversation id of a fork an import makes where a session's file and its
    conversation part (the tool's branch, a changed file): made from the session, the
    last record both hold (``shared``) and the first of the fork, never from the clock,
    so every machine that sees the same divergence names it alike."""
    records = json.dumps([shared, first], sort_keys=True)
    name = "\0".join((tool, session, agent or "", "fork", records))
    return _cid(name, first_time)


def _cid(name: str, first_time: str) -> str | None:
    try:
        moment = datetime.fromisoformat(first_time.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    tenths = int(moment.timestamp() * 10)
    if tenths < 0:
        return None
    digest = hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()
    return f"jp-c{tenths}-{digest[:SUFFIX_DIGITS]}"
