"""MCP servers' tools as the model's tools (docs/tools.md, "MCP servers").

A server is ``[providers.mcp.NAME]`` in the user's own files (``command``,
``args``, ``env``: the names of the variables it may see, never a provider's
key, ``startup_timeout_secs``, ``timeout`` per call).  Its tool TOOL is shown
to the user as ``mcp.NAME.TOOL`` and offered to the model as
``mcp__NAME__TOOL``: providers allow only ``[A-Za-z0-9_-]{1,64}`` in a tool's
name.  ``[providers.mcp.NAME.tools.TOOL]`` (``"*"`` for the server's
defaults) sets ``enable`` and ``run``: ``ask`` (the default) asks as a command
tool does, ``unattended`` runs without asking, ``skip`` answers every call
with an error result without running it.  A conversation may only choose
among these: ``conversation.tools."mcp.NAME.TOOL"`` with ``enable``, and
``confirm = true`` to make it ask.

What a server lists is untrusted: a tool whose name a provider would refuse,
whose input schema is not a JSON schema of an object or is over
``MAX_SCHEMA`` bytes, or whose name collides with another is refused (``jp
tools ls`` says why); a description is cut to ``MAX_DESCRIPTION``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gitstore import Limits
from porcelain.app.query.command_run import decoded
from porcelain.app.query.mcp_client import CallResult, Listed, McpError, McpServers, ServerSpec
from porcelain.app.query.registry import BuiltinTool, ToolCall, ToolOutcome
from porcelain.config import Config
from porcelain.config.schema import MCP, MCP_SERVER_NAME_RE
from porcelain.config.toolenv import provider_keys, tool_environment
from porcelain.domain.escaping import untrusted_field
from porcelain.models.base import ToolSpec

WIRE_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
TOOL_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
MAX_SCHEMA = 64 * 1024
MAX_DESCRIPTION = 2048
DEFAULT_STARTUP = 30.0
DEFAULT_CALL = 60.0
PREFIX = "mcp__"


def wire_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


def shown_name(server: str, tool: str) -> str:
    return f"mcp.{server}.{tool}"


def shown_wire(name: object) -> str:
    """A tool name as the user reads it: ``mcp__S__T`` is ``mcp.S.T`` (a server's
    name has no underscore, so the first ``__`` ends it); any other name as is."""
    text = str(name)
    server, sep, tool = text.removeprefix(PREFIX).partition("__")
    if text.startswith(PREFIX) and sep and server and tool:
        return shown_name(server, tool)
    return text


@dataclass(frozen=True)
class McpTool(BuiltinTool):
    """One server's tool, as the turn loop runs it (``run`` calls the server)."""

    server: str = ""
    tool: str = ""
    ask: bool = True
    command: str = ""


@dataclass(frozen=True)
class Offer:
    """One row of ``jp tools ls``: a tool, whether the model is offered it, and why."""

    name: str
    kind: str
    offered: bool
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "offered": self.offered, "why": self.why}


@dataclass
class Served:
    """The servers of one turn: the tools they offer (by wire name) and what was refused."""

    servers: McpServers | None = None
    tools: dict[str, McpTool] = field(default_factory=dict)
    rows: list[Offer] = field(default_factory=list)


def server_tables(config: Config) -> dict[str, dict[str, Any]]:
    """``[providers.mcp.NAME]`` of the merged configuration (only user files set it)."""
    table = (config.data.get("providers") or {}).get(MCP)
    return {str(k): v for k, v in table.items() if isinstance(v, dict)} if table else {}


def spec_of(name: str, table: Mapping[str, Any], config: Config, environ: Mapping[str, str]) -> ServerSpec:
    """How to start server ``name``: its environment is the command tools' base one
    plus the variables its ``env`` names, never a provider's key."""
    allowed = {"pass_env": list(table.get("env") or [])}
    env = tool_environment(allowed, environ, provider_keys(config.data))
    return ServerSpec(
        name,
        str(table["command"]),
        tuple(str(a) for a in table.get("args") or ()),
        env,
        float(table.get("startup_timeout_secs", DEFAULT_STARTUP)),
        float(table.get("timeout", DEFAULT_CALL)),
    )


def settings(config: Config, server: Mapping[str, Any], sname: str, tool: str) -> tuple[bool, str]:
    """(enabled, run mode) of one tool: the server's ``"*"`` and the tool's own table
    from the user's files, then what a conversation chose (``conversation.tools``)."""
    tables = server.get("tools") or {}
    own = tables.get(tool) or {}
    merged = {"enable": True, "run": "ask", **(tables.get("*") or {}), **own}
    chosen = _chosen(config).get(shown_name(sname, tool))
    if _all_off(config) and not (isinstance(chosen, dict) and "enable" in chosen):
        merged["enable"] = False  # ``conversation.tools."*".enable = false``: every tool, these too
    if isinstance(chosen, dict):
        if chosen.get("enable") is True and merged["enable"] is False and "run" not in own:
            merged["run"] = "ask"  # switched on over the server's off: no "*" run = unattended
        if "enable" in chosen:
            merged["enable"] = bool(chosen["enable"])
        if chosen.get("confirm") is True and merged["run"] == "unattended":
            merged["run"] = "ask"
    return bool(merged["enable"]), str(merged["run"])


def _chosen(config: Config) -> Mapping[str, Any]:
    tools = (config.data.get("conversation") or {}).get("tools")
    return tools if isinstance(tools, Mapping) else {}


def _all_off(config: Config) -> bool:
    """``conversation.tools."*".enable = false``: no tool unless its own table turns it on
    (a conversation's ``enable = true`` over the user's off never gets here: config/trust.py)."""
    star = _chosen(config).get("*")
    return isinstance(star, Mapping) and star.get("enable") is False


def _any_on(config: Config, sname: str) -> bool:
    """Whether a tool of server ``sname`` is turned on by name (over ``"*"``'s off)."""
    lead = shown_name(sname, "")
    return any(
        name.startswith(lead) and isinstance(table, Mapping) and table.get("enable") is True
        for name, table in _chosen(config).items()
    )


def refusal(listed: Listed, sname: str) -> str | None:
    """Why a listed tool is not offered, or None."""
    name = listed.name
    if not isinstance(name, str) or TOOL_NAME_RE.fullmatch(name) is None:
        return "its name has characters a model provider refuses"
    if WIRE_RE.fullmatch(wire_name(sname, name)) is None:
        return "its name is too long for a model provider (64 characters with mcp__SERVER__)"
    schema = listed.schema
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "its input schema is not a JSON schema of an object"
    if len(json.dumps(schema)) > MAX_SCHEMA:
        return f"its input schema is over {MAX_SCHEMA // 1024} KB"
    # lazy: jsonschema comes with the mcp package, loaded only for a configured server
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        return f"its input schema is not valid: {str(exc.message)[:120]}"
    return None


def offer(
    config: Config,
    environ: Mapping[str, str],
    note: Callable[[str], None],
    starting: Callable[[str], None] | None = None,
    served: Served | None = None,
) -> Served:
    """Start every enabled server and collect the tools the model is offered (into
    ``served``); a server that cannot start costs one ``note`` and its tools, never
    the turn."""
    served = Served() if served is None else served
    for sname, table in sorted(server_tables(config).items()):
        if MCP_SERVER_NAME_RE.fullmatch(sname) is None or "--" in sname:
            why = "a server's name is letters, digits and single dashes"
            served.rows.append(Offer(f"mcp.{sname}", "mcp server", False, why))
            continue
        if not table.get("enable", True) or not table.get("command"):
            why = "enable = false" if table.get("command") else "it has no command"
            served.rows.append(Offer(f"mcp.{sname}", "mcp server", False, why))
            continue
        if _all_off(config) and not _any_on(config, sname):  # every tool off: not started
            why = 'conversation.tools."*".enable = false'
            served.rows.append(Offer(f"mcp.{sname}", "mcp server", False, why))
            continue
        spec = spec_of(sname, table, config, environ)
        if served.servers is None:
            served.servers = McpServers()
        if starting is not None:
            starting(sname)
        try:
            listed = served.servers.start(spec)
        except McpError as exc:
            why = f"the server did not start: {exc}"
            served.rows.append(Offer(f"mcp.{sname}", "mcp server", False, why))
            note(f"warning: MCP server {sname} did not start: {untrusted_field(str(exc))}")
            continue
        _add(served, config, spec, table, listed)
    return served


def _add(served: Served, config: Config, spec: ServerSpec, table: Mapping[str, Any], listed: list[Listed]) -> None:
    servers = served.servers
    assert servers is not None
    command = " ".join([spec.command, *spec.args])
    for item in listed:
        why = refusal(item, spec.name)
        label = shown_name(spec.name, str(item.name)) if isinstance(item.name, str) else "?"
        if why is None and wire_name(spec.name, item.name) in served.tools:
            why = "another server's tool has the same name on the wire"
        if why is not None:
            served.rows.append(Offer(label, "mcp", False, why))
            continue
        enabled, mode = settings(config, table, spec.name, item.name)
        if not enabled:
            served.rows.append(Offer(label, "mcp", False, "enable = false"))
            continue
        wire = wire_name(spec.name, item.name)
        description = str(item.description or f"{label} (MCP server {spec.name})")
        tool = McpTool(
            ToolSpec(wire, description[:MAX_DESCRIPTION], dict(item.schema)),
            _runner(servers, spec, item.name, mode),
            server=spec.name,
            tool=item.name,
            ask=mode == "ask",
            command=command,
        )
        served.tools[wire] = tool
        served.rows.append(Offer(label, "mcp", True, f"run = {mode}"))


def _runner(servers: McpServers, spec: ServerSpec, tool: str, mode: str) -> Callable[[ToolCall, Any], ToolOutcome]:
    label = shown_name(spec.name, tool)

    def run(call: ToolCall, ctx: Any) -> ToolOutcome:
        if mode == "skip":
            return ToolOutcome(f"tool {label}: the user's configuration skips it (run = skip)", True)
        try:
            result = servers.call(spec.name, tool, call.arguments, spec.call_timeout)
        except McpError as exc:
            return ToolOutcome(f"tool {label}: {exc}", True)
        limits = getattr(getattr(ctx, "store", None), "limits", None) or Limits()
        return _bounded(label, result, limits.max_event_bytes)

    return run


def _bounded(label: str, result: CallResult, event_limit: int) -> ToolOutcome:
    """The result cut to what a command tool's output may keep, saying so."""
    # lazy: tools.py imports this module for McpTool (a cycle otherwise)
    from porcelain.app.query.tools import kept_bytes

    data = result.text.encode("utf-8", "replace")
    keep = kept_bytes(event_limit)
    text, _ = decoded(data[:keep], len(data) > keep)
    if len(data) > keep:
        text += f"\n[jp: the output was {len(data)} bytes; only the first {keep} were kept]"
    if result.is_error:
        return ToolOutcome(f"tool {label} failed: {text}", True)
    return ToolOutcome(text)


def question(call: ToolCall, tool: McpTool) -> str:
    """The confirmation prompt: the tool, the server's command, the model's arguments."""
    args = untrusted_field(json.dumps(call.arguments, ensure_ascii=False))
    if len(args) > 400:
        args = args[:397] + "..."
    line = untrusted_field(tool.command)
    name = untrusted_field(shown_name(tool.server, tool.tool))
    return f"Run tool {name} (MCP server `{line}`) with {args}?"


@contextmanager
def served(
    config: Config, note: Callable[[str], None], starting: Callable[[str], None] | None = None
) -> Iterator[Served]:
    """The servers of one turn, stopped when it ends, whatever happens."""
    if not server_tables(config):
        yield Served()
        return
    result = Served()
    try:
        yield offer(config, os.environ, note, starting, result)
    finally:
        if result.servers is not None:
            result.servers.close()
