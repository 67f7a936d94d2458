"""Advisory file locks under ``<gitdir>/jp/locks/`` that the kernel drops when
the holder dies, so a killed jp never leaves a stale lock behind.

The holder writes itself into the lock file (pid, host, time), so a lock
that is held can be named with its owner (``jp doctor``); a lock file whose
``flock`` is free is no lock at all, whatever it says.

git's own ref lock files (``<ref>.lock``) are another matter: their content
is the ref's new value, they carry no owner, and a killed git or libgit2
leaves them behind.  A live writer holds one for milliseconds, so one older
than ``REF_LOCK_STALE`` seconds has no live writer: a blocked command says
so, and ``jp doctor --fix`` removes it.

A writer's own record (a ref journal, a pending operation) is locked with
``flock`` for as long as it lives: one whose lock ``claim`` takes has no writer
left, and whoever takes it finishes the writer's work.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from gitstore.fs import retry

REF_LOCK_STALE = 10.0  # seconds: no live writer holds a git ref lock this long
# What jp writes in a project's repository (`jp init --here`): only these locks are its own
JP_LOCKS = (
    "JP_HEAD.lock",
    "refs/conversations/",
    "refs/archive/conversations/",
    "refs/jp/",
    "refs/jp-remotes/",
    "refs/notes/jp/",
)


def folder(gitdir: Path) -> Path:
    return gitdir / "jp" / "locks"


class Owner(NamedTuple):
    pid: int
    host: str
    since: float


@contextmanager
def held(gitdir: Path, name: str, wait: float, busy: Exception) -> Iterator[None]:
    """Hold lock ``name``, waiting up to ``wait`` seconds, else raise ``busy``."""
    where = folder(gitdir)
    where.mkdir(parents=True, exist_ok=True)
    fd = os.open(where / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        for attempt in retry.until(wait, 0.05):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt.last:
                    who = owner(where / f"{name}.lock")
                    if who is not None and hasattr(busy, "owner"):
                        busy.owner = f"pid {who.pid} on {who.host}"  # for the message
                    raise busy from None
        _write_owner(fd)
        yield
    finally:
        os.close(fd)


def _write_owner(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {os.uname().nodename} {time.time():.3f}\n".encode(), 0)
    except OSError:
        pass  # the owner is for people; the flock is the lock


def owner(path: Path) -> Owner | None:
    """Who wrote ``path`` last as its holder (None if it does not say)."""
    try:
        pid, host, since = path.read_text(errors="replace").split()[:3]
        return Owner(int(pid), host, float(since))
    except (OSError, ValueError):
        return None


def is_held(path: Path) -> bool:
    """Whether a live process holds the lock file ``path`` (its ``flock``)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def ref_lock_age(path: Path) -> float | None:
    """Seconds since a git lock file was written (None: there is none)."""
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return None


def jp_owned(name: str, project: bool) -> bool:
    """Whether the git lock file ``name`` (relative to the git directory) guards
    something only jp writes, so that one old enough has no live writer.

    In a store of its own every ref is jp's (git's maintenance, which jp starts,
    packs them); in a project's repository only jp's refs are, and git's own
    locks (``index.lock``, which ``git commit`` holds while its editor is open,
    ``HEAD.lock``, a branch's, ``packed-refs.lock``, ``config.lock``) carry no
    owner, so nothing proves their writer gone: jp never removes them.
    """
    if name == "index.lock":
        return False
    return not project or name.startswith(JP_LOCKS)


def claim(path: Path, still_there: bool = False) -> int | None:
    """A descriptor holding ``path``'s lock, or None while its writer lives (or it is gone).

    ``still_there``: also None when the file was removed (and perhaps made
    again) between the open and the lock, as a writer that completes does.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if still_there and os.fstat(fd).st_ino != os.stat(path).st_ino:
            raise OSError("completed and removed meanwhile")
    except OSError:
        os.close(fd)
        return None
    return fd
