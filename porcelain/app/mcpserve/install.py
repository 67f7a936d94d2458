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

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitstore import write_atomic
from porcelain.config import tomldoc
from porcelain.domain.places import user_config_path
from porcelain.errors import UserError

NAME = "jp"  # the server's name in the other tool's configuration
TOOLS = ("claude-code", "codex")
RECORD = "mcp-installed.json"  # beside jp's own config.toml


@dataclass(frozen=True)
class Target:
    tool: str
    path: Path

    @property
    def toml(self) -> bool:
        return self.tool == "codex"


@dataclass(frozen=True)
class Done:
    target: Target
    changed: bool
    entry: dict[str, Any] | None  # what the entry is now (None: gone)


def target(tool: str, environ: Mapping[str, str]) -> Target:
    home = Path(environ.get("HOME") or Path.home())
    if tool == "claude-code":
        folder = environ.get("CLAUDE_CONFIG_DIR")
        return Target(tool, Path(folder) / ".claude.json" if folder else home / ".claude.json")
    codex = environ.get("CODEX_HOME")
    return Target(tool, (Path(codex) if codex else home / ".codex") / "config.toml")


def entry(target: Target, command: str, args: Sequence[str]) -> dict[str, Any]:
    """The server's entry as the tool documents a stdio server."""
    if target.toml:
        return {"command": command, "args": list(args)}
    return {"type": "stdio", "command": command, "args": list(args), "env": {}}


def _record_path(environ: Mapping[str, str]) -> Path:
    return user_config_path(environ).parent / RECORD


def _records(environ: Mapping[str, str]) -> dict[str, Any]:
    path = _record_path(environ)
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UserError(
            f"cannot read {path}: {exc}",
            "it records what `jp mcp install` replaced; fix or remove it",
        ) from None
    return found if isinstance(found, dict) else {}


def _keep_records(environ: Mapping[str, str], records: dict[str, Any]) -> None:
    path = _record_path(environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(records, indent=2, sort_keys=True) + "\n")


# -- the other tool's file ---------------------------------------------------------------


def _load(target: Target) -> tuple[Any, str | None]:
    """The parsed file (an empty one when it is missing) and its text."""
    try:
        text = target.path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {target.path}: {exc}") from None
    hint = f"fix it by hand (jp left {target.path} as it was)"
    if target.toml:
        try:
            doc: Any = tomldoc.parse(text or "")
        except ValueError as exc:
            raise UserError(f"{target.path} is not valid TOML: {exc}", hint) from None
    else:
        try:
            doc = json.loads(text) if text and text.strip() else {}
        except ValueError as exc:
            raise UserError(f"{target.path} is not valid JSON: {exc}", hint) from None
        if not isinstance(doc, dict):
            raise UserError(f"{target.path} does not hold a JSON object", hint)
    servers = doc.get(_key(target))
    if servers is not None and not isinstance(servers, dict):
        raise UserError(f"{target.path}: {_key(target)} is not a table of servers", hint)
    return doc, text


def _key(target: Target) -> str:
    return "mcp_servers" if target.toml else "mcpServers"


def _plain(value: Any) -> Any:
    """A tomlkit item as plain Python (JSON values are plain already)."""
    return tomldoc.plain(value)


def _save(target: Target, doc: Any, before: str | None) -> None:
    if target.toml:
        text = tomldoc.dumps(doc)
    else:
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    mode = None
    if before is not None:
        mode = target.path.stat().st_mode & 0o7777  # ~/.claude.json holds credentials: 0600
    target.path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target.path, text, durable=True, mode=mode if mode is not None else 0o600)


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
    records = _records(environ)
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
    _keep_records(environ, records)  # first: a crash leaves a record, never an untracked entry
    _save(target, doc, text)
    return Done(target, True, ours)


def uninstall(target: Target, environ: Mapping[str, str]) -> Done:
    """What the entry was before our install put back, while it is still ours."""
    records = _records(environ)
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
            f"{_record_path(environ)}",
        )
    before = mine.get("before")
    changed = there is not None
    if changed:
        _set(target, doc, before if isinstance(before, dict) else None)
        _save(target, doc, text)
    del records[target.tool]
    _keep_records(environ, records)
    return Done(target, changed, before if isinstance(before, dict) else None)
