"""`jp conversation use`."""

from __future__ import annotations

import click

from porcelain.commands.context import App
from porcelain.render.output import untrusted_field


@click.command()
@click.argument("target", required=False)
@click.pass_obj
def use(app: App, target: str | None) -> None:
    """Make a conversation the active one (an archived one is restored first)."""
    from gitstore import record_activation
    from porcelain.app.targets import active_id, resolve

    store = app.store()
    loc = resolve(store, "recent" if target is None else target)
    before = active_id(store)
    if loc.archived:
        store.unarchive(loc.cid, f"jp conversation use: unarchive {loc.cid}")
        app.output.note(f"Unarchived conversation {loc.cid}")
    store.set_active(loc.cid)
    record_activation(store, loc.cid)
    if app.output.json:
        app.output.data({"id": loc.cid, "previous": before})
    elif before == loc.cid:
        app.output.line(f"Already active conversation: {loc.cid}")
    else:
        title = store.meta(loc.cid).get("title")
        suffix = f": {untrusted_field(title)}" if title else ""
        app.output.line(
            f"Switched active conversation from {before or '(none)'} to {loc.cid}{suffix}"
        )
