"""The small files Claude Code keeps beside a subagent's stream (``agent-X.meta.json``:
the agent's type, description, the tool call that started it), kept with the
stream's conversation and written back byte for byte by `export`.

Each is a ``source_file`` event (a type older versions keep and ignore) holding
the file's name and its bytes in base64; a later import adds another when the
file's bytes changed, and `export` writes the last one of each name.  Only
regular files are read (a link is never followed), at most ``MAX_FILES`` of at
most ``MAX_BYTES`` each; what is left out is named in the import's report.
"""

from __future__ import annotations

import base64
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from gitstore import Event

KIND = "source_file"
MAX_FILES = 8
MAX_BYTES = 256 << 10


def beside(stream: Path) -> tuple[list[tuple[str, bytes]], list[str]]:
    """The files named ``<stream's stem>.*`` beside ``stream`` (not streams themselves):
    ``(name, bytes)`` in name order, and why others were left out."""
    stem = stream.name.removesuffix(".jsonl") + "."
    found: list[tuple[str, bytes]] = []
    left: list[str] = []
    try:
        names = sorted(n for n in os.listdir(stream.parent) if n.startswith(stem))
    except OSError:
        return [], []
    for name in names:
        if name.endswith(".jsonl") or name.startswith("."):
            continue
        path = stream.parent / name
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                left.append(f"{path}: not a regular file (a link is never followed)")
                continue
            if st.st_size > MAX_BYTES or len(found) >= MAX_FILES:
                left.append(f"{path}: over {MAX_FILES} files of {MAX_BYTES >> 10} KiB each")
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except OSError as exc:
            left.append(f"{path}: cannot be read: {exc.strerror or exc}")
            continue
        if len(data) <= MAX_BYTES:
            found.append((name, data))
    return found, left


def kept(events: Iterable[Event]) -> dict[str, bytes]:
    """The last bytes stored for each name (malformed events are skipped)."""
    out: dict[str, bytes] = {}
    for event in events:
        if event.get("type") != KIND:
            continue
        name, data = event.get("name"), event.get("data")
        if not isinstance(name, str) or not isinstance(data, str) or name_problem(name):
            continue
        try:
            out[name] = base64.b64decode(data, validate=True)
        except ValueError:
            continue
    return out


def new_events(
    files: Sequence[tuple[str, bytes]], stored: dict[str, bytes], timestamp: str
) -> list[Event]:
    """An event for each file whose bytes are not the stored ones."""
    return [
        {"type": KIND, "timestamp": timestamp, "name": name,
         "data": base64.b64encode(data).decode("ascii")}
        for name, data in files
        if stored.get(name) != data
    ]  # fmt: skip


def name_problem(name: str) -> str | None:
    """Why ``name`` (from a stored event, maybe a remote's) may not be written."""
    if not name or len(name) > 255 or name in (".", "..") or name.startswith("."):
        return "not a plain file name"
    if "/" in name or "\\" in name or any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a file name with a separator or control character"
    if name.endswith(".jsonl"):
        return "a session stream's name"
    return None
