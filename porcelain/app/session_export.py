"""Writing an imported session back as the tool's own files (`export --to`)."""

from __future__ import annotations

import json
import os
import re
import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitstore import Event, Kind, Store, files, parse_time
from porcelain.app import session_sidefiles as sidefiles
from porcelain.app.describe import imported_facts, summaries
from porcelain.app.redaction import redacted_records
from porcelain.app.session_branches import BrokenBranches, session_records
from porcelain.domain.secretevents import AllowList
from porcelain.domain.sessionfiles import rel_path_problem
from porcelain.errors import UserError
from porcelain.jpformat import giveback
from porcelain.jpformat.sessionlines import read_lines, valid_time


class SessionExportError(UserError):
    """A conversation that cannot be written back as the tool's session files."""


@dataclass(frozen=True)
class Written:
    cid: str
    path: Path
    records: int
    jp_turns: int = 0  # turns added in jp (`q -i`), which the tool's file does not hold
    secrets: Counter[str] = field(default_factory=Counter)  # the kinds redacted (``redact``)
    session: str | None = None  # the session id to resume (a session's own file only)
    cwd: str | None = None  # the folder its records name (where to resume it)


def jp_turns(tool: str, events: Sequence[Event]) -> int:
    """The prompts of a chain that no record of the tool's file made (added in jp):
    its requests less those its records map to."""
    # lazy: the mappers, for an export only
    from porcelain.jpformat import claude_code, codex
    from porcelain.jpformat.sessionmap import records_of

    records = records_of(events)
    if tool == codex.TOOL:
        groups = codex.map_records(records).groups
    else:
        groups = claude_code.map_records(records).groups
    mapped = sum(1 for g in groups for e in g if e.get("type") == Kind.CHAT_REQUEST)
    stored = sum(1 for e in events if e.get("type") == Kind.CHAT_REQUEST)
    return max(0, stored - mapped)


def export_session(
    store: Store,
    cid: str,
    tool: str,
    dest: Path,
    cwd: str,
    follow: bool = True,
    redact: AllowList | None = None,
    max_line: int | None = None,
) -> list[Written]:
    """Write the session of ``cid`` (and its subagent streams) under ``dest`` at their
    paths relative to the tool's root, every kept record as a JSON line, in order (a
    rewound session's branches put back in their places; a branch exports its session),
    with the turns added in jp as the tool's records.  A conversation not imported from
    ``tool`` (a fork of a session, or jp's own) is a session of its own (``cwd``: the
    folder it is given to when no record names one).  With ``redact``, every secret it
    does not allow is replaced (``app/redaction.py``).  ``max_line``: the longest line
    jp's import reads (``sessionlines.line_limit``), which jp's turns keep within."""
    events = store.log.load(cid).events
    other = giveback.foreign(tool, events)
    if other is not None:
        raise SessionExportError(
            f"{cid} was not imported from {tool}: it holds {other}'s records, which cannot "
            f"be written as {tool}'s",
            f"export it with --to {other}",
        )
    if giveback.own_session(tool, cid, events):
        return [_export_own(cid, tool, events, dest, cwd, redact, max_line)]
    origin = giveback.origin_of(events)
    assert origin is not None
    branch = imported_facts(origin)["imported_from"]["branch"]
    if branch is not None and follow and store.refs.exists(branch["of"]):
        return export_session(
            store, branch["of"], tool, dest, cwd, follow=False, redact=redact, max_line=max_line
        )
    related = _related(store, tool)
    plan = [(cid, origin, events)]
    for sub in related.subagents.get(cid, []):
        sub_events = store.log.load(sub).events
        sub_origin = giveback.origin_of(sub_events)
        if sub_origin is not None:
            plan.append((sub, sub_origin, sub_events))
    targets = []
    for owner, found, chain in plan:
        problem = rel_path_problem(found.get("path"))
        if problem:
            raise SessionExportError(f"{owner}: its recorded path cannot be written: {problem}")
        branches = [store.log.load(b).events for b in related.branches.get(owner, [])]
        side, kinds = sidefiles.kept(chain), Counter[str]()
        if branches:  # a rewound session: its records in their places, jp's turns named
            try:
                recs = session_records(chain, branches)
            except BrokenBranches as exc:
                raise SessionExportError(f"{owner} cannot be exported: {exc}") from None
            left = jp_turns(tool, chain)
        else:
            recs = [p.record for p in giveback.plan(tool, owner, chain, cwd, max_line)[1]]
            left = 0
        if redact is not None:
            recs, side, kinds = redacted_records(owner, recs, side, redact)
        targets.append((owner, dest / str(found["path"]), recs, side, left, kinds))
    _check_all(dest, targets)
    out = []
    for owner, path, recs, side, added, kinds in targets:
        _folders(dest, path.parent)
        for name, data in side.items():
            files.write_atomic(path.parent / name, data, durable=True, mode=PRIVATE)
        write_records(path, recs)
        main = owner == cid and not origin.get("agent")
        session = str(origin.get("session") or "") or None if main else None
        where = giveback.file_cwd(tool, recs) or None if main else None
        out.append(Written(owner, path, len(recs), added, kinds, session, where))
    return out


Target = tuple[str, Path, list[dict[str, Any]], dict[str, bytes], int, Counter[str]]


def _check_all(dest: Path, targets: Sequence[Target]) -> None:
    for owner, path, recs, side, *_ in targets:
        _check_place(dest, path, [path.parent / name for name in side])
        if _would_lose(path, recs):
            raise SessionExportError(
                f"{path} exists and holds records {owner} does not",
                "move it away, or export to another folder with -o",
            )


def _export_own(
    cid: str,
    tool: str,
    events: Sequence[Event],
    dest: Path,
    cwd: str,
    redact: AllowList | None,
    max_line: int | None,
) -> Written:
    """A fork of a session, or a conversation of jp's own, as a session of its own."""
    context, pieces = giveback.plan(tool, cid, events, cwd, max_line)
    recs, kinds = [p.record for p in pieces], Counter[str]()
    if not any(p.jp for p in pieces) and not any(
        e.get("type") == Kind.CHAT_REQUEST for e in events
    ):
        raise SessionExportError(f"{cid} has no turns to write", "add one with `jp q -i ID`")
    if redact is not None:
        recs, _, kinds = redacted_records(cid, recs, {}, redact)
    path = dest / own_path(tool, context.session, events, recs, context.cwd)
    _check_all(dest, [(cid, path, recs, {}, 0, kinds)])
    _folders(dest, path.parent)
    write_records(path, recs)
    return Written(cid, path, len(recs), 0, kinds, context.session, context.cwd or None)


def own_path(
    tool: str, session: str, events: Sequence[Event], recs: Sequence[dict[str, Any]], cwd: str
) -> str:
    """Where a session of its own goes under the tool's root: Claude Code's project
    folder of the session it was forked from (else of ``cwd``, named as Claude Code
    names it), Codex's day folder of its first record."""
    if tool == giveback.CODEX:
        stamp = str(recs[0].get("timestamp") or "") if recs else ""
        when = parse_time(stamp) if valid_time(stamp) else parse_time("1970-01-01T00:00:00Z")
        day = when.strftime("%Y/%m/%d")
        return f"sessions/{day}/rollout-{when.strftime('%Y-%m-%dT%H-%M-%S')}-{session}.jsonl"
    project = None
    for event in events:
        imported = event.get("imported") if event.get("type") == Kind.CONVERSATION_START else None
        path = imported.get("path") if isinstance(imported, dict) else None
        if isinstance(path, str) and "/" in path and rel_path_problem(path) is None:
            project = path.split("/", 1)[0]
            break
    if project is None:
        project = re.sub(r"[^A-Za-z0-9]", "-", cwd) or "-"
    return f"{project}/{session}.jsonl"


PRIVATE = 0o600  # what Claude Code and Codex give their session files: tool output, file contents
PRIVATE_FOLDER = 0o700


def _check_place(dest: Path, path: Path, beside: Sequence[Path]) -> None:
    """Refuse a folder link on the way from ``dest`` to ``path`` (it could lead out of
    ``dest``), and anything at a target that is not a regular file (a FIFO would block)."""
    try:
        rel = path.parent.relative_to(dest)
    except ValueError:
        raise SessionExportError(f"{path} is not under {dest}") from None
    here = dest
    for part in rel.parts:
        here = here / part
        if here.is_symlink():
            raise SessionExportError(
                f"{here} is a link: export never follows a link out of -o",
                "export to a folder without links in it, with -o",
            )
    for target in (path, *beside):
        try:
            mode = target.lstat().st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SessionExportError(f"{target}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(mode):
            raise SessionExportError(
                f"{target} exists and is not a regular file",
                "move it away, or export to another folder with -o",
            )


def _folders(dest: Path, folder: Path) -> None:
    """Make the folders from ``dest`` down to ``folder`` that are missing, private."""
    if not dest.exists():
        dest.mkdir(mode=PRIVATE_FOLDER, parents=True)
    missing = [p for p in (folder, *folder.parents) if dest in p.parents]
    for part in reversed(missing):
        if not part.exists():
            part.mkdir(mode=PRIVATE_FOLDER, exist_ok=True)


@dataclass
class _Related:
    subagents: dict[str, list[str]] = field(default_factory=dict)  # session -> its streams
    branches: dict[str, list[str]] = field(default_factory=dict)  # session -> rewind branches


def _related(store: Store, tool: str) -> _Related:
    """The subagent streams and rewind branches of every imported session of ``tool``."""
    located = store.refs.list(archived=None)
    facts = summaries(store, located)
    out = _Related()
    for loc in sorted(located, key=lambda x: x.cid):
        s = facts[loc.tip]
        origin = s.get("imported_from") or {}
        if s.get("start_id") != loc.cid or origin.get("tool") != tool:
            continue
        if origin.get("branch"):
            out.branches.setdefault(origin["branch"]["of"], []).append(loc.cid)
        elif origin.get("agent") and s.get("forked_from"):
            out.subagents.setdefault(s["forked_from"], []).append(loc.cid)
    return out


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
    """One JSON line per record, written beside the target and moved into place,
    readable by its owner only and dated by its last record (the tools' `--continue`
    picks the session used last by the files' times)."""
    text = "".join(
        json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n" for record in records
    )
    files.write_atomic(path, text, durable=True, mode=PRIVATE)
    when = last_time(records)
    if when is not None:
        os.utime(path, (when, when))


def last_time(records: Sequence[dict[str, Any]]) -> float | None:
    """The latest ``timestamp`` of the records (a Codex record's too), in seconds."""
    found: float | None = None
    for record in records:
        stamp = valid_time(record.get("timestamp"))
        if stamp is None:
            continue
        moment = parse_time(stamp).timestamp()
        found = moment if found is None or moment > found else found
    return found
