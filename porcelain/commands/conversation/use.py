"""`jp conversation use`."""

from __future__ import annotations

import click

from gitstore import record_activation
from porcelain.app.targets import active_id, resolve
from porcelain.commands.context import App
from porcelain.render.output import untrusted_field


@click.command()
@click.argument("target", required=False)
@click.pass_obj
def use(app: App, target: str | None) -> None:
    """Make a conversation the active one (an archived one is restored first).

    TARGET is an id (any unique prefix, `jp-c` optional), a keyword, or `-`
    for the conversation that was active before this one (as `cd -`).
    """
    from porcelain.app.previous import previous_id
    from porcelain.errors import UsageError

    store = app.store()
    if target is None:
        raise UsageError(
            "which conversation? `use` needs a target",
            "name one: `jp conversation use ID` (ids and prefixes in `jp conversation ls`), "
            "`use recent`, or `use -` for the previous one",
        )
    before = active_id(store)
    loc = resolve(store, previous_id(store, before) if target == "-" else target)
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
