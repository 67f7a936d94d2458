"""A git that talks to a remote, given up when the remote stops answering.

git has no time limit of its own: a remote that accepts the connection and then
says nothing (a wedged server, a dead link, a proxy that swallows the traffic)
makes ``git fetch`` or ``git push`` wait for ever, and the hook's ``jp sync``
after every session piles up behind it.  Every git jp runs against a remote is
watched instead: while it runs, the bytes its processes read and write
(``/proc/<pid>/io``, git's and its helpers', not ssh's, whose keepalives would
hide a server-side git that went silent) are looked at twice a second; when
they have not moved for ``stall`` seconds the processes are killed and the sync
fails with one line naming the stall.  A healthy remote never goes that long
without a byte: git's own servers send a keepalive every 5 seconds while they
prepare a pack or run hooks (``uploadpack.keepAlive``, ``receive.keepAlive``).

On a system without ``/proc`` the watch has nothing to read and the git runs
as it always did.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gitstore.errors import SyncError

STALL_SECONDS = 120.0  # the default: no byte from the remote's git for this long
POLL = 0.5
UNWATCHED = ("ssh",)  # its own traffic (keepalives) is not the remote's git speaking


def run(
    args: Sequence[str],
    remote: str,
    stall: float | None,
    env: dict[str, str] | None = None,
    stdin: str | bytes | None = None,
    text: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(args, capture_output=True)``, but a stall of ``stall``
    seconds (None: no watch) kills the git and raises ``SyncError``."""
    if stall is None:
        return subprocess.run(args, capture_output=True, text=text, input=stdin, env=env)
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text,
        env=env,
    )
    moved, last, pending = time.monotonic(), -1, stdin
    while True:
        try:
            out, err = proc.communicate(pending, timeout=POLL)
            return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            pending = None  # sent (or being sent) by the first call
        count, pids = _activity(proc.pid)
        now = time.monotonic()
        if count is None or count != last:
            moved, last = now, -1 if count is None else count
        elif now - moved >= stall:
            _kill(pids)
            proc.communicate()
            raise SyncError(
                remote,
                f"{remote} said nothing for {stall:g} seconds; gave up waiting "
                "(sync.stall_seconds sets how long)",
            )


def _activity(pid: int) -> tuple[int | None, list[int]]:
    """The bytes read and written so far by ``pid`` and the processes below it (ssh
    left out), and their ids; None when ``/proc`` cannot say."""
    total, seen, pids, stack = 0, False, [], [pid]
    while stack:
        p = stack.pop()
        try:
            comm = Path(f"/proc/{p}/comm").read_text().strip()
            io = Path(f"/proc/{p}/io").read_text()
        except (OSError, ValueError):
            continue
        seen = True
        pids.append(p)
        if comm not in UNWATCHED:
            for line in io.splitlines():
                if line.startswith(("rchar:", "wchar:")):
                    total += int(line.split()[1])
        stack += _children(p)
    return (total if seen else None), pids


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def _kill(pids: list[int]) -> None:
    for pid in reversed(pids):  # the helpers first, then git itself
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
