"""The lines of a ``packed-refs`` file, and the first one that is not one.

A leaf: ``packed`` (the rebuild of a damaged file) and ``transaction`` (which
checks the file before a move that would rewrite it) both read it.
"""

from __future__ import annotations

import re
from pathlib import Path

HEADER = "# pack-refs with: peeled fully-peeled sorted "
# compiled when first used (re's cache): most commands never check a line
_LINE = r"[0-9a-f]{40} refs/[!-~]+"
_PEELED = r"\^[0-9a-f]{40}"


def path(gitdir: Path) -> Path:
    """The ``packed-refs`` file of ``gitdir``."""
    return gitdir / "packed-refs"


def damage(gitdir: Path) -> str | None:
    """What is wrong with ``packed-refs`` (its first bad line), None if nothing."""
    try:
        data = path(gitdir).read_bytes()
    except OSError:
        return None
    if data and not data.endswith(b"\n"):
        return "its last line is cut short"
    for number, line in enumerate(data.split(b"\n")[:-1], 1):
        if not good(line, number):
            shown = line[:60].decode("ascii", "replace")
            return f"line {number} is not a ref: {shown!r}"
    return None


def good(line: bytes, number: int) -> bool:
    """Whether ``line`` (the ``number``-th, from 1) is one git reads."""
    try:
        text = line.decode("ascii")
    except UnicodeDecodeError:
        return False
    if number == 1 and text.startswith("# pack-refs"):
        return True
    return bool(re.fullmatch(_LINE, text) or re.fullmatch(_PEELED, text))
