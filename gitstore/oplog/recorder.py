"""The pending records of operations (``store.ops``), and completing a killed command's.

A command that moves a ref keeps a record ``<gitdir>/jp/oplog/<op id>.pending``,
``flock``-ed while it runs (``gitstore/store/parts/ops.py``).  A command killed
on the way leaves its record unlocked (the kernel drops the lock), and the next
command that opens the store completes it (``recover``): every move that did not
fail is recorded, except that the last one counts only if one of its refs left
its old value.  An operation already in the log (killed after writing it) is
not written twice.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore.errors import GitStoreError, environment_fault
from gitstore.fs.flock import claim
from gitstore.git.refs import transaction
from gitstore.oplog import log as oplog
from gitstore.oplog.model import Move, Op, RemoteChange, coalesce

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

FOLDER = ("jp", "oplog")
SUFFIX = ".pending"


def folder(gitdir: Path) -> Path:
    return gitdir.joinpath(*FOLDER)


# -- completing the record of a killed command ----------------------------------------------


def pending(gitdir: Path) -> bool:
    """Whether some command left (or is writing) a pending record: one listing."""
    try:
        with os.scandir(folder(gitdir)) as found:
            return any(e.name.endswith(SUFFIX) for e in found)
    except OSError:
        return False


def abandoned(gitdir: Path) -> list[Path]:
    """Pending records whose writer is gone (what ``recover`` would complete)."""
    out: list[Path] = []
    for path in in_order(folder(gitdir).glob(f"*{SUFFIX}")):
        fd = claim(path, still_there=True)
        if fd is not None:
            os.close(fd)
            out.append(path)
    return out


def running(gitdir: Path) -> dict[str, set[str]]:
    """The pending records whose command still runs -> the refs each moved so far."""
    out: dict[str, set[str]] = {}
    for path in folder(gitdir).glob(f"*{SUFFIX}"):
        fd = claim(path, still_there=True)
        if fd is not None:  # its writer is gone: `abandoned`
            os.close(fd)
            continue
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue  # completed meanwhile
        moved: set[str] = set()
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("u"), list):
                moved.update(str(u[0]) for u in entry["u"] if isinstance(u, list) and u)
        out[path.name] = moved
    return out


def recover(
    repo: Callable[[], pygit2.Repository],
    gitdir: Path,
    signature: Callable[[], pygit2.Signature],
    now: Callable[[], float] = time.time,
    strict: bool = False,
) -> int:
    """Record the operations of killed commands, in the order they ran; returns how
    many were written.  The first that cannot be written stops the rest (so the log
    keeps their order): the next command, or `jp doctor --fix`, goes on.  ``strict``
    (doctor): that failure is raised, as the environment fault it is when it is one."""
    written = 0
    for path in in_order(folder(gitdir).glob(f"*{SUFFIX}")):
        fd = claim(path, still_there=True)
        if fd is None:
            continue  # its command is still running
        try:
            op = rebuild(repo(), path.read_text(errors="replace"), now())
            if op is not None and not oplog.has(repo(), op.id):
                oplog.write(repo(), op, signature())
                written += 1
            path.unlink(missing_ok=True)
        except (OSError, GitStoreError, ValueError, pygit2.GitError) as exc:
            if strict:
                raise environment_fault(exc, str(path)) or exc from None
            break  # the log cannot be written now (a stale lock: `jp doctor`): later
        finally:
            os.close(fd)
    return written


def in_order(paths: Iterable[Path]) -> list[Path]:
    """Pending records in the order their commands ran: by when each started, then
    by its last write (a record's id is random and says nothing of its order)."""

    def key(path: Path) -> tuple[float, float, str]:
        try:
            with path.open("rb") as fh:
                header = json.loads(fh.readline() or b"{}")
            started = float(header.get("started") or 0.0) if isinstance(header, dict) else 0.0
            return started, path.stat().st_mtime, path.name
        except (OSError, ValueError, TypeError):
            return 0.0, 0.0, path.name

    return sorted(paths, key=key)


def rebuild(repo: pygit2.Repository, text: str, now: float | None = None) -> Op | None:
    """The operation a pending record describes, with only the moves that happened."""
    header: dict[str, Any] | None = None
    groups: list[tuple[int, dict[str, Any]]] = []
    failed: set[int] = set()
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by the kill
        if not isinstance(entry, dict):
            continue
        if header is None and "id" in entry:
            header = entry
        elif "f" in entry:
            failed.add(int(entry["f"]))
        elif "g" in entry:
            groups.append((int(entry["g"]), entry))
    if header is None:
        return None
    live = [(n, e) for n, e in groups if n not in failed]
    if live and not _landed(repo, live[-1][1]):
        live.pop()
    elif live and "u" in live[-1][1]:  # the last move: only the refs it did move
        last = live[-1][1]
        last["u"] = [u for u in last["u"] if transaction.current(repo, str(u[0])) != u[1]]
    moves = [Move(str(r), o, n) for _, e in live for r, o, n in e.get("u", [])]
    remotes = [RemoteChange(*e["r"]) for _, e in live if "r" in e]
    found = coalesce(moves)
    if not found and not remotes:
        return None
    return Op(
        id=str(header["id"]),
        command=str(header.get("command") or ""),
        time=time.time() if now is None else now,
        started=float(header.get("started") or 0.0),
        pid=int(header.get("pid") or 0),
        host=str(header.get("host") or ""),
        moves=found,
        remotes=remotes,
        recovered=True,
    )


def _landed(repo: pygit2.Repository, entry: dict[str, Any]) -> bool:
    """Whether the last move of a killed command happened: one of its refs left its
    old value (a remote change, whose result cannot be read back, counts)."""
    if "r" in entry:
        return True
    moves = entry.get("u", [])
    return any(transaction.current(repo, str(ref)) != old for ref, old, _ in moves)
