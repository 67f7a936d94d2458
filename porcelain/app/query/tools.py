"""Tools the model may call: built-ins registered in code, commands from config.

A command tool is `[conversation.tools.NAME]` with `command`, `description`
and `parameters` (a JSON schema).  The model's arguments reach the command as
JSON on stdin, never through a shell.  The command runs with a minimal
environment (`porcelain/config/toolenv.py`: PATH, HOME, the locale, TMPDIR,
TERM, plus what its own table's `pass_env` and `env` name), never with a
provider's key.  Every failure becomes an error result the model reads; a
tool never crashes a turn.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from typing import Any

import porcelain.app.query.recall  # noqa: F401  (registers recall)
import porcelain.app.review.tool  # noqa: F401  (registers propose_compaction)
from gitstore import Event, Limits, make
from porcelain import clock
from porcelain.app.query.command_run import capture, decoded
from porcelain.app.query.cutnote import fit_result
from porcelain.app.query.mcp_tools import McpTool, question
from porcelain.app.query.registry import BUILTINS, BuiltinTool, ToolCall, ToolOutcome
from porcelain.config import Config
from porcelain.config.toolenv import PROVIDER_KEYS, tool_environment
from porcelain.domain.escaping import untrusted_field
from porcelain.models.base import ToolSpec

DEFAULT_TIMEOUT = 60.0
# of the event limit, what the rest of the result event and its notes may take
EVENT_ROOM = 64 * 1024


def kept_bytes(event_limit: int) -> int:
    """How much of a tool's output is kept under an event limit of ``event_limit``."""
    return max(event_limit - EVENT_ROOM, event_limit // 2)


def _enabled(table: dict[str, Any], default: bool) -> bool:
    return bool(table.get("enable", default))


def enabled_tools(config: Config) -> dict[str, BuiltinTool | dict[str, Any]]:
    """Name -> built-in tool or command table, for every tool this turn may use."""
    tables = config.tools()
    out: dict[str, BuiltinTool | dict[str, Any]] = {}
    for name, factory in BUILTINS.items():
        tool = factory()
        if _enabled(tables.get(name, {}), tool.enabled_by_default):
            out[name] = tool
    for name, table in tables.items():
        if name == "*" or name in BUILTINS:
            continue
        if table.get("command") and _enabled(table, True):
            out[name] = table
    return out


def specs(tools: dict[str, BuiltinTool | dict[str, Any]]) -> list[ToolSpec]:
    out = []
    for name, tool in sorted(tools.items()):
        if isinstance(tool, BuiltinTool):
            out.append(tool.spec)
        else:
            schema = tool.get("parameters") or {"type": "object", "properties": {}}
            out.append(ToolSpec(name, str(tool.get("description", f"Run {name}")), dict(schema)))
    return out


def run_command(
    name: str,
    table: dict[str, Any],
    call: ToolCall,
    environ: Mapping[str, str] | None = None,
    secrets: frozenset[str] = PROVIDER_KEYS,
    cap: int | None = None,
) -> ToolOutcome:
    """Run a command tool with the environment its table allows (of ``environ``,
    jp's own environment by default), never holding one of ``secrets``; at most
    ``kept_bytes(cap)`` bytes of its output are kept (``command_run``; ``cap`` is the
    event limit, the default one when None)."""
    command = table["command"]
    argv = shlex.split(command) if isinstance(command, str) else [str(c) for c in command]
    env = tool_environment(table, os.environ if environ is None else environ, secrets)
    timeout = float(table.get("timeout", DEFAULT_TIMEOUT))
    try:
        limit = kept_bytes(Limits().max_event_bytes if cap is None else cap)
        run = capture(argv, json.dumps(call.arguments).encode(), env, timeout, limit)
    except FileNotFoundError:
        return ToolOutcome(f"tool {name}: command not found: {argv[0]}", True)
    except OSError as exc:
        return ToolOutcome(f"tool {name}: {exc}", True)
    if run.timed_out:
        return ToolOutcome(f"tool {name}: timed out after {timeout:g} s", True)
    cut = run.stdout_total > len(run.stdout)
    text, invalid = decoded(bytes(run.stdout), cut)
    if run.returncode != 0:
        errors, bad = decoded(bytes(run.stderr), False)
        detail = (errors.strip() or text.strip())[-2000:]
        note = _notes(invalid + bad, 0, 0)
        return ToolOutcome(f"tool {name} exited {run.returncode}: {detail}{note}", True)
    return ToolOutcome(text + _notes(invalid, run.stdout_total, len(run.stdout) if cut else 0))


def _notes(invalid: int, total: int, kept: int) -> str:
    """What the result says of itself: bytes that were not UTF-8, output not kept."""
    notes = []
    if invalid:
        notes.append(
            f"[jp: the output is not UTF-8 text: {invalid} byte(s) shown as U+FFFD]"
        )
    if kept:
        notes.append(f"[jp: the output was {total} bytes; only the first {kept} were kept]")
    return "".join(f"\n{n}" for n in notes)


def response_event(call: ToolCall, outcome: ToolOutcome, limits: Limits | None = None) -> Event:
    """The result event; a result over the size limit is cut, with a marker saying
    how many bytes were dropped (the model sees what the store keeps)."""
    event = make.tool_call_response(clock.now_text(), call.id, outcome.content, outcome.is_error)
    if outcome.metadata:
        event["metadata"] = outcome.metadata
    return fit_result(event, limits or Limits())


def needs_confirmation(tool: BuiltinTool | dict[str, Any]) -> bool:
    if isinstance(tool, McpTool):
        return tool.ask
    return not isinstance(tool, BuiltinTool) and bool(tool.get("confirm", True))


def unapproved(call: ToolCall, tool: BuiltinTool | dict[str, Any]) -> str:
    """The error result of a tool that asks when nobody is at a terminal: the key
    that lets it run unasked, and ``-y``."""
    name = untrusted_field(call.name)
    said = f"the user was not asked to approve running {name} (no terminal)"
    if isinstance(tool, McpTool):
        table = f"[providers.mcp.{tool.server}.tools.{untrusted_field(tool.tool)}]"
        return f'{said}; `jp -y q ...` approves every call, or set run = "unattended" under {table}'
    table = f"[conversation.tools.{name}]"
    return f"{said}; `jp -y q ...` approves every call, or set confirm = false under {table}"


def confirmation_question(call: ToolCall, tool: BuiltinTool | dict[str, Any]) -> str:
    """`Run tool NAME: `COMMAND` with {ARGS} on stdin?`: the command line jp will run
    and the model's arguments, both one-line and cut short (escaped by ``Output``)."""
    if isinstance(tool, McpTool):
        return question(call, tool)
    if isinstance(tool, BuiltinTool):
        return f"Run tool {untrusted_field(call.name)}?"
    command = tool.get("command")
    argv = shlex.split(command) if isinstance(command, str) else [str(c) for c in command or []]
    line = untrusted_field(shlex.join(argv))
    args = untrusted_field(json.dumps(call.arguments, ensure_ascii=False))
    if len(args) > 400:
        args = args[:397] + "..."
    return f"Run tool {untrusted_field(call.name)}: `{line}` with {args} on stdin?"
