"""The store's format version: ``jp.format`` in the store's git config.

``jp init`` writes it, and so does the first write to a store that predates
it.  A store whose format is newer than this jp knows is refused before
anything is read or written (``StoreFormatTooNew``), so an older jp never
misreads, or half-updates, what a newer one wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.errors import StoreFormatTooNew
from gitstore.git import config as gitconfig
from gitstore.git.config import IncludesOthers, config_entries

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

FORMAT = 1
SECTION, KEY = "jp", "format"


def _from_text(text: str) -> str | None:
    """The last ``jp.format`` of a config file's text (``IncludesOthers`` if it cannot say)."""
    found: str | None = None
    for section, name, value in config_entries(text):
        if section == SECTION and name == KEY and value is not None:
            found = value
    return found


def _number(value: str | None) -> int | None:
    """A format number; anything this jp did not write counts as newer than it knows."""
    if value is None:
        return None
    text = value.strip()
    return int(text) if text.isascii() and text.isdigit() else UNKNOWN


UNKNOWN = 1 << 30  # a value that is not a number: some newer jp's


def read(gitdir: Path, repo: Callable[[], pygit2.Repository] | None = None) -> int | None:
    """The recorded format (None: not recorded, an older store)."""
    try:
        return _number(_from_text(gitconfig.text(gitdir)))
    except OSError:
        return None
    except IncludesOthers:
        pass
    if repo is None:
        return None
    try:
        return _number(str(repo().config[f"{SECTION}.{KEY}"]))
    except (KeyError, pygit2.GitError):
        return None


def check(path: Path, found: int | None) -> None:
    """Refuse a store of a newer format."""
    if found is not None and found > FORMAT:
        raise StoreFormatTooNew(str(path), found, FORMAT)


def write(repo: pygit2.Repository) -> None:
    """Record this jp's format in a store that has none (or an older one)."""
    try:
        current = _number(str(repo.config[f"{SECTION}.{KEY}"]))
    except (KeyError, pygit2.GitError):
        current = None
    if current is None or current < FORMAT:
        repo.config[f"{SECTION}.{KEY}"] = str(FORMAT)
