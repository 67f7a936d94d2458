"""Writing an imported session back as the tool's own files (`export --to`)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitstore import Event, Kind, Store
from porcelain.app.describe import summaries
from porcelain.errors import UserError
from porcelain.jpformat.sessionfiles import rel_path_problem
from porcelain.jpformat.sessionlines import read_lines
from porcelain.jpformat.sessionmap import records_of


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
    events = store.log.load(cid).events
    origin = _origin_of(events)
    if origin is None or origin.get("format") != tool:
        raise SessionExportError(f"{cid} was not imported from {tool}")
    plan = [(cid, origin, events)]
    for sub in _subagents(store, cid, tool):
        sub_events = store.log.load(sub).events
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
    located = store.refs.list(archived=None)
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
