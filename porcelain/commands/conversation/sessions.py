"""`jp conversation import --from claude-code|codex` and `export --to ...`: the
command-line side of other tools' sessions (porcelain/app/sessions.py does the work)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from porcelain.app.session_summary import config_mark, keep_summary
from porcelain.app.sessions import FileOutcome, import_files
from porcelain.commands.context import App
from porcelain.domain import sessionreport as report
from porcelain.domain.escaping import escape_untrusted
from porcelain.domain.sessionfiles import Found, find_files

if TYPE_CHECKING:
    from porcelain.domain.secretevents import AllowList


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
    refused: list[str] = []
    deeper: list[Path] = []
    files = find_files(tool, paths, refused, deeper)
    for line in refused:  # named, --quiet or not: the hook's import hides nothing it left out
        app.output.note(f"{line}: left out")
    _name_deeper(app, deeper)
    if moment is not None:
        files = changed_since(files, moment)
    app.machine_neutral = True  # the same session makes the same commits on every machine
    store = app.store()
    mark = config_mark(app.environ, store)  # before the configuration is read
    bar = _Progress(app, len(files)) if not quiet and not app.output.json else None
    # the records redacted as they are read (docs/security.md); the scanner loads only then
    redact = app.config(warn=False).get("redaction.on_import") is True
    try:
        done = import_files(store, tool, files, app.limits(), bar.step if bar else None, redact)
    finally:
        if bar:
            bar.clear()
    if moment is None:
        keep_summary(store, tool, paths, done, mark)
    for outcome in done:
        for skip in outcome.skipped:  # the first skipped lines are named, --quiet or not
            app.output.note(f"{outcome.found.path}:{skip.line}: {skip.reason}")
        if outcome.more_skipped:
            app.output.note(f"{outcome.found.path}: {outcome.more_skipped:,} more lines skipped")
        if outcome.error:
            app.output.note(f"{outcome.found.path}: cannot be read: {outcome.error}")
        for note in outcome.notes:
            app.output.note(f"{note}: left out")
    app.output.emit(report.result(tool, done), None if quiet else report.summary(tool, done))


DEEPER_SHOWN = 3


def _name_deeper(app: App, deeper: list[Path]) -> None:
    """Session files one folder deeper than the import reads: a count, the first few."""
    if not deeper:
        return
    many = len(deeper) != 1
    app.output.note(
        f"{len(deeper):,} session file{'s' if many else ''} one folder deeper than jp reads "
        f"{'were' if many else 'was'} not imported, for instance:"
    )
    for path in deeper[:DEEPER_SHOWN]:
        app.output.note(f"  {path}")
    app.output.note(
        f"  import {'their' if many else 'its'} folder itself: "
        f"`jp conversation import --from claude-code {deeper[0].parent.parent}`"
    )


def _since(since: str) -> float:
    # lazy: only --since reads a time (the listing's parser)
    from porcelain import clock
    from porcelain.render.lsview import parse_since

    return parse_since(since, clock.now()).timestamp()


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


def export_sessions(
    app: App, tool: str, target: str | None, dest: Path, redact: AllowList | None = None
) -> None:
    # lazy: an import, the frequent call, does not load the export side
    from porcelain.app.session_export import export_session
    from porcelain.app.targets import resolve
    from porcelain.jpformat.sessionlines import line_limit

    store = app.store()
    loc = resolve(store, target)
    max_line = line_limit(app.limits().max_event_bytes)
    written = export_session(
        store, loc.cid, tool, dest, os.getcwd(), redact=redact, max_line=max_line
    )
    if app.output.emit_json(
        {
            "id": loc.cid,
            "output": str(dest),
            "files": [
                {
                    "id": w.cid,
                    "path": str(w.path),
                    "records": w.records,
                    "jp_turns": w.jp_turns,
                    "secrets": dict(sorted(w.secrets.items())),
                    "session": w.session,
                    "cwd": w.cwd,
                }
                for w in written
            ],
            "redacted": redact is not None,
        }
    ):
        return
    for w in written:
        n = sum(w.secrets.values())
        gone = f", {n} secret(s) redacted" if n else ""
        app.output.line(f"Exported {w.cid} ({w.records} records) to {w.path}{gone}")
        if w.session:  # from the records: data, escaped
            resume = "claude --resume" if tool == "claude-code" else "codex resume"
            place = f" in {escape_untrusted(w.cwd, one_line=True)}" if w.cwd else ""
            app.output.line(
                f"  resume it: {resume} {escape_untrusted(w.session, one_line=True)}{place}"
            )
        if w.jp_turns:
            s = "s" if w.jp_turns != 1 else ""
            app.output.note(
                f"note: {w.jp_turns} turn{s} added in jp {'are' if s else 'is'} not in "
                f"{w.path.name}: the tool will not see {'them' if s else 'it'}"
            )
