"""`jp conversation import --from claude-code|codex` and `export --to ...`: the
command-line side of other tools' sessions (porcelain/app/sessions.py does the work)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from porcelain.app.sessions import FileOutcome, import_files
from porcelain.commands.context import App
from porcelain.errors import UserError
from porcelain.jpformat.sessionfiles import Found, claude_files, codex_files

NAMES = {"claude-code": "Claude Code", "codex": "Codex"}


def default_roots(tool: str) -> list[Path]:
    """The tool's own location: ``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/projects``;
    ``$CODEX_HOME`` (``~/.codex``), whose ``sessions`` and ``archived_sessions`` are read."""
    if tool == "claude-code":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return [Path(base) / "projects" if base else Path.home() / ".claude" / "projects"]
    base = os.environ.get("CODEX_HOME")
    return [Path(base) if base else Path.home() / ".codex"]


def find_files(tool: str, paths: tuple[Path, ...]) -> list[Found]:
    given = bool(paths)
    roots = list(paths) or default_roots(tool)
    files: list[Found] = []
    for root in roots:
        if not root.exists():
            where = "" if given else f" ({NAMES[tool]}'s own location)"
            raise UserError(
                f"{root}: no such file or folder{where}",
                f"give the folder {NAMES[tool]} keeps its sessions in: "
                "jp conversation import --from " + tool + " PATH",
            )
        files.extend(claude_files(root) if tool == "claude-code" else codex_files(root))
    seen: set[Path] = set()
    unique = []
    for found in files:
        key = found.path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(found)
    return [f for f in unique if not f.agent] + [f for f in unique if f.agent]


def changed_since(files: list[Found], moment: float) -> list[Found]:
    """The files modified at or after ``moment`` (seconds since the epoch)."""
    out = []
    for found in files:
        try:
            if found.path.stat().st_mtime >= moment:
                out.append(found)
        except OSError:
            out.append(found)  # named as unreadable by the import
    return out


def import_sessions(
    app: App, tool: str, paths: tuple[Path, ...], quiet: bool, since: str | None = None
) -> None:
    moment = _since(since) if since else None
    files = find_files(tool, paths)
    if moment is not None:
        files = changed_since(files, moment)
    store = app.store()
    bar = _Progress(app, len(files)) if not quiet and not app.output.json else None
    try:
        done = import_files(store, tool, files, app.limits(), bar.step if bar else None)
    finally:
        if bar:
            bar.clear()
    for outcome in done:
        for skip in outcome.skipped:  # every skipped line is named, --quiet or not
            app.output.note(f"{outcome.found.path}:{skip.line}: {skip.reason}")
        if outcome.error:
            app.output.note(f"{outcome.found.path}: cannot be read: {outcome.error}")
    app.output.emit(
        {"tool": tool, "files": [_row(o) for o in done], "summary": _counts(done)},
        None if quiet else _summary(tool, done),
    )


def _since(since: str) -> float:
    # lazy: only --since reads a time (the listing's parser)
    from porcelain import clock
    from porcelain.render.lsview import parse_since

    return parse_since(since, clock.now()).timestamp()


def _row(o: FileOutcome) -> dict[str, Any]:
    return {
        "path": str(o.found.path),
        "relative_path": o.found.rel,
        "id": o.cid,
        "action": o.action,
        "records": o.records,
        "new_records": o.new_records,
        "skipped_lines": [{"line": s.line, "reason": s.reason} for s in o.skipped],
        "still_being_written": o.pending,
        "rewind_branches": o.branches,
    }


def _counts(done: list[FileOutcome]) -> dict[str, int]:
    counts = dict.fromkeys(("imported", "updated", "forked", "unchanged", "empty", "unreadable"), 0)
    for o in done:
        counts[o.action] += 1
    counts["skipped_lines"] = sum(len(o.skipped) for o in done)
    counts["records"] = sum(o.new_records for o in done)
    counts["rewind_branches"] = sum(o.branches for o in done)
    return counts


def _summary(tool: str, done: list[FileOutcome]) -> str:
    c = _counts(done)
    parts = [f"{c['imported']} imported", f"{c['updated']} updated", f"{c['unchanged']} unchanged"]
    if c["forked"]:
        parts.append(f"{c['forked']} changed (kept as forks)")
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


class _Progress:
    """``files n/N, records R`` on stderr, rewritten in place (a terminal only)."""

    def __init__(self, app: App, total: int) -> None:
        self.app = app
        self.total = total
        self.count = 0
        self.records = 0
        self.on = app.output.is_terminal() and total > 1

    def step(self, outcome: FileOutcome) -> None:
        self.count += 1
        self.records += outcome.records
        if self.on:
            self.app.output.err.write(f"\rfiles {self.count}/{self.total}, records {self.records}")
            self.app.output.err.flush()

    def clear(self) -> None:
        if self.on and self.count:
            self.app.output.err.write("\r\033[K")
            self.app.output.err.flush()


def export_sessions(app: App, tool: str, target: str | None, dest: Path) -> None:
    # lazy: an import, the frequent call, does not load the export side
    from porcelain.app.session_export import export_session
    from porcelain.app.targets import resolve

    store = app.store()
    loc = resolve(store, target)
    written = export_session(store, loc.cid, tool, dest)
    if app.output.emit_json(
        {
            "id": loc.cid,
            "output": str(dest),
            "files": [{"id": w.cid, "path": str(w.path), "records": w.records} for w in written],
        }
    ):
        return
    for w in written:
        app.output.line(f"Exported {w.cid} ({w.records} records) to {w.path}")
