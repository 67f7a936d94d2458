"""The ``git gc`` running beside a write, read from its ``gc.pid``, and waited for
when its prune could take what the write made (why: ``git/pruned.py``, the one
rule for a write beside a prune).  Only a ``--prune=now`` gc takes new objects;
git's own (``--auto``, two weeks' grace) is not waited for, and ``git prune
--expire=now`` run alone holds no ``gc.pid`` and is not seen.

``holding`` takes git's own gc lock (``gc.pid``, as ``git gc`` takes it) for a
moment: meanwhile no ``git gc`` starts ("gc is already running"), so what a write
puts back after such a prune stays.  A ``gc.pid`` whose process died is stale to
git, and to jp.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

GC_WAIT = 30.0  # seconds a write waits for a git gc beside it to end
GC_STALE = 12 * 3600  # a gc.pid this old is a gc that died (as git reads it)
LOCK_WAIT = 1.0  # seconds a gc.pid.lock may stay before it is taken for a killed gc's


def gc_running(gitdir: Path) -> str | None:
    """The ``gc.pid`` of the ``git gc`` that runs in this store now (``PID HOST``:
    fresh, and naming a live process here or one on another machine), or None."""
    path = gitdir / "gc.pid"
    try:
        age = time.time() - path.stat().st_mtime
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    pid_text, _, host = text.partition(" ")
    if age > GC_STALE or not pid_text.strip().isdigit():
        return None
    if host.strip() != _host():
        return text
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return None
    except (PermissionError, OverflowError):
        return text
    return text


def prunes_now(gitdir: Path, running: str) -> bool:
    """Whether the gc of ``gc.pid`` text ``running`` prunes whatever its date
    (``--prune=now``, or ``gc.pruneExpire`` set so in the store): only such a prune
    can take a write's new objects.  One on another machine, or whose command
    line cannot be read, is taken as one that may."""
    pid_text, _, host = running.partition(" ")
    if host.strip() != _host():
        return True
    try:
        args = Path(f"/proc/{int(pid_text)}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return True
    for arg in args:
        if arg.startswith(b"--prune="):
            return arg[len(b"--prune=") :].lower() in (b"now", b"all")
        if arg == b"--no-prune":
            return False
    try:
        config = (gitdir / "config").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return True
    return _PRUNE_NOW.search(config) is not None


_PRUNE_NOW = re.compile(r"pruneexpire\s*=\s*\"?\s*(now|all)\b")


def after_gc(gitdir: Path, wait: float = GC_WAIT) -> None:
    """Wait (up to ``wait`` seconds) for the ``git gc`` beside a write to end, if it
    prunes whatever the date (``prunes_now``; why: the module's docstring).  A gc
    that starts after the ref moved finds the ref: it is not waited for."""
    running = gc_running(gitdir)
    if running is None or _mine(running) or not prunes_now(gitdir, running):
        return
    end = time.monotonic() + wait
    while gc_running(gitdir) == running and time.monotonic() < end:
        time.sleep(0.01)


@contextlib.contextmanager
def holding(gitdir: Path, wait: float = GC_WAIT) -> Iterator[bool]:
    """git's gc lock held inside (``gc.pid`` naming this process, made through
    ``gc.pid.lock`` as git makes it), once no gc runs; whether it was taken: a gc
    that runs past ``wait``, or a ``gc.pid.lock`` that stays (a killed gc's), is
    not waited for longer, and the block runs without it."""
    if _mine(gc_running(gitdir)):  # this process holds it already (``shielded``)
        yield True
        return
    lock, pid_file = gitdir / "gc.pid.lock", gitdir / "gc.pid"
    end, locked_since = time.monotonic() + wait, None
    while True:
        now = time.monotonic()
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            locked_since = locked_since or now
            if now - locked_since > LOCK_WAIT or now > end:
                yield False
                return
            time.sleep(0.002)
            continue
        except OSError:  # a store jp cannot write in: the write itself will say so
            yield False
            return
        if gc_running(gitdir) is None:
            break
        os.close(fd)
        os.unlink(lock)
        if now > end:
            yield False
            return
        time.sleep(0.002)
    mine = f"{os.getpid()} {_host()}"
    try:
        os.write(fd, mine.encode())
    finally:
        os.close(fd)
    os.replace(lock, pid_file)
    try:
        yield True
    finally:
        with contextlib.suppress(OSError):
            if pid_file.read_text(encoding="utf-8", errors="replace") == mine:
                pid_file.unlink()


def _mine(running: str | None) -> bool:
    """Whether the ``gc.pid`` text ``running`` names this process (a write inside
    ``shielded`` that waits for or takes the lock again)."""
    return running is not None and running == f"{os.getpid()} {_host()}"


def _host() -> str:
    """This machine's name, as git writes it in ``gc.pid`` (``socket`` loads only
    when a gc.pid is there: a write that finds none never pays for it)."""
    import socket

    return socket.gethostname()


@contextlib.contextmanager
def shielded(gitdir: Path) -> Iterator[bool]:
    """A small write's objects and its ref move inside, after a pruning gc beside
    has ended and with git's gc lock held (``holding``); whether it was taken.  A gc
    that keeps git's grace period takes nothing new: not waited for nor locked out.
    So a loop of ``git gc --prune=now`` never takes a note or an operation record
    before its ref names it (a bare ``git prune`` is not defended, docs/reliability.md)."""
    running = gc_running(gitdir)
    if running is not None and not _mine(running) and not prunes_now(gitdir, running):
        yield False
        return
    after_gc(gitdir)
    with holding(gitdir) as held:
        yield held

