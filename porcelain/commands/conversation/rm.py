"""`jp conversation rm`."""

from __future__ import annotations

import click

from gitstore import syncing
from porcelain.app.targets import active_id, resolve
from porcelain.commands.context import App
from porcelain.errors import Declined
from porcelain.render.output import untrusted_field


@click.command()
@click.argument("targets", nargs=-1)
@click.option("-y", "--yes", "--no-confirm", "yes", is_flag=True, help="Do not ask.")
@click.pass_obj
def rm(app: App, targets: tuple[str, ...], yes: bool) -> None:
    """Delete conversations from this store (after a confirmation).

    `jp undo` brings them back.  A remote that has one keeps it, and the next
    pull brings it back: `jp push --delete ID` deletes it there and here.  To
    keep a conversation out of the way without losing it, `archive` it instead.
    """
    store = app.store()
    # two prefixes of one id name it once
    locs = list({loc.cid: loc for loc in (resolve(store, t) for t in targets or (None,))}.values())
    names = ", ".join(loc.cid for loc in locs)
    if not app.confirm(f"Delete {names}? (`jp undo` brings it back)", yes):
        raise Declined("nothing was deleted")
    active = active_id(store)
    titles = {loc.cid: store.notes.meta(loc.cid).get("title") for loc in locs}
    held = {loc.cid: syncing.remotes_holding(store, loc.cid) for loc in locs}
    for loc in locs:
        store.refs.delete(loc.cid, f"jp conversation rm {loc.cid}")
        if loc.cid == active:
            store.refs.set_active(None)
    if app.output.emit_json({"removed": [loc.cid for loc in locs], "on_remotes": held}):
        return
    for loc in locs:
        title = titles[loc.cid]
        app.output.line(f"Removed {loc.cid}" + (f": {untrusted_field(title)}" if title else ""))
    app.output.note("`jp undo` brings it back.")
    for cid, holders in held.items():
        if holders:
            app.output.note(
                f"note: {', '.join(holders)} still has {cid}, and the next pull brings it back "
                f"here; `jp push --delete {cid}` deletes it there too"
            )
