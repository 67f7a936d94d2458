"""`jp init`: create a store."""

from __future__ import annotations

from pathlib import Path

import click

from gitstore import init_project, init_store
from porcelain import clock
from porcelain.commands.context import App
from porcelain.errors import UserError


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--here",
    is_flag=True,
    help="Keep conversations in the enclosing git repository (jp's own refs only: "
    "its notes go under refs/notes/jp/; the project's branches, tags, notes, index, "
    "work tree and remotes are never touched).",
)
@click.pass_obj
def init(app: App, path: Path | None, here: bool) -> None:
    """Create a store (a bare git repository); harmless when it exists.

    With --here, conversations live in the project's own repository as
    refs/conversations/*; nothing is sent anywhere until you add a remote
    (`jp remote add NAME URL`, then `jp push`), and the project's own code
    remote gets conversations only when you name it (`jp push origin`).
    """
    if here:
        made = init_project(app.cwd, clock.for_store())
        if made is None:
            raise UserError("not inside a git repository", "run `git init` first, or drop --here")
        names = {"meta": made.notes.meta, "source": made.notes.source}
        app.output.emit(
            {"store": made.path, "created": made.created, "notes": names},
            f"Conversations will be stored in {made.path}",
        )
        return
    target = path or app.store_path()
    created = init_store(target, clock.for_store())
    app.output.emit(
        {"store": str(target), "created": created},
        f"{'Created' if created else 'Using existing'} store {target}",
    )
