"""Move one ref by compare-and-swap as git's files backend does, without libgit2.

libgit2 reads and parses all of ``packed-refs`` before it writes any ref (to see
whether the name is packed): 80 ms in a store of 100,000 conversations and as
many copies, paid by every command that records an operation, appends to a
conversation or writes a note.  git finds the one name by bisection.  This module
does what git does for a loose ref:

- take ``<ref>.lock`` (created exclusively: a writer holding it, or git packing
  refs, makes the move fail, as it makes libgit2's);
- read the ref's value under that lock (its loose file, else its line of
  ``packed-refs``, found by bisection) and fail unless it is the expected one;
- append the reflog line when the store logs that ref (``logs/<ref>``);
- rename the lock over the ref.

It moves refs whose value is an object id and that exist already (creation and
symbolic refs stay with libgit2), in stores whose refs are plain files; for
anything else ``swap`` says False and ``update_refs`` moves the ref through
libgit2's transaction.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.fs import atomic
from gitstore.git.refs import files

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

_OID_LEN = 40


class Refused(Exception):
    """The ref held another value than the expected one, or its lock was taken."""


class Held(Refused):
    """The ref's lock was taken (another writer, git packing refs)."""


def swap(gitdir: Path, name: str, old: str, new: str, log: str | None) -> bool:
    """Move ref ``name`` of ``gitdir`` from ``old`` to ``new`` (both object ids);
    ``log``: the reflog line's identity and message (``"Name <mail>\\tmessage"``),
    or None for no reflog line.  True when moved; False when this
    store or ref is not one this module moves (the caller uses libgit2).  Raises
    ``Refused`` when the ref moved first or its lock is held, ``EnvironmentFault``
    or ``OSError`` for a fault of the file system (a full disk, a read-only store)."""
    if len(old) != _OID_LEN or len(new) != _OID_LEN or files.plain_gitdir(gitdir) != gitdir:
        return False
    path = gitdir / name
    lock = Path(f"{path}.lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        raise Held(f"{name}: its lock is held ({lock})") from None
    except (NotADirectoryError, FileNotFoundError, IsADirectoryError):
        return False  # a folder missing or in the way: libgit2 says what is wrong
    moved = False
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            now = files.read_ref(gitdir, name, depth=0)  # under the lock: loose, else packed
            if now is None:
                return False  # symbolic, unreadable or not there: not this module's case
            if now != old:
                raise Refused(f"{name}: is at {now}, not {old}")
            out.write(new + "\n")
        if log is not None:
            _log(gitdir, name, old, new, log)
        atomic.replace(lock, path)  # a fault of the disk named as one
        moved = True
        return True
    finally:
        if not moved:
            lock.unlink(missing_ok=True)


def _log(gitdir: Path, name: str, old: str, new: str, log: str) -> None:
    """Append the reflog line of this move."""
    logfile = gitdir / "logs" / name
    logfile.parent.mkdir(parents=True, exist_ok=True)
    who, _, message = log.partition("\t")
    offset = time.localtime().tm_gmtoff // 60
    sign = "+" if offset >= 0 else "-"
    stamp = f"{int(time.time())} {sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    message = " ".join(message.split())  # one line, as git writes it
    with open(logfile, "a", encoding="utf-8") as out:
        out.write(f"{old} {new} {who} {stamp}\t{message}\n")


def logged(repo: pygit2.Repository, name: str) -> bool:
    """Whether a move of ``name`` is logged (``core.logAllRefUpdates``, as libgit2
    reads it: unset is false in a bare repository)."""
    try:
        value = str(repo.config["core.logAllRefUpdates"]).lower()
    except (KeyError, ValueError):
        value = "false" if repo.is_bare else "true"
    if value in ("false", "no", "off", "0"):
        return False
    if value == "always" or (Path(repo.path) / "logs" / name).is_file():
        return True
    return name.startswith(("refs/heads/", "refs/remotes/", "refs/notes/"))


def identity(repo: pygit2.Repository) -> str:
    """Whom the reflog names: the store's configured identity, as libgit2's."""
    try:
        sig = repo.default_signature
    except (KeyError, ValueError, pygit2.GitError):
        return "unknown <unknown>"
    return f"{sig.name} <{sig.email}>"
