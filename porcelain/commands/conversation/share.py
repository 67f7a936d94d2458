"""`jp conversation share`: a conversation as one HTML page, or pushed to a share
remote, its secrets redacted either way."""

from __future__ import annotations

from pathlib import Path

import click

from gitstore import files
from porcelain.app.redaction import redacted_copy
from porcelain.app.secretcheck import kinds_line
from porcelain.app.targets import resolve
from porcelain.commands.context import App
from porcelain.domain.secretevents import redact_text
from porcelain.errors import UsageError


@click.command()
@click.argument("target", required=False)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
    help="The HTML file to write (replaced if it exists).",
)  # fmt: skip
@click.option(
    "--remote", metavar="NAME",
    help="Push the conversation, redacted, to this git remote as the branch "
    "jp-shared/ID instead (jp's pull never fetches it).",
)  # fmt: skip
@click.pass_obj
def share(app: App, target: str | None, output: Path | None, remote: str | None) -> None:
    """Share a conversation, its secrets redacted (default: the active one).

    With `-o FILE`: one self-contained HTML page, the web view's transcript
    (`jp serve`): Markdown rendered, reasoning and tool calls folded, its
    stylesheet inline, and nothing loaded from anywhere when it is opened.

    With `--remote NAME`: its events, as a chain of their own, pushed to the
    branch `jp-shared/ID` of the git remote NAME (`git clone` fetches it; jp's
    pull never does, so a remote you also sync with keeps it apart).  Sharing
    again replaces it; `jp conversation unshare ID --remote NAME` deletes it
    there.  `jp undo` takes back only this store's record of it.

    Every secret the scanner finds is replaced by `[redacted: KIND]` (the
    conversation itself is unchanged; docs/security.md says what the scanner
    does not catch: read what you share before you send it).
    """
    if (output is None) == (remote is None):
        raise UsageError(
            "give one of -o FILE and --remote NAME",
            "`jp conversation share ID -o page.html`, or `--remote NAME` for a git remote",
        )
    if remote is not None:
        _to_remote(app, target, remote)
        return
    assert output is not None
    store = app.store()
    where = resolve(store, target)
    conversation = store.log.load(where.cid)
    events, counts = redacted_copy(where.cid, list(conversation.events))
    title = redact_text(str(store.notes.meta(where.cid).get("title") or "(untitled)"))
    # lazy: the page modules and pygments load only for a share
    from porcelain.serve.share import page

    note = f"{sum(counts.values())} secret(s) redacted." if counts else "No secret found."
    files.write_atomic(output, page(title, where.cid, events, note))
    app.output.emit(
        {"id": where.cid, "output": str(output), "redacted": dict(sorted(counts.items()))},
        f"Wrote {output}" + (f" ({kinds_line(counts)} redacted)" if counts else ""),
    )


def _to_remote(app: App, target: str | None, remote: str) -> None:
    # lazy: the sync machinery loads only for a share to a remote
    from porcelain.app import sharing
    from porcelain.commands.sync import remote_syncer

    store = app.store()
    cid = resolve(store, target).cid
    syncer = remote_syncer(app, remote)
    done, counts = sharing.share(store, syncer, cid)
    branch = done.ref.removeprefix("refs/heads/")
    said = "already there, unchanged" if done.before == done.now else f"pushed as {branch}"
    app.output.emit(
        {"id": cid, "remote": remote, "ref": done.ref, "commit": done.now,
         "replaced": done.before if done.before != done.now else None,
         "redacted": dict(sorted(counts.items()))},  # fmt: skip
        f"Shared {cid} on {remote}: {said}" + (f" ({kinds_line(counts)} redacted)" if counts else ""),
    )
    app.output.note(
        f"`jp conversation unshare {cid} --remote {remote}` deletes it there; "
        "`jp undo` takes back only this store's record of the share"
    )
