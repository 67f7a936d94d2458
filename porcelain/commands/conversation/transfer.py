"""`jp conversation import` and `export`: JP's folder layout in and out."""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gitstore import activity
from porcelain.commands.context import App
from porcelain.errors import UsageError, UserError

if TYPE_CHECKING:
    from porcelain.jpformat import JpFolder
    from porcelain.render.progress import ReadProgress

SESSION_TOOLS = ("claude-code", "codex")


@click.command("import")
@click.argument("folders", metavar="[PATH]...", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--from",
    "source",
    type=click.Choice(["jp", *SESSION_TOOLS]),
    help="What PATH holds: JP folders, or Claude Code or Codex sessions (default: detected).",
)
@click.option("--activate", is_flag=True, help="Make the (last) imported conversation active.")
@click.option("-q", "--quiet", is_flag=True, help="Sessions: no progress and no summary line.")
@click.option(
    "--since", metavar="WHEN", help="Sessions: only files changed since WHEN (30m, 2h, 2026-01-05)."
)
@click.pass_obj
def import_(
    app: App,
    folders: tuple[Path, ...],
    source: str | None,
    activate: bool,
    quiet: bool,
    since: str | None,
) -> None:
    """Import JP conversation folders, or Claude Code and Codex sessions.

    JP folders (events.json, metadata.json): every folder is read and checked
    before anything is written; a malformed file is refused with its path and
    the reason.  A conversation keeps its JP id when it is free (else it gets a
    new one, and the line says so); a folder already imported is not imported
    again.  Prints the ids.

    Sessions (`--from claude-code|codex`): PATH is the tool's root
    (~/.claude/projects, $CODEX_HOME), a folder in it or one file; without
    PATH, the tool's own location.  Each session file is one conversation
    (each Claude Code subagent stream one more, listed by `ls --all`), every
    record kept.  Importing again appends what the tool added since; a line
    that cannot be read is named as FILE:LINE and skipped; `--since` reads only
    the files changed since then.  See docs/sessions.md.
    """
    tool = source or _detected(folders)
    if tool in SESSION_TOOLS:
        # lazy: only a session import loads the session mappers
        from porcelain.commands.conversation.sessions import import_sessions

        import_sessions(app, tool, folders, quiet, since)
        return
    if since:
        raise UsageError("--since is for sessions", "add --from claude-code or --from codex")
    if not folders:
        raise UsageError(
            "give the folders to import",
            "jp conversation import FOLDER..., or --from claude-code|codex for those sessions",
        )
    _import_jp(app, folders, activate)


def _detected(paths: tuple[Path, ...]) -> str:
    """The format of the first PATH that names one (a JP folder stays what it is)."""
    # lazy: only an import without --from looks at the files
    from porcelain.domain.sessionfiles import detect

    for path in paths:
        found = detect(path)
        if found:
            return found
    return "jp"


def _import_jp(app: App, folders: tuple[Path, ...], activate: bool) -> None:
    for folder in folders:
        if not folder.is_dir():
            raise UserError(
                f"{folder}: not a folder",
                "give a JP conversation folder (one that holds events.json and metadata.json)",
            )
    # lazy: a session import (the hooks' frequent call) never reads JP folders
    from porcelain.jpformat import scan_conversation
    from porcelain.render.progress import ReadProgress

    limits = app.limits()
    progress = ReadProgress(app.output, "import")
    try:
        # every folder read and checked first; its events are then read again as written
        read = [scan_conversation(folder, limits, progress) for folder in folders]
        if app.config(warn=False).get("redaction.on_import") is True:  # docs/security.md
            from porcelain.app.redaction import redacted_folder  # lazy: the scanner, when asked

            read = [redacted_folder(conv) for conv in read]
        _write_jp(app, folders, read, activate, progress)
    finally:
        progress.clear()


def _counted(conv: JpFolder, progress: ReadProgress, verb: str) -> None:
    """The progress line counts the next pass over ``conv``'s events as ``verb``."""
    # lazy: with the JP folder reader, loaded by _import_jp
    from porcelain.jpformat import EventFile

    if isinstance(conv.events, EventFile):
        conv.events.on_event = progress.counting(verb)


def _write_jp(
    app: App,
    folders: tuple[Path, ...],
    read: list[JpFolder],
    activate: bool,
    progress: ReadProgress,
) -> None:
    # lazy: only an import reads the re-import records
    from porcelain.app.reimport import already_there, outcome
    from porcelain.app.transfer import store_imported, unfinished_metas

    store = app.store()
    created: list[dict[str, Any]] = []
    kept_ids: list[str | None] = []
    titles: dict[str, dict[str, Any]] = {}
    # one set of packs and one ref update for the whole command, not one per folder
    with store.log.batch() as batch:
        for folder, conv in zip(folders, read, strict=True):
            if conv.jp_id and batch.pending_ids(conv.jp_id):
                batch.flush()  # the same folder twice: the second compares with the first
            _counted(conv, progress, "compared")
            kept = already_there(store, conv.jp_id, conv.events)
            _counted(conv, progress, "wrote")
            cid = kept or store_imported(store, conv, titles)
            kept_ids.append(kept)
            progress.clear()
            created.append({"id": cid, "folder": str(folder), "events": len(conv.events)})
        batch.flush()
    for row, conv, kept in zip(created, read, kept_ids, strict=True):
        # an id another writer took as the batch was written: created under a fresh one
        row["id"] = batch.renamed.get(row["id"], row["id"])
        row.update(outcome(conv.jp_id, row["id"], kept))
    titles = {batch.renamed.get(c, c): meta for c, meta in titles.items()}
    titles.update(unfinished_metas(store, {k: c for c, k in zip(read, kept_ids, strict=True) if k}))
    if titles:
        store.notes.set_metas(titles, "jp: metadata of imported conversations")
    if any(not kept for kept in kept_ids):
        store.local.maintain()  # git gc --auto in the background, when past git's limits
    app.output.text(partial(_imported, app, created))
    if activate and created:
        store.refs.set_active(str(created[-1]["id"]))
        activity.record_activation(store, str(created[-1]["id"]))
    app.output.emit(created)


def _imported(app: App, created: list[dict[str, Any]]) -> None:
    """stdout: the ids, one a line (written together, not a write each); what happened
    to one not imported as it was on stderr, after its line."""
    lines: list[str] = []
    for done in created:
        cid = done["id"]
        lines.append(cid)
        if done["action"] == "imported":
            continue
        app.output.lines(lines)
        lines = []
        if done["action"] == "unchanged":
            app.output.note(f"{cid}: already in the store (imported before); nothing written")
        else:
            app.output.note(f"{cid}: a new id, since {done['jp_id']} is another conversation here")
    app.output.lines(lines)


@click.command()
@click.argument("target", required=False)
@click.option(
    "-o",
    "--output",
    "dest",
    required=True,
    type=click.Path(path_type=Path),
    help="The folder to write (JP's layout, or the tool's root for --to).",
)
@click.option(
    "--to",
    "fmt",
    type=click.Choice(["jp", *SESSION_TOOLS]),
    default="jp",
    show_default=True,
    help="JP's folder layout, or an imported session's own files.",
)
@click.option(
    "--redact",
    is_flag=True,
    help="Replace each secret found with [redacted: KIND] in what is written "
    "(JP's layout, or the session's records with --to; docs/security.md).",
)
@click.pass_obj
def export(app: App, target: str | None, dest: Path, fmt: str, redact: bool) -> None:
    """Write a conversation in JP's folder layout, which JP and `import` read.

    With `--to claude-code|codex`, a conversation imported from that tool is
    written back as its session files (Claude Code's subagent streams too) at
    their paths under DIR, every record as it was, and the turns added in jp
    as the tool's records: export into ~/.claude/projects or $CODEX_HOME to
    resume it there. A fork of a session, or a conversation never imported,
    becomes a session of its own (Claude Code's project of the folder the
    export runs in when it has none; docs/sessions.md).  Either way a warning
    names the secrets written (kinds and counts); `--redact` writes
    [redacted: KIND] in their place instead.
    """
    if fmt in SESSION_TOOLS:
        # lazy: only a session export loads the session modules
        from porcelain.app.secretcheck import allow_list  # lazy: the user's allow-list
        from porcelain.commands.conversation.sessions import export_sessions

        export_sessions(app, fmt, target, dest, allow_list(app) if redact else None)
        if not redact:
            _warn_of_secrets(app, target, dest)
        return
    # lazy: the JP layout's writer, not loaded by a session import
    # lazy: the scanner and the allow-list's reader, for an export only
    from porcelain.app.secretcheck import allow_list, kinds_line
    from porcelain.app.targets import resolve
    from porcelain.app.transfer import export_conversation

    store = app.store()
    loc = resolve(store, target)
    count, found = export_conversation(store, loc, dest, allow_list(app), redact)
    n = sum(found.values())
    app.output.emit(
        {"id": loc.cid, "output": str(dest), "events": count, "secrets": dict(sorted(found.items())),
         "redacted": redact},
        f"Exported {loc.cid} ({count} events) to {dest}" + (f", {n} secret(s) redacted" if redact and n else ""),
    )  # fmt: skip
    if n and not redact:
        app.output.note(
            f"warning: {dest} holds {n} secret(s) of {loc.cid} ({kinds_line(found)}); "
            "keep it on this machine, or export with --redact"
        )


def _warn_of_secrets(app: App, target: str | None, dest: Path) -> None:
    """A session written back as stored says so when it holds secrets (the same
    machine's tool may need them: a warning, not a refusal)."""
    # lazy: the scanner, for an export only
    from porcelain.app.redaction import findings
    from porcelain.app.secretcheck import allow_list, kinds_line
    from porcelain.app.targets import resolve
    from porcelain.domain.secretscan import PLACEHOLDER_MARK

    store = app.store()
    cid = resolve(store, target).cid
    events = store.log.load(cid).events
    if any(PLACEHOLDER_MARK in json.dumps(e.get("metadata") or {}) for e in events):
        app.output.note(f"note: {cid} was redacted: its records hold [redacted: KIND] placeholders")
    found = Counter(f.kind for f in findings(store, cid, allow_list(app)))
    if found:
        app.output.note(
            f"warning: {dest} holds {sum(found.values())} secret(s) of {cid} ({kinds_line(found)}); "
            f"keep it on this machine, or `jp conversation redact {cid}` before exporting"
        )
