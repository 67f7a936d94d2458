"""An MCP stdio server for the tests, built on the ``mcp`` package's low-level Server.

``python -m tests.support.mcp_server [MODE]``.  Its tools:

- ``echo {text}``: the text back;
- ``env``: its own environment as JSON (what jp let through);
- ``crash``: the process exits in the middle of the call;
- ``hang``: never answers;
- ``loud``: text with terminal control sequences;
- ``huge``: 3 MB of text;
- ``failing``: a result the server marks as an error;
- ``pid``: its process id (to see that it was stopped).

MODE ``hostile`` adds tools jp must refuse: a bad input schema, a schema of
200 KB, a name with odd characters, a name too long for a provider.  MODE ``slow`` waits 60 s before it
serves (a startup timeout); MODE ``die`` writes a line to stderr and exits.
MODE ``flood`` adds the tool ``flood``: one result line of 160 MB.
MODE ``spawner`` starts a helper process (``sleep``) as it starts, adds the tool
``helper`` (the helper's pid), and exits when its stdin closes, as MCP servers
do: its helper must not outlive the query.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OBJECT = {"type": "object", "properties": {"text": {"type": "string"}}}
EMPTY = {"type": "object", "properties": {}}
BAD_SCHEMA = {"type": "object", "properties": {"text": {"type": 5}}}
HELPER: list[int] = []  # the helper's pid (MODE spawner)
PROTOCOL: list[int] = []  # a copy of the stdout jp reads (MODE flood)
BIG_SCHEMA = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(9000)}}


def _tools(mode: str) -> list[types.Tool]:
    tools = [
        types.Tool(name="echo", description="Say the text back", input_schema=OBJECT),
        types.Tool(name="env", description="Report the environment", input_schema=EMPTY),
        types.Tool(name="crash", description="Exit mid-call", input_schema=EMPTY),
        types.Tool(name="hang", description="Never answer", input_schema=EMPTY),
        types.Tool(name="loud", description="Print control \x1b[31mcodes\x1b[0m", input_schema=EMPTY),
        types.Tool(name="huge", description="Print 3 MB", input_schema=EMPTY),
        types.Tool(name="failing", description="Fail", input_schema=EMPTY),
        types.Tool(name="pid", description="Its process id", input_schema=EMPTY),
    ]
    if mode == "spawner":
        tools.append(types.Tool(name="helper", description="Its helper's pid", input_schema=EMPTY))
    if mode == "flood":
        tools.append(types.Tool(name="flood", description="Write 160 MB", input_schema=EMPTY))
    if mode == "hostile":
        tools += [
            types.Tool(name="badschema", description="x", input_schema=BAD_SCHEMA),
            types.Tool(name="bigschema", description="x", input_schema=BIG_SCHEMA),
            types.Tool(name="odd\x1b]0;name", description="x", input_schema=EMPTY),
            types.Tool(name="n" * 80, description="x", input_schema=EMPTY),
        ]
    return tools


def _text(text: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


async def _call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    if name == "echo":
        return _text(str(arguments.get("text", "")))
    if name == "env":
        return _text(json.dumps(dict(os.environ), sort_keys=True))
    if name == "crash":
        os._exit(3)
    if name == "hang":
        await anyio.sleep(3600)
    if name == "loud":
        return _text("red \x1b[31malert\x1b[0m\x07 and \x1b]0;title\x07 done")
    if name == "huge":
        return _text("y" * 3_000_000)
    if name == "pid":
        return _text(str(os.getpid()))
    if name == "helper":
        return _text(str(HELPER[0]))
    if name == "failing":
        return _text("the disk is on fire", error=True)
    return _text(f"unknown tool {name}", error=True)


def _flood(request: Any) -> None:
    """One result line of 160 MB, written in pieces (the server holds 64 KB of it),
    then exit: what jp holds of it is jp's own doing."""
    head = {"jsonrpc": "2.0", "id": request, "result": {"content": [{"type": "text", "text": "@"}]}}
    first, rest = json.dumps(head).split("@")
    out = PROTOCOL[0]  # the pipe jp reads (the package points fd 1 elsewhere)
    os.write(out, ("\n" + first).encode())
    piece = b"flood " * 10_923
    for _ in range(2_500):
        os.write(out, piece)
    os.write(out, (rest + "\n").encode())
    os._exit(0)


def main(mode: str) -> None:
    if mode == "die":
        print("cannot open the database: permission denied", file=sys.stderr, flush=True)
        sys.exit(2)
    if mode == "slow":
        time.sleep(60)
    if mode == "flood":
        PROTOCOL.append(os.dup(1))
    if mode == "spawner":
        HELPER.append(subprocess.Popen(["sleep", "300"]).pid)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_tools(mode))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "flood":
            _flood(ctx.request_id)
        return await _call(params.name, dict(params.arguments or {}))

    server: Server[Any] = Server("jp-test", on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ok")
