"""`jp tools ls`: the tools the model will be offered, and why (docs/tools.md)."""

from __future__ import annotations

import click

from porcelain.commands.context import App


@click.group()
def tools() -> None:
    """The model's tools: built in, command tools, and MCP servers' tools.

    `jp tools ls` lists every tool the configuration defines, whether the
    model is offered it, and why: its run mode, or the reason it is not
    offered (switched off, refused, its server did not start).
    """


@tools.command("ls")
@click.pass_obj
def ls(app: App) -> None:
    """List the tools the model is offered and why; MCP servers are started
    (and stopped again) to learn their tools."""
    # lazy: the tool tables load only for `jp tools` (the MCP client only with a server)
    from porcelain.app.query.tool_list import tool_rows
    from porcelain.render.toolview import tool_lines

    config = app.config()
    with app.output.spinner("starting MCP servers"):
        rows = tool_rows(config, app.environ, app.output.note)
    if app.output.emit_json([r.to_json() for r in rows]):
        return
    app.output.lines(tool_lines(rows))
