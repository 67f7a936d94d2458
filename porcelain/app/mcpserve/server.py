"""`jp mcp serve`: an MCP server over stdio, built on the ``mcp`` package's
low-level server, whose tools read the store (``answers``) and never write it.

The store is opened for each call and closed after it, so an import or a pull
in another terminal is seen by the next call; a call that meets the store
changing under it (a concurrent `git gc` repacking the objects it reads) is
tried again on a freshly opened store.  A call runs on a worker thread, so the
server keeps answering the client's pings.  Nothing but the protocol is ever
written to stdout: a failure is the call's error result, one line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from porcelain.domain import mcptools
from porcelain.domain.mcptools import ToolInputError, bounded
from porcelain.errors import JpError

if TYPE_CHECKING:
    from gitstore import Store
    from porcelain.app.mcpserve.answers import Answering

TRIES = 3  # a call that met the store changing under it is tried again, this often
INSTRUCTIONS = (
    "jp keeps the user's conversations with models: their own, and the Claude Code and "
    "Codex sessions they imported, from every machine they sync. Search them for how a "
    "problem was solved before (search_conversations), read the turns around a hit "
    "(read_conversation), or list recent ones (list_conversations). Read-only."
)

# a tool's request parser, and the name of its answer in ``answers`` (loaded at the
# first call: the answers, the cache's views and the secret scanner are no part of
# start-up, which an agent waits for before its session begins)
_RUN: dict[str, tuple[Callable[[Mapping[str, Any]], Any], str]] = {
    mcptools.SEARCH: (mcptools.search_request, "search"),
    mcptools.READ: (mcptools.read_request, "read"),
    mcptools.LIST: (mcptools.list_request, "listing"),
}


@dataclass(frozen=True)
class Serving:
    open_store: Callable[[], Store]  # a store opened afresh for one call
    make_how: Callable[[], Answering]  # called once, at the first call
    explain: Callable[[BaseException], str | None]  # an expected failure's one line; None: a bug

    @cached_property
    def how(self) -> Answering:
        return self.make_how()


def _run(attribute: str) -> Callable[[Store, Any, Answering], str]:
    # lazy: the answers load at the first call, not at start-up
    from porcelain.app.mcpserve import answers

    run: Callable[[Store, Any, Answering], str] = getattr(answers, attribute)
    return run


def answer(serving: Serving, name: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
    """The text of tool ``name``'s answer to ``arguments``, and whether it is an error."""
    text, failed = _answer(serving, name, arguments)
    shown = serving.how.field(text, 1000) if failed else text  # an error: one line, masked
    return bounded(shown, serving.how.max_bytes), failed


def _answer(serving: Serving, name: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
    if name not in _RUN:
        return f"unknown tool {name[:80]!r}; the tools are {', '.join(_RUN)}", True
    parse, attribute = _RUN[name]
    try:
        request = parse(arguments)
    except ToolInputError as exc:
        return str(exc), True
    run = _run(attribute)
    for attempt in range(TRIES):
        try:
            store = serving.open_store()
            try:
                return run(store, request, serving.how), False
            finally:
                store.close()
        except (ToolInputError, JpError) as exc:  # the request's fault: no try again
            return (exc.message if isinstance(exc, JpError) else str(exc)), True
        except Exception as exc:  # noqa: BLE001 (a call never ends the server)
            if attempt + 1 < TRIES:
                continue  # the store changed under the read (a gc): read it anew
            line = serving.explain(exc)
            return (line or f"internal error in jp ({type(exc).__name__}); try again"), True
    raise AssertionError("unreachable")  # pragma: no cover


def tools() -> list[tuple[str, str, dict[str, Any]]]:
    return [(name, description, schema) for name, (description, schema) in mcptools.SPECS.items()]


def serve(serving: Serving, version: str) -> None:
    """Answer MCP requests on stdin/stdout until the client closes stdin."""
    # lazy: the mcp package (about a second of imports) loads only for `jp mcp serve`
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    quiet = logging.getLogger("mcp")  # its logs would reach the client's terminal raw
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    listed = [
        types.Tool(
            name=name,
            description=description,
            input_schema=schema,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        )
        for name, description, schema in tools()
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        text, failed = await anyio.to_thread.run_sync(answer, serving, params.name, arguments)
        content = [types.TextContent(type="text", text=text)]
        return types.CallToolResult(content=content, is_error=failed)

    server: Server[Any] = Server(
        "jp",
        version=version,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
