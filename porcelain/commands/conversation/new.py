"""`jp conversation new`."""

from __future__ import annotations

import click

from porcelain.app.lifecycle import new_conversation
from porcelain.commands.context import App


@click.command()
@click.option("-t", "--title", help="A title for the conversation.")
@click.option("--no-activate", is_flag=True, help="Do not make it the active conversation.")
@click.pass_obj
def new(app: App, title: str | None, no_activate: bool) -> None:
    """Start an empty conversation and make it active; prints its id."""
    cid = new_conversation(app.store(), title, activate=not no_activate)
    app.output.emit({"id": cid}, cid)
