"""`jp conversation rm`."""

from __future__ import annotations

import click

from porcelain.commands.context import App
from porcelain.errors import Declined


@click.command()
@click.argument("targets", nargs=-1)
@click.option("-y", "--yes", "--no-confirm", "yes", is_flag=True, help="Do not ask.")
@click.pass_obj
def rm(app: App, targets: tuple[str, ...], yes: bool) -> None:
    """Delete conversations (the ref goes; git's gc reclaims the commits later).

    Until then `git reflog` of the store still finds them.  To keep a
    conversation out of the way without losing it, `archive` it instead.
    """
    from porcelain.app.targets import active_id, resolve

    store = app.store()
    locs = [resolve(store, t) for t in targets or (None,)]
    if not (yes or app.yes):
        names = ", ".join(loc.cid for loc in locs)
        if not app.output.confirm(f"Delete {names}? This cannot be undone from jp."):
            raise Declined("nothing was deleted")
    active = active_id(store)
    for loc in locs:
        store.delete(loc.cid, f"jp conversation rm {loc.cid}")
        if loc.cid == active:
            store.set_active(None)
    if app.output.json:
        app.output.data({"removed": [loc.cid for loc in locs]})
    else:
        app.output.line("Conversation removed." if len(locs) == 1 else "Conversations removed.")
