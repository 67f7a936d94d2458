"""`jp conversation scan` and `jp conversation redact`: secrets found, and taken out."""

from __future__ import annotations

import click

from porcelain.app.redaction import chosen_allow, findings, redact_meta
from porcelain.app.redaction import redact as redact_one
from porcelain.app.secretcheck import kinds_line
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.domain.secretscan import KINDS
from porcelain.errors import UsageError
from porcelain.render.output import untrusted_field


@click.command()
@click.argument("targets", nargs=-1)
@click.option("--all-findings", is_flag=True, help="Also list what [secrets.allow] lets through.")
@click.pass_obj
def scan(app: App, targets: tuple[str, ...], all_findings: bool) -> None:
    """List the secrets found in conversations (default: the active one).

    Each finding is named by turn, event and kind with a masked preview; the
    value itself is never shown.  `-F json` gives each finding's hash, the key
    of an exception in [secrets.allow] (docs/security.md).
    """
    store = app.store()
    allow = chosen_allow(app, all_findings)
    found = []
    for cid in dict.fromkeys(resolve(store, t).cid for t in targets or (None,)):
        found += findings(store, cid, allow)

    def text() -> None:
        for f in found:
            where = f"turn {f.turn}, event {f.event + 1} ({f.event_type}), {untrusted_field(f.path)}"
            app.output.line(f"{f.conversation}: {f.kind} at {where}: {untrusted_field(f.finding.preview)}")
        if not found:
            app.output.line("No secrets found.")

    app.output.emit([f.as_json() for f in found], text)


@click.command()
@click.argument("targets", nargs=-1, required=True)
@click.option("--all-findings", is_flag=True, help="Also redact what [secrets.allow] lets through.")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    metavar="KIND",
    help="Redact only findings of KIND (repeatable; `jp conversation scan` names them).",
)
@click.pass_obj
def redact(app: App, targets: tuple[str, ...], all_findings: bool, kinds: tuple[str, ...]) -> None:
    """Replace the secrets in conversations with `[redacted: KIND]`.

    The chain is written again from the first event that holds one (commit ids
    change from there), so only events no remote has yet can be redacted; a
    conversation already pushed is refused (docs/security.md says how to
    rewrite a remote's copy).  `jp undo` restores the original here; the
    original never travels.  Imported session records are redacted the same
    way, so `export --to` then writes redacted files.  Secrets in the
    conversation's metadata (titles, labels, their old values) are taken out
    too, and the metadata history not yet pushed is folded into one commit, so
    that `jp push` no longer holds the metadata back.
    """
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise UsageError(f"no kind of secret named {untrusted_field(unknown[0])}", f"kinds: {', '.join(KINDS)}")
    store = app.store()
    allow = chosen_allow(app, all_findings)
    done = []
    for cid in dict.fromkeys(resolve(store, t).cid for t in targets):
        done.append((redact_one(store, cid, allow, kinds), redact_meta(store, cid, allow, kinds)))

    def text() -> None:
        for r, meta in done:
            if r.count:
                app.output.line(f"{r.cid}: redacted {kinds_line(r.counts)} (from event {r.first_event + 1} on)")
            if meta:
                app.output.line(f"{r.cid}: redacted {kinds_line(meta)} in its metadata (titles, labels)")
            if not r.count and not meta:
                app.output.line(f"{r.cid}: nothing to redact")
        if any(r.count or meta for r, meta in done):
            app.output.note("`jp undo` restores the original here (one undo for each change).")

    app.output.emit([{**r.as_json(), "metadata": dict(sorted(m.items()))} for r, m in done], text)
