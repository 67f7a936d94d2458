"""`jp conversation archive` and `unarchive`: move the ref, keep everything."""

from __future__ import annotations

import click

from gitstore import Located
from porcelain import clock
from porcelain.app.targets import active_id, resolve
from porcelain.commands.context import App
from porcelain.errors import Declined


@click.command()
@click.argument("targets", nargs=-1)
@click.option("-y", "--yes", "--no-confirm", "yes", is_flag=True, help="Do not ask.")
@click.pass_obj
def archive(app: App, targets: tuple[str, ...], yes: bool) -> None:
    """Move conversations to the archive (default: the active one).

    Archived conversations keep all their events under
    refs/archive/conversations/ and come back with `unarchive`.
    """
    store = app.store()
    active = active_id(store)
    done = []
    locs: list[Located] = []
    for loc in (resolve(store, target) for target in targets or (None,)):
        if loc.archived:
            app.output.note(f"Conversation {loc.cid} is already archived.")
        elif loc.cid not in (seen.cid for seen in locs):
            locs.append(loc)
    asks = any(loc.cid == active for loc in locs) or len(locs) > 1
    if asks and not app.confirm(_question(locs, active), yes):
        raise Declined("nothing was archived")
    for loc in locs:
        store.refs.archive(loc.cid, f"jp conversation archive {loc.cid}")
        store.notes.set_meta(loc.cid, {"archived_at": clock.now_text()}, f"jp: archive {loc.cid}")
        done.append(loc.cid)
        app.output.text(f"Conversation {loc.cid} archived.")
    app.output.emit({"archived": done})


def _question(locs: list[Located], active: str | None) -> str:
    names = [
        f"the active conversation {loc.cid}" if loc.cid == active else loc.cid for loc in locs
    ]
    return f"Archive {', '.join(names)}?"


@click.command()
@click.argument("targets", nargs=-1, required=True)
@click.pass_obj
def unarchive(app: App, targets: tuple[str, ...]) -> None:
    """Bring archived conversations back to the live list."""
    store = app.store()
    done = []
    for target in targets:
        loc = resolve(store, target)
        if not loc.archived:
            app.output.note(f"Conversation {loc.cid} is not archived, skipping.")
            continue
        store.refs.unarchive(loc.cid, f"jp conversation unarchive {loc.cid}")
        store.notes.set_meta(loc.cid, {"archived_at": None}, f"jp: unarchive {loc.cid}")
        done.append(loc.cid)
        app.output.text(f"Conversation {loc.cid} unarchived.")
    app.output.emit({"unarchived": done})
