"""`jp undo`: reverse the latest operation."""

from __future__ import annotations

import click

from gitstore import ops
from porcelain.commands.context import App
from porcelain.render import opshow


@click.command()
@click.option(
    "--force",
    is_flag=True,
    help="Undo even if a ref changed since the operation (that change is overwritten).",
)
@click.pass_obj
def undo(app: App, force: bool) -> None:
    """Reverse the latest operation: every ref it moved goes back.

    Run again, it reverses the operation before that one (an undo is skipped
    together with what it undid).  A ref changed since the operation is not
    overwritten unless `--force`; `jp op restore OP` sets every ref to how
    an operation left it.  `jp op log` lists the operations.  A change to a
    configuration file (`jp config set`) is not an operation: undo never
    reverses it, and says when the operation it undid ran.
    """
    store = app.store()
    result = ops.undo(store, force=force)
    app.output.emit(
        {"undone": opshow.as_json(result.op), "refs": opshow.moves_json(result.moved)},
        [
            f"Undid operation {result.op.id[: opshow.SHORT]}: {opshow.command(result.op)}",
            *opshow.moves_brief(result.moved, result.op.id),
            *opshow.remote_lines(result.op, undone=True),
        ],
    )
    for line in opshow.shared_lines(result.moved):
        app.output.note(line)
    app.output.note(
        f"that operation ran at {opshow.when(result.op.time)}; `jp undo` reverses the "
        "store's operations only: a change to a configuration file (`jp config set` "
        "included) is not one, and `jp op log` lists what is"
    )
