"""Importing other tools' sessions (Claude Code, Codex) into conversations, and back.

One conversation per session file, found again on the next import by the
tool and the file's path relative to the tool's root:

- a file seen for the first time is a new conversation (a subagent stream's
  is forked from its session's conversation);
- the same records again write nothing;
- a file that grew appends the events of its new records (the mapping of a
  record never depends on later ones, so these are the events a one-shot
  import of the longer file gives);
- a file whose earlier records changed is imported as a fork of the old
  conversation at the last record both share: both versions are kept, and the
  next import follows the new one.

Each conversation is written whole or not at all (objects first, then its
ref), so an import killed at any point leaves no half-imported session, and
the next one completes it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitstore import Event, Kind, Limits, Store
from porcelain.app.describe import summaries
from porcelain.app.lifecycle import publish, start_event
from porcelain.errors import UserError
from porcelain.jpformat import claude_code, codex
from porcelain.jpformat.sessionfiles import Found, rel_path_problem
from porcelain.jpformat.sessionlines import SessionLines, Skipped, read_lines
from porcelain.jpformat.sessionmap import RECORD_TYPE, SOURCE_KEY, records_of

REASON = "jp conversation import"


@dataclass
class FileOutcome:
    found: Found
    action: str  # imported | updated | forked | unchanged | empty | unreadable
    cid: str | None = None
    records: int = 0
    new_records: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    pending: bool = False
    error: str | None = None


@dataclass
class _Known:
    """The conversations earlier imports made, by (tool, path) and by main session."""

    by_path: dict[tuple[str, str], str] = field(default_factory=dict)
    by_session: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, tool: str, path: str, session: str | None, agent: str | None, cid: str) -> None:
        self.by_path[(tool, path)] = cid
        if session and not agent:
            self.by_session[(tool, session)] = cid


def known_imports(store: Store) -> _Known:
    located = store.refs(archived=None)
    facts = summaries(store, located)
    rows = [
        (loc.cid, facts[loc.tip]) for loc in located if facts[loc.tip].get("start_id") == loc.cid
    ]
    replaced = {s.get("replaces") for _, s in rows if s.get("replaces")}
    known = _Known()
    for cid, s in sorted(rows):
        origin = s.get("imported_from")
        if not origin or cid in replaced or not origin.get("path"):
            continue
        known.add(origin["tool"], origin["path"], origin.get("session"), origin.get("agent"), cid)
    return known


def _mapped(
    tool: str, records: list[dict[str, Any]]
) -> tuple[list[list[Event]], str | None, str | None]:
    if tool == codex.TOOL:
        found = codex.map_records(records)
        return found.groups, found.session, None
    mapped = claude_code.map_records(records)
    return mapped.groups, mapped.session, mapped.agent


def import_files(
    store: Store,
    tool: str,
    files: Sequence[Found],
    limits: Limits,
    progress: Callable[[FileOutcome], None] | None = None,
) -> list[FileOutcome]:
    """Import each file in turn (sessions before their subagents)."""
    known = known_imports(store)
    out = []
    for found in files:
        outcome = _import_one(store, tool, found, limits, known)
        out.append(outcome)
        if progress:
            progress(outcome)
    return out


def _import_one(
    store: Store, tool: str, found: Found, limits: Limits, known: _Known
) -> FileOutcome:
    try:
        lines = read_lines(found.path, limits.max_event_bytes)
    except OSError as exc:
        return FileOutcome(found, "unreadable", error=exc.strerror or str(exc))
    outcome = FileOutcome(
        found, "empty", records=len(lines.records), skipped=lines.skipped, pending=lines.pending
    )
    if not lines.records:
        return outcome
    groups, session, agent = _mapped(tool, lines.records)
    if agent is None and found.agent:
        agent = Path(found.rel).stem.removeprefix("agent-")
    session = session or _session_from_path(found)
    cid = known.by_path.get((tool, found.rel))
    if cid is None:
        imported = _imported(tool, session, agent, found.rel)
        parent = known.by_session.get((tool, session)) if agent else None
        outcome.cid = _create(store, groups, imported, parent)
        outcome.action, outcome.new_records = "imported", len(groups)
    else:
        _update(store, cid, lines, groups, _imported(tool, session, agent, found.rel), outcome)
    assert outcome.cid is not None
    known.add(tool, found.rel, session, agent, outcome.cid)
    return outcome


def _session_from_path(found: Found) -> str:
    rel = Path(found.rel)
    return rel.parent.parent.name if found.agent and rel.parent.name == "subagents" else rel.stem


def _imported(tool: str, session: str, agent: str | None, rel: str) -> dict[str, Any]:
    return {"format": tool, "session": session, "agent": agent, "path": rel}


def _flat(groups: Sequence[list[Event]]) -> list[Event]:
    return [e for g in groups for e in g]


def _create(
    store: Store, groups: list[list[Event]], imported: dict[str, Any], parent: str | None
) -> str:
    fork = None
    if parent is not None:
        where = store.locate(parent)
        fork = {"conversation_id": parent, "commit": where.tip} if where else None
    events = _flat(groups)

    def chain(cid: str) -> list[Event]:
        start = start_event(cid, imported=imported, forked_from=fork)
        start["timestamp"] = events[0]["timestamp"]
        return [start, *events]

    return publish(store, chain, None, REASON)


def _update(
    store: Store,
    cid: str,
    lines: SessionLines,
    groups: list[list[Event]],
    imported: dict[str, Any],
    outcome: FileOutcome,
) -> None:
    where = store.require(cid)
    events, commits = store.read_chain(where.tip)
    stored = records_of(events)
    outcome.cid = cid
    if stored == lines.records[: len(stored)]:
        new = groups[len(stored) :]
        outcome.action = "updated" if new else "unchanged"
        outcome.new_records = len(new)
        if new:
            store.append(cid, _flat(new), where.tip, f"{REASON} {cid}")
        return
    same = 0
    while same < min(len(stored), len(lines.records)) and stored[same] == lines.records[same]:
        same += 1
    carriers = [i for i, e in enumerate(events) if _carries(e)]
    base = commits[carriers[same] - 1] if same < len(carriers) else commits[-1]
    origin = {"conversation_id": cid, "commit": base}
    rest = _flat(groups[same:])

    def chain(new: str) -> list[Event]:
        start = start_event(new, imported={**imported, "replaces": cid}, forked_from=origin)
        start["timestamp"] = rest[0]["timestamp"] if rest else events[-1]["timestamp"]
        return [start, *rest]

    outcome.cid = publish(store, chain, base, f"{REASON} (changed file) {cid} ->")
    outcome.action, outcome.new_records = "forked", len(groups) - same


def _carries(event: Event) -> bool:
    if event.get("type") == RECORD_TYPE:
        return True
    meta = event.get("metadata")
    return (
        isinstance(meta, dict)
        and SOURCE_KEY in meta
        and event.get("type") != Kind.CONVERSATION_START
    )


# -- export -------------------------------------------------------------------------


class SessionExportError(UserError):
    """A conversation that cannot be written back as the tool's session files."""


@dataclass(frozen=True)
class Written:
    cid: str
    path: Path
    records: int


def _origin_of(events: Sequence[Event]) -> dict[str, Any] | None:
    start = next((e for e in reversed(events) if e.get("type") == Kind.CONVERSATION_START), None)
    imported = start.get("imported") if start else None
    return imported if isinstance(imported, dict) else None


def export_session(store: Store, cid: str, tool: str, dest: Path) -> list[Written]:
    """Write the session of ``cid`` (and its subagent streams) under ``dest`` at their
    paths relative to the tool's root, every kept record as a JSON line, in order."""
    events = store.load(cid).events
    origin = _origin_of(events)
    if origin is None or origin.get("format") != tool:
        raise SessionExportError(f"{cid} was not imported from {tool}")
    plan = [(cid, origin, events)]
    for sub in _subagents(store, cid, tool):
        sub_events = store.load(sub).events
        sub_origin = _origin_of(sub_events)
        if sub_origin is not None:
            plan.append((sub, sub_origin, sub_events))
    targets = []
    for owner, found, chain in plan:
        problem = rel_path_problem(found.get("path"))
        if problem:
            raise SessionExportError(f"{owner}: its recorded path cannot be written: {problem}")
        targets.append((owner, dest / str(found["path"]), records_of(chain)))
    for owner, path, recs in targets:
        if _would_lose(path, recs):
            raise SessionExportError(
                f"{path} exists and holds records {owner} does not",
                "move it away, or export to another folder with -o",
            )
    out = []
    for owner, path, recs in targets:
        write_records(path, recs)
        out.append(Written(owner, path, len(recs)))
    return out


def _subagents(store: Store, cid: str, tool: str) -> list[str]:
    located = store.refs(archived=None)
    facts = summaries(store, located)
    out = []
    for loc in located:
        s = facts[loc.tip]
        origin = s.get("imported_from") or {}
        if (
            s.get("start_id") == loc.cid
            and s.get("forked_from") == cid
            and origin.get("tool") == tool
            and origin.get("agent")
        ):
            out.append(loc.cid)
    return sorted(out)


def _would_lose(path: Path, records: Sequence[dict[str, Any]]) -> bool:
    """Whether writing ``records`` at ``path`` would drop a record the file holds."""
    try:
        there = read_lines(path, 1 << 62)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return bool(there.skipped) or there.records != list(records[: len(there.records)])


def write_records(path: Path, records: Sequence[dict[str, Any]]) -> None:
    """One JSON line per record, written beside the target and moved into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.jp-tmp")
    with open(temp, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
