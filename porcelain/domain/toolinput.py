"""A tool call's input in one line: what a reader wants to see of it first.

The Bash command, the file path, the search pattern, the URL, a subagent's
task; for any other tool (an MCP tool's, Codex's) its arguments as compact
JSON.  Pure; the caller escapes it (the arguments came from a model).
"""

from __future__ import annotations

import json
from typing import Any

LIMIT = 300  # characters of the line, at most

# the argument that says what a call does, by the tool's name (Claude Code's and Codex's)
KEYS = {
    "Bash": ("command",),
    "BashOutput": ("bash_id",),
    "Read": ("file_path",),
    "Write": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "Glob": ("pattern", "path"),
    "Grep": ("pattern", "path", "glob"),
    "WebFetch": ("url",),
    "WebSearch": ("query",),
    "Task": ("subagent_type", "description"),
    "Agent": ("subagent_type", "description"),
    "Skill": ("skill",),
    "shell": ("command",),
    "exec_command": ("cmd",),
    "apply_patch": ("input",),
    "update_plan": ("explanation",),
}


def one_line(name: str, arguments: Any) -> str:
    """``arguments`` of a call of ``name`` as one line of at most ``LIMIT`` characters."""
    if not isinstance(arguments, dict) or not arguments:
        return ""
    keys = KEYS.get(name)
    if keys is not None:
        parts = [_text(arguments[k]) for k in keys if arguments.get(k) not in (None, "", [])]
        if parts:
            return _cut(" · ".join(parts))
    if name == "TodoWrite" and isinstance(arguments.get("todos"), list):
        return f"{len(arguments['todos'])} to-dos"
    return _cut(json.dumps(arguments, ensure_ascii=False, separators=(", ", ": ")))


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _cut(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= LIMIT else line[: LIMIT - 1] + "…"
