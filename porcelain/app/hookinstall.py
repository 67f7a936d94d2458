"""`jp hooks install|uninstall`: the import-and-sync hook in another tool's settings.

Claude Code reads hooks from its user settings (``~/.claude/settings.json``, in
``$CLAUDE_CONFIG_DIR`` when set), Codex from ``$CODEX_HOME/hooks.json``
(``~/.codex``); both as ``{"hooks": {EVENT: [GROUP, ...]}}`` where a group is
``{"hooks": [{"type": "command", "command": ...}]}``.  An install appends one
group of ours to each event's list (Claude Code: ``Stop`` and ``SessionEnd``;
Codex: ``Stop``, which ends every turn) and changes nothing else; jp's record
(toolfiles.Records) says which lists it appended to and which keys it made, so
an uninstall removes exactly that group and those keys, and refuses while a
group holding our command differs from what jp wrote.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from porcelain.app import toolfiles
from porcelain.app.toolfiles import ToolFile
from porcelain.errors import UserError

TOOLS = ("claude-code", "codex")
EVENTS = {"claude-code": ("Stop", "SessionEnd"), "codex": ("Stop",)}
RECORDS = toolfiles.Records("hooks-installed.json", "jp hooks install")  # beside config.toml


@dataclass(frozen=True)
class Done:
    file: ToolFile
    changed: bool
    command: str
    events: tuple[str, ...]


def target(tool: str, environ: Mapping[str, str]) -> ToolFile:
    if tool == "claude-code":
        return ToolFile(tool, toolfiles.claude_settings(environ))
    return ToolFile(tool, toolfiles.codex_home(environ) / "hooks.json")


def command(tool: str, jp: str, store: Path | None) -> str:
    """The command docs/sessions.md gives, with this jp by its path (and the store
    named by --store or JP_STORE)."""
    head = shlex.quote(jp) + (f" --store {shlex.quote(str(store))}" if store else "")
    return f"{head} conversation import --from {tool} --quiet && {head} sync >/dev/null 2>&1"


TIMEOUT = 60  # seconds: Claude Code gives SessionEnd hooks 1.5 s unless one asks for more


def group(cmd: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": cmd, "timeout": TIMEOUT}]}


# -- the settings file -------------------------------------------------------------------


def _load(file: ToolFile) -> tuple[dict[str, Any], str | None]:
    doc, text = toolfiles.load(file)
    hooks = doc.get("hooks")
    if hooks is None:
        return doc, text
    if not isinstance(hooks, dict):
        raise toolfiles.invalid(file, f"{file.path}: hooks is not a table of events")
    for event in EVENTS[file.tool]:
        if not isinstance(hooks.get(event, []), list):
            raise toolfiles.invalid(file, f"{file.path}: hooks.{event} is not a list")
    return doc, text


def _holds(item: Any, cmd: str) -> bool:
    """Whether a group (of any shape) runs ``cmd``."""
    handlers = item.get("hooks") if isinstance(item, dict) else None
    return isinstance(handlers, list) and any(
        isinstance(h, dict) and h.get("command") == cmd for h in handlers
    )


def _imports(item: Any, tool: str) -> bool:
    """Whether a group runs some `jp conversation import --from TOOL` (one by hand)."""
    handlers = item.get("hooks") if isinstance(item, dict) else None
    return isinstance(handlers, list) and any(
        isinstance(h, dict)
        and isinstance(h.get("command"), str)
        and f"conversation import --from {tool}" in h["command"]
        for h in handlers
    )


# -- install, uninstall ------------------------------------------------------------------


def install(file: ToolFile, cmd: str, environ: Mapping[str, str]) -> Done:
    """Our group in each event's list, what jp added recorded for uninstall."""
    with toolfiles.editing(environ):  # one jp at a time
        return _install(file, cmd, environ)


def _install(file: ToolFile, cmd: str, environ: Mapping[str, str]) -> Done:
    records = RECORDS.read(environ)
    mine = records.get(file.tool)
    if isinstance(mine, dict) and mine.get("file") not in (None, str(file.path)):
        raise UserError(
            f"jp's {file.tool} hook is in {mine['file']}, not {file.path}",
            f"take it out there first: `jp hooks uninstall {file.tool}`",
        )
    doc, text = _load(file)
    made: set[str] = set()
    ours = group(cmd)
    if isinstance(mine, dict) and _ours(mine) != ours:
        _take_back(file, doc, mine, environ)  # an earlier install: another jp, store or form
        made = {"file"} & set(mine.get("made", []))
        mine = None
    before = copy.deepcopy(doc)
    added = set(mine.get("added", [])) if mine else set()
    made |= set(mine.get("made", [])) if mine else set()
    if text is None:
        made.add("file")  # uninstall removes it again when it holds nothing else
    if "hooks" not in doc:
        doc["hooks"] = {}
        made.add("hooks")
    for event in EVENTS[file.tool]:
        if event not in doc["hooks"]:
            doc["hooks"][event] = []
            made.add(event)
        groups = doc["hooks"][event]
        if ours not in groups:
            groups.append(ours)
            added.add(event)
    changed = doc != before
    record = {
        "file": str(file.path),
        "command": cmd,
        "group": ours,
        "added": sorted(added),
        "made": sorted(made),
    }
    if changed or records.get(file.tool) != record:
        records[file.tool] = record
        RECORDS.keep(environ, records)  # first: a crash leaves a record, never a stray hook
    if changed:
        toolfiles.save(file, doc, text)
    return Done(file, changed, cmd, EVENTS[file.tool])


def uninstall(file: ToolFile, environ: Mapping[str, str]) -> Done:
    """Our group taken out of each list jp appended it to, the keys jp made removed
    when empty; refused while one of our groups was edited."""
    with toolfiles.editing(environ):  # one jp at a time
        return _uninstall(file, environ)


def _uninstall(file: ToolFile, environ: Mapping[str, str]) -> Done:
    records = RECORDS.read(environ)
    mine = records.get(file.tool)
    if not isinstance(mine, dict):
        raise UserError(
            f"jp has not installed its hook for {file.tool}",
            f"install it: `jp hooks install {file.tool}`",
        )
    file = ToolFile(file.tool, Path(str(mine.get("file") or file.path)))
    doc, text = _load(file)
    changed = _take_back(file, doc, mine, environ)
    if changed and doc == {} and "file" in mine.get("made", []):
        toolfiles.remove(file)  # jp made it: gone again, as before the install
    elif changed:
        toolfiles.save(file, doc, text)
    del records[file.tool]
    RECORDS.keep(environ, records)
    return Done(file, changed, str(mine.get("command")), tuple(mine.get("added", [])))


def _take_back(file: ToolFile, doc: dict[str, Any], mine: dict[str, Any], environ: Any) -> bool:
    """``doc`` without what ``mine`` says jp added (in memory); whether it changed."""
    cmd = str(mine.get("command"))
    ours = _ours(mine)
    found = doc.get("hooks")
    hooks: dict[str, Any] = found if isinstance(found, dict) else {}
    edited = [
        event
        for event in mine.get("added", [])
        if ours not in hooks.get(event, []) and any(_holds(g, cmd) for g in hooks.get(event, []))
    ]
    if edited:
        raise UserError(
            f"jp's {', '.join(edited)} hook in {file.path} changed since jp installed it; "
            "jp left it",
            f"edit it by hand, then forget jp's record: remove {file.tool} from "
            f"{RECORDS.path(environ)}",
        )
    changed = False
    for event in mine.get("added", []):
        groups = hooks.get(event, [])
        if ours in groups:  # the last one: jp appended it
            del groups[len(groups) - 1 - groups[::-1].index(ours)]
            changed = True
    for event in mine.get("made", []):
        if event != "hooks" and hooks.get(event) == []:
            del hooks[event]
            changed = True
    if "hooks" in mine.get("made", []) and doc.get("hooks") == {}:
        del doc["hooks"]
        changed = True
    return changed


def _ours(mine: dict[str, Any]) -> Any:
    """The group an install recorded (as it wrote it, whatever this jp would write)."""
    return mine.get("group") or group(str(mine.get("command")))


# -- what `jp status` says ---------------------------------------------------------------


def state(tool: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """Whether ``tool`` runs an import hook: ``installed`` is "jp" (ours, as jp wrote
    it), "by hand" (some other hook that imports), or None; reads only."""
    file = target(tool, environ)
    mine = RECORDS.read(environ).get(tool)
    if isinstance(mine, dict):
        file = ToolFile(tool, Path(str(mine.get("file") or file.path)))
    report: dict[str, Any] = {"tool": tool, "file": str(file.path), "installed": None}
    try:
        doc, _ = _load(file)
    except UserError as exc:
        report["problem"] = exc.message
        return report
    hooks = doc.get("hooks") or {}
    lists = [hooks.get(event, []) for event in EVENTS[tool]]
    if isinstance(mine, dict):
        ours = _ours(mine)
        if all(ours in groups for groups in lists):
            report["installed"] = "jp"
            return report
    if any(_imports(g, tool) for groups in lists for g in groups):
        report["installed"] = "by hand"
    return report


def installed_elsewhere(file: ToolFile, cmd: str) -> bool:
    """Whether another hook in the file imports the same tool's sessions."""
    doc, _ = _load(file)
    hooks = doc.get("hooks") or {}
    return any(
        _imports(g, file.tool) and not _holds(g, cmd)
        for event in EVENTS[file.tool]
        for g in hooks.get(event, [])
    )
