"""`jp conversation import` and `export`: JP's folder layout in and out."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import click

from porcelain.commands.context import App
from porcelain.commands.importjp import import_jp
from porcelain.errors import UsageError

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
    import_jp(app, folders, activate)


def _detected(paths: tuple[Path, ...]) -> str:
    """The format of the first PATH that names one (a JP folder stays what it is)."""
    # lazy: only an import without --from looks at the files
    from porcelain.domain.sessionfiles import detect

    for path in paths:
        found = detect(path)
        if found:
            return found
    return "jp"


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
