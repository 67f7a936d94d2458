"""Small JSON files of a store's local state (the quarantine's reasons, the
journal's pull count): read as an object or nothing, written whole by rename.

A reader never sees half a file: each write goes to a temporary name of its own
(``atomic.write``), then replaces the file in one rename, so two processes writing at once
leave one of their files, never a mix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gitstore.fs import atomic


def read_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; empty when it is missing, unreadable or not an
    object (local state: a lost file only costs its hint)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write(path: Path, data: Any, pretty: bool = False) -> None:
    """``data`` as ``path``'s whole content (``pretty``: indented, sorted, one
    final newline), through a temporary file of its own and a rename."""
    text = (
        json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        if pretty
        else json.dumps(data)
    )
    atomic.write(path, text)
