"""`jp mcp`: the store served to agents over MCP, and the server's entry in other
tools' configuration (docs/mcp.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from porcelain import clock
from porcelain.commands.context import App
from porcelain.errors import UserError

if TYPE_CHECKING:
    from gitstore import Store
    from porcelain.app.mcpserve.answers import Answering

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
    # lazy: the server loads only for `jp mcp serve` (its answers at the first call)
    from porcelain.app.mcpserve.server import Serving
    from porcelain.app.mcpserve.server import serve as run

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

    def how() -> Answering:
        # lazy: the answers and the secret scanner, at the first call (start-up)
        from porcelain.app.mcpserve.answers import answering
        from porcelain.app.secretcheck import allow_list
        from porcelain.render import lsview

        return answering(limit if isinstance(limit, int) else None, lsview.rank, allow_list(app))

    def explain(exc: BaseException) -> str | None:
        # lazy: the error table, for a failed call only
        from porcelain.render import failures

        found = failures.translate(exc)
        return None if found is None else found.message

    if sys.stdin.isatty():
        app.output.note(
            "jp mcp serve speaks MCP on stdin and stdout, for an agent to start it "
            "(`jp mcp install claude-code`); Ctrl-C stops it."
        )
    run(Serving(_opener(app), how, explain), VERSION)


def _opener(app: App):  # type: ignore[no-untyped-def]
    """A store opened afresh for each call (its refs read anew, nothing kept)."""
    # lazy: `jp --help` loads no store module (start-up)
    from gitstore import Store

    path, identity, limits = app.store_path(), app.identity(), app.limits()

    def opened() -> Store:
        return Store(path, identity, limits, clock=clock.for_store())

    return opened


TOOL = click.Choice(["claude-code", "codex"])


@mcp.command()
@click.argument("tool", type=TOOL)
@click.pass_obj
def install(app: App, tool: str) -> None:
    """Register `jp mcp serve` with TOOL (claude-code or codex) as the MCP server `jp`.

    Claude Code: the user-scope `mcpServers` of ~/.claude.json ($CLAUDE_CONFIG_DIR
    when set); Codex: `[mcp_servers.jp]` of $CODEX_HOME/config.toml (~/.codex).
    Every other setting is kept; what an entry named `jp` held before is recorded,
    and `jp mcp uninstall TOOL` puts it back.  A store named by --store or
    JP_STORE is passed on as `--store PATH`.
    """
    # lazy: the other tools' files are read only by install and uninstall
    from porcelain.app.mcpserve import install as installing

    where = installing.target(tool, app.environ)
    path, named_by = app.chosen_store()
    args = ["mcp", "serve", *(["--store", str(path.absolute())] if named_by else [])]
    done = installing.install(where, installing.entry(where, _jp_command(), args), app.environ)
    shown = " ".join([_jp_command(), *args])
    text = (
        f"Registered the MCP server `jp` ({shown}) in {where.path}."
        if done.changed
        else f"The MCP server `jp` is registered in {where.path} already."
    )
    app.output.emit(
        {"tool": tool, "file": str(where.path), "changed": done.changed, "entry": done.entry},
        [text, f"Undo: jp mcp uninstall {tool}"],
    )


@mcp.command()
@click.argument("tool", type=TOOL)
@click.pass_obj
def uninstall(app: App, tool: str) -> None:
    """Remove the MCP server `jp` that `jp mcp install TOOL` registered, putting back
    what the entry held before (refused when it was edited since)."""
    # lazy: the other tools' files are read only by install and uninstall
    from porcelain.app.mcpserve import install as installing

    done = installing.uninstall(installing.target(tool, app.environ), app.environ)
    if done.entry is not None:
        text = f"Put back the entry `jp` that {done.target.path} held before."
    elif done.changed:
        text = f"Removed the MCP server `jp` from {done.target.path}."
    else:
        text = f"The MCP server `jp` was gone from {done.target.path} already; forgot it."
    app.output.emit(
        {"tool": tool, "file": str(done.target.path), "changed": done.changed, "entry": done.entry},
        text,
    )


def _jp_command() -> str:
    """This `jp`, by its absolute path (an agent's PATH may not find it)."""
    # lazy: only install needs to know where it runs from
    import shutil

    here = Path(sys.argv[0])
    if here.name == "jp" and here.exists():
        return str(here.absolute())
    return shutil.which("jp") or "jp"
