"""`jp conversation import` and `export`: JP's folder layout in and out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from porcelain.app.targets import resolve
from porcelain.app.transfer import export_conversation, store_imported
from porcelain.commands.context import App
from porcelain.errors import UserError
from porcelain.jpformat import read_conversation


@click.command("import")
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--activate", is_flag=True, help="Make the (last) imported conversation active.")
@click.pass_obj
def import_(app: App, folders: tuple[Path, ...], activate: bool) -> None:
    """Import JP conversation folders (events.json, metadata.json).

    Every folder is read and checked before anything is written; a malformed
    file is refused with its path and the reason.  A conversation keeps its
    JP id when it is free (else it gets a new one, and the line says so); a
    folder already imported is not imported again.  Prints the ids.
    """
    # lazy: only an import reads the re-import records
    from porcelain.app.reimport import already_there, outcome

    for folder in folders:
        if not folder.is_dir():
            raise UserError(
                f"{folder}: not a folder",
                "give a JP conversation folder (one that holds events.json and metadata.json)",
            )
    limits = app.limits()
    read = [read_conversation(folder, limits) for folder in folders]
    store = app.store()
    created: list[dict[str, Any]] = []
    for folder, conv in zip(folders, read, strict=True):
        kept = already_there(store, conv.jp_id, conv.events)
        cid = kept or store_imported(store, conv)
        done = outcome(conv.jp_id, cid, kept)
        created.append({"id": cid, "folder": str(folder), "events": len(conv.events), **done})
        if app.output.json:
            continue
        app.output.line(cid)  # stdout: the ids, one a line; what happened on stderr
        if done["action"] == "unchanged":
            app.output.note(f"{cid}: already in the store (imported before); nothing written")
        elif done["action"] == "renamed":
            app.output.note(f"{cid}: a new id, since {done['jp_id']} is another conversation here")
    if activate and created:
        store.set_active(str(created[-1]["id"]))
    if app.output.json:
        app.output.data(created)


@click.command()
@click.argument("target", required=False)
@click.option(
    "-o",
    "--output",
    "dest",
    required=True,
    type=click.Path(path_type=Path),
    help="The folder to write (JP's layout: events.json, metadata.json).",
)
@click.pass_obj
def export(app: App, target: str | None, dest: Path) -> None:
    """Write a conversation in JP's folder layout, which JP and `import` read."""
    store = app.store()
    loc = resolve(store, target)
    count = export_conversation(store, loc, dest)
    if app.output.json:
        app.output.data({"id": loc.cid, "output": str(dest), "events": count})
    else:
        app.output.line(f"Exported {loc.cid} ({count} events) to {dest}")
