"""`jp mcp`: the store served to agents over MCP, and the server's entry in other
tools' configuration (docs/mcp.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from porcelain import clock
from porcelain.commands.context import App
from porcelain.errors import UserError

if TYPE_CHECKING:
    from gitstore import Store

MAX_BYTES_KEY = "mcp.max_bytes"
VERSION = "0.1.0"  # as `jp --version` says


@click.group()
def mcp() -> None:
    """Serve the store to agents over MCP (Claude Code, Codex): search, read, list."""


@mcp.command()
@click.option("--store", "store_path", metavar="PATH", help="The store to serve (as jp --store).")
@click.pass_obj
def serve(app: App, store_path: str | None) -> None:
    """Answer MCP requests on stdin and stdout until the client stops (read-only).

    Its tools search every conversation (grep's rules), read one's turns, raw
    or as a model is sent them, and list recent ones; each answer is bounded
    (`mcp.max_bytes` of your own configuration) with control characters made
    visible.  An agent starts it: `jp mcp install claude-code` (or codex)
    registers it.  The store is opened for each call, so what an import or a
    pull adds meanwhile is found at once.
    """
    # lazy: the server and its answers load only for `jp mcp serve`
    from porcelain.app.mcpserve.answers import answering
    from porcelain.app.mcpserve.server import Serving
    from porcelain.app.mcpserve.server import serve as run
    from porcelain.render import failures, lsview

    if store_path is not None:
        app.store_option = store_path
    path, named_by = app.chosen_store()
    if not path.exists():  # serving never creates a store
        raise UserError(
            f"no store at {path}" + (f" (named by {named_by})" if named_by else ""),
            "create one and fill it: `jp init`, then `jp conversation import --from claude-code`",
        )
    app.store()  # the same checks and messages as every command
    limit = app.config().get(MAX_BYTES_KEY)
    how = answering(limit if isinstance(limit, int) else None, lsview.rank)

    def explain(exc: BaseException) -> str | None:
        found = failures.translate(exc)
        return None if found is None else found.message

    run(Serving(_opener(app), how, explain), VERSION)


def _opener(app: App):  # type: ignore[no-untyped-def]
    """A store opened afresh for each call (its refs read anew, nothing kept)."""
    # lazy: `jp --help` loads no store module (start-up)
    from gitstore import Store

    path, identity, limits = app.store_path(), app.identity(), app.limits()

    def opened() -> Store:
        return Store(path, identity, limits, clock=clock.for_store())

    return opened
