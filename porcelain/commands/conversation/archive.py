"""`jp conversation archive` and `unarchive`: move the ref, keep everything."""

from __future__ import annotations

import click

from porcelain.commands.context import App


@click.command()
@click.argument("targets", nargs=-1)
@click.option("-y", "--yes", "--no-confirm", "yes", is_flag=True, help="Do not ask.")
@click.pass_obj
def archive(app: App, targets: tuple[str, ...], yes: bool) -> None:
    """Move conversations to the archive (default: the active one).

    Archived conversations keep all their events under
    refs/archive/conversations/ and come back with `unarchive`.
    """
    from porcelain import clock
    from porcelain.app.targets import active_id, resolve

    store = app.store()
    active = active_id(store)
    done = []
    for target in targets or (None,):
        loc = resolve(store, target)
        if loc.archived:
            app.output.note(f"Conversation {loc.cid} is already archived.")
            continue
        if loc.cid == active or len(targets) > 1:
            what = "the active conversation" if loc.cid == active else "conversation"
            if not (yes or app.yes or app.output.confirm(f"Archive {what} {loc.cid}?")):
                app.output.note(f"Skipped {loc.cid}.")
                continue
        store.archive(loc.cid, f"jp conversation archive {loc.cid}")
        store.set_meta(loc.cid, {"archived_at": clock.now_text()}, f"jp: archive {loc.cid}")
        done.append(loc.cid)
        if not app.output.json:
            app.output.line(f"Conversation {loc.cid} archived.")
    if app.output.json:
        app.output.data({"archived": done})


@click.command()
@click.argument("targets", nargs=-1, required=True)
@click.pass_obj
def unarchive(app: App, targets: tuple[str, ...]) -> None:
    """Bring archived conversations back to the live list."""
    from porcelain.app.targets import resolve

    store = app.store()
    done = []
    for target in targets:
        loc = resolve(store, target)
        if not loc.archived:
            app.output.note(f"Conversation {loc.cid} is not archived, skipping.")
            continue
        store.unarchive(loc.cid, f"jp conversation unarchive {loc.cid}")
        store.set_meta(loc.cid, {"archived_at": None}, f"jp: unarchive {loc.cid}")
        done.append(loc.cid)
        if not app.output.json:
            app.output.line(f"Conversation {loc.cid} unarchived.")
    if app.output.json:
        app.output.data({"unarchived": done})
