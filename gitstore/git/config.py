"""A git directory's own ``config`` file: read as git reads it, changed in one step.

Reading, without libgit2 (``config_entries``, ``config_flag``): whether a
folder is a store (``jp.store``) or a project's, and its format.

Changing (``edit``).  libgit2 writes each single change atomically (a lock file
renamed over the file), but a change of several keys is several writes: a
process killed between two of them leaves a remote half removed, or a
project's remote without the refspecs that were to be written back.  Here
every change is made on a copy; the copy's bytes then go into ``config.lock``,
taken the way git takes it (created exclusively, so no git or jp writes
meanwhile), and that file is renamed over ``config``.  When the file changed
between the copy and the lock, the change is made again on the new file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore import faults
from gitstore.errors import StoreError
from gitstore.fs import atomic, retry

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

RETRIES = 5
_ERE_SPECIAL = set("\\.^$|?*+()[]{}")


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


def text(gitdir: Path) -> str:
    """The git directory's own ``config`` file (``OSError`` when it cannot be read)."""
    return (gitdir / "config").read_text(encoding="utf-8", errors="replace")


def own(gitdir: Path) -> pygit2.Config:
    """The git directory's own ``config`` file alone, parsed by libgit2: not the
    user's or the system's, and no ``url.<base>.insteadOf`` applied to a URL."""
    return pygit2.Config(str(gitdir / "config"))


def config_flag(gitdir: Path, section: str, key: str) -> bool | None:
    """A boolean from the git directory's own ``config`` file (unset: False), or None
    when this cannot say for sure (not a boolean, or the file includes others)."""
    try:
        found = text(gitdir)
    except OSError:
        return None
    value = False
    try:
        for found_section, name, raw in config_entries(found):
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


def exact(values: list[str]) -> str:
    """A regular expression (POSIX extended, as libgit2 takes it) matching
    exactly one of ``values``."""
    escaped = ("".join("\\" + c if c in _ERE_SPECIAL else c for c in v) for v in values)
    return "^(" + "|".join(escaped) + ")$"


def _changed_copy(path: Path, before: bytes, change: Callable[[pygit2.Config], None]) -> bytes:
    import tempfile  # lazy: start-up reads the config; only a change copies it

    work_dir = path.parent / "jp"
    work_dir.mkdir(exist_ok=True)
    handle, name = tempfile.mkstemp(prefix="config-", suffix=".tmp", dir=work_dir)
    try:
        with os.fdopen(handle, "wb") as fh:
            fh.write(before)
        copy = pygit2.Config(name)
        change(copy)
        del copy
        return Path(name).read_bytes()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _install(path: Path, before: bytes, after: bytes) -> bool:
    """Put ``after`` in place of ``path`` if it still holds ``before`` (else False)."""
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        raise StoreError(
            str(path.parent),
            f"{lock} exists: another git or jp is changing the configuration "
            "(if none is running, one was killed: delete that file and run the command again)",
        ) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if path.read_bytes() != before:
                return False
            fh.write(after)
            fh.flush()
            os.fchmod(fh.fileno(), path.stat().st_mode & 0o777)
            os.fsync(fh.fileno())
        faults.point("config:locked")
        atomic.replace(lock, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
    atomic.sync_folder(path.parent)
    return True


def edit(gitdir: Path, change: Callable[[pygit2.Config], None]) -> bool:
    """Apply ``change`` to ``gitdir/config`` in one step.  Returns whether the file changed."""
    path = gitdir / "config"
    for _ in retry.tries(RETRIES):
        try:
            before = path.read_bytes()
        except OSError as exc:
            raise StoreError(str(gitdir), f"cannot read its config: {exc.strerror}") from None
        try:
            after = _changed_copy(path, before, change)
        except OSError as exc:
            raise StoreError(str(gitdir), f"cannot change its config: {exc.strerror}") from None
        if after == before:
            return False
        try:
            if _install(path, before, after):
                return True
        except OSError as exc:
            raise StoreError(str(gitdir), f"cannot write its config: {exc.strerror}") from None
    raise StoreError(str(gitdir), "its config kept changing under another writer; run again")
