"""Values of a git directory's own ``config`` file, read as git reads them, without
libgit2: whether a folder is a store (``jp.store``) or a project's, and its format."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


class IncludesOthers(Exception):
    """A git config file that includes others: it alone cannot say what a value is."""


def config_entries(text: str) -> Iterator[tuple[str, str, str | None]]:
    """``(section, key, value)`` per entry of a git config file's text, lowercased names;
    a key without ``=`` has the value None (git reads it as true).  Raises
    ``IncludesOthers`` at an ``[include]`` section."""
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            current = line[1:].split("]", 1)[0].strip().lower()
            if current.startswith("include"):
                raise IncludesOthers(current)
            continue
        name, sep, rest = line.partition("=")
        value = rest.split("#", 1)[0].split(";", 1)[0].strip().strip('"') if sep else None
        yield current, name.strip().lower(), value


def config_flag(gitdir: Path, section: str, key: str) -> bool | None:
    """A boolean from the git directory's own ``config`` file (unset: False), or None
    when this cannot say for sure (not a boolean, or the file includes others)."""
    try:
        text = (gitdir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    value = False
    try:
        for found_section, name, raw in config_entries(text):
            if found_section != section or name != key:
                continue
            word = "true" if raw is None else raw.lower()
            if word in ("true", "yes", "on", "1"):
                value = True
            elif word in ("false", "no", "off", "0", ""):
                value = False
            else:
                return None
    except IncludesOthers:
        return None  # values from elsewhere may override
    return value
