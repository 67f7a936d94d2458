"""`jp mcp install|uninstall`: the server's entry in another tool's own configuration.

Claude Code keeps its user-scope MCP servers in ``~/.claude.json`` (in
``$CLAUDE_CONFIG_DIR`` when that is set), under ``mcpServers``; Codex keeps its
servers in ``$CODEX_HOME/config.toml`` (``~/.codex``), as ``[mcp_servers.NAME]``
tables.  An install changes only the entry named ``jp`` there, keeps every
other setting (TOML through tomlkit, so comments and layout survive; JSON
parsed and written back whole, the file's mode kept), and records in jp's own
configuration folder what the entry was before; ``uninstall`` puts that back
(or removes the entry) only while the entry is still exactly what jp wrote.
A file that does not parse is an error and is never rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from porcelain.app import toolfiles
from porcelain.app.toolfiles import ToolFile as Target
from porcelain.config import tomldoc
from porcelain.errors import UserError

NAME = "jp"  # the server's name in the other tool's configuration
TOOLS = ("claude-code", "codex")
RECORDS = toolfiles.Records("mcp-installed.json", "jp mcp install")  # beside jp's config.toml


@dataclass(frozen=True)
class Done:
    target: Target
    changed: bool
    entry: dict[str, Any] | None  # what the entry is now (None: gone)


def target(tool: str, environ: Mapping[str, str]) -> Target:
    if tool == "claude-code":
        return Target(tool, toolfiles.claude_state(environ))
    return Target(tool, toolfiles.codex_home(environ) / "config.toml")


def entry(target: Target, command: str, args: Sequence[str]) -> dict[str, Any]:
    """The server's entry as the tool documents a stdio server."""
    if target.toml:
        return {"command": command, "args": list(args)}
    return {"type": "stdio", "command": command, "args": list(args), "env": {}}


# -- the other tool's file ---------------------------------------------------------------


def _load(target: Target) -> tuple[Any, str | None]:
    """The parsed file (an empty one when it is missing) and its text."""
    doc, text = toolfiles.load(target)
    servers = doc.get(_key(target))
    if servers is not None and not isinstance(servers, dict):
        raise toolfiles.invalid(target, f"{target.path}: {_key(target)} is not a table of servers")
    return doc, text


def _key(target: Target) -> str:
    return "mcp_servers" if target.toml else "mcpServers"


_plain = toolfiles.plain
_save = toolfiles.save


def _set(target: Target, doc: Any, value: dict[str, Any] | None) -> None:
    key = _key(target)
    if target.toml:
        tomldoc.put(doc, key, NAME, value)
    elif value is None:
        if NAME in (doc.get(key) or {}):
            del doc[key][NAME]
    else:
        doc.setdefault(key, {})[NAME] = value


def current(target: Target) -> dict[str, Any] | None:
    doc, _ = _load(target)
    found = _plain((doc.get(_key(target)) or {}).get(NAME))
    return found if isinstance(found, dict) else None


# -- install, uninstall ----------------------------------------------------------------


def install(target: Target, ours: dict[str, Any], environ: Mapping[str, str]) -> Done:
    """Our entry in ``target``'s file, what was there recorded (once) for uninstall."""
    with toolfiles.editing(environ):  # one jp at a time
        return _install(target, ours, environ)


def _install(target: Target, ours: dict[str, Any], environ: Mapping[str, str]) -> Done:
    records = RECORDS.read(environ)
    doc, text = _load(target)
    there = _plain((doc.get(_key(target)) or {}).get(NAME))
    mine = records.get(target.tool)
    if there == ours and mine is not None:
        return Done(target, False, ours)
    # an earlier install of ours (another jp, another store) keeps its "before"
    if mine is not None and there == mine.get("ours"):
        before = mine.get("before")
    else:
        before = None if there == ours else there
    _set(target, doc, ours)
    records[target.tool] = {"file": str(target.path), "ours": ours, "before": before}
    RECORDS.keep(environ, records)  # first: a crash leaves a record, never an untracked entry
    _save(target, doc, text)
    return Done(target, True, ours)


def uninstall(target: Target, environ: Mapping[str, str]) -> Done:
    """What the entry was before our install put back, while it is still ours."""
    with toolfiles.editing(environ):  # one jp at a time
        return _uninstall(target, environ)


def _uninstall(target: Target, environ: Mapping[str, str]) -> Done:
    records = RECORDS.read(environ)
    mine = records.get(target.tool)
    if mine is None:
        raise UserError(
            f"jp has not installed its server for {target.tool}",
            f"install it: `jp mcp install {target.tool}`",
        )
    target = Target(target.tool, Path(str(mine.get("file") or target.path)))
    doc, text = _load(target)
    there = _plain((doc.get(_key(target)) or {}).get(NAME))
    if there is not None and there != mine.get("ours"):
        raise UserError(
            f"the {NAME} entry in {target.path} changed since jp installed it; jp left it",
            f"edit it by hand, then forget jp's record: remove {target.tool} from "
            f"{RECORDS.path(environ)}",
        )
    before = mine.get("before")
    changed = there is not None
    if changed:
        _set(target, doc, before if isinstance(before, dict) else None)
        _save(target, doc, text)
    del records[target.tool]
    RECORDS.keep(environ, records)
    return Done(target, changed, before if isinstance(before, dict) else None)
