"""`jp op`: the operation log (`log`, `restore`)."""

from __future__ import annotations

import click

from gitstore import ops
from porcelain.commands.context import App
from porcelain.render import opshow


@click.group()
def op() -> None:
    """The operation log: every command that changed the store, newest first.

    Each operation records the command line, when it ran, and every ref it
    moved (conversations, archive, notes, the active conversation) with its
    old and new value.  The log is local: it never travels with push.
    """


@op.command(name="log")
@click.option("-n", "--limit", type=click.IntRange(min=1), help="Show at most N operations.")
@click.option("--refs/--no-refs", "show_refs", default=True, help="List the refs each moved.")
@click.pass_obj
def log(app: App, limit: int | None, show_refs: bool) -> None:
    """List operations, newest first (`-F json`: a list of objects)."""
    found = app.store().ops.list(limit)
    if app.output.emit_json([opshow.as_json(o) for o in found]):
        return
    if not found:
        app.output.note("No operations yet.")
        return
    lines: list[str] = []
    for o in found:
        lines.append(opshow.headline(o))
        if show_refs:
            lines += opshow.moves_text(o.moves) + opshow.remote_lines(o)
    app.output.lines(lines)


@op.command()
@click.argument("operation")
@click.pass_obj
def restore(app: App, operation: str) -> None:
    """Set every ref back to how it was right after OPERATION (an id or its start).

    Refs that later operations moved return to their value then, whatever
    they hold now; the restore is an operation itself (`jp undo` reverses it).
    """
    result = ops.restore(app.store(), operation)
    if app.output.emit_json(
        {
            "restored": opshow.as_json(result.op),
            "refs": opshow.moves_json(result.moved),
        }
    ):
        return
    short = result.op.id[: opshow.SHORT]
    if not result.moved:
        app.output.line(f"The store is already as operation {short} left it.")
        return
    app.output.line(f"Restored the store to after operation {short}: {opshow.command(result.op)}")
    app.output.lines(opshow.moves_text(result.moved))
    for line in opshow.shared_lines(result.moved):  # what a remote keeps
        app.output.note(line)
