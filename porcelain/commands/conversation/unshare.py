"""`jp conversation unshare ID --remote NAME`: delete a shared copy on its remote."""

from __future__ import annotations

import click

from porcelain.app.targets import resolve
from porcelain.commands.context import App


@click.command()
@click.argument("target", required=False)
@click.option("--remote", metavar="NAME", required=True, help="The git remote it was shared on.")
@click.pass_obj
def unshare(app: App, target: str | None, remote: str) -> None:
    """Delete the copy `jp conversation share --remote` pushed (default: the active one).

    The branch `jp-shared/ID` is deleted on the remote only if it still holds
    what was just listed there, then this store's record of the share.  What
    others fetched or cloned meanwhile stays with them (docs/security.md).
    `jp undo` brings back the record here, not the remote's copy: share again
    for that.
    """
    # lazy: the sync machinery loads only here
    from porcelain.app import sharing
    from porcelain.commands.sync import remote_syncer

    store = app.store()
    cid = resolve(store, target).cid
    done = sharing.unshare(store, remote_syncer(app, remote), cid)
    branch = done.ref.removeprefix("refs/heads/")
    app.output.emit(
        {"id": cid, "remote": remote, "ref": done.ref, "deleted": done.before},
        f"Deleted {branch} on {remote}"
        if done.before
        else f"{cid} was no longer on {remote}; the record of its share here is removed",
    )
