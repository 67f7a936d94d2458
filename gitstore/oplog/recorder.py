"""Recording one command's ref moves as one operation, crash-safe.

Porcelain opens an operation with the command line (``Recorder.begin``) and
closes it when the command ends (``Recorder.end``); every write site of the
store moves its refs inside ``Recorder.moving(updates)``, so a whole
``jp q`` turn (many appends) becomes one operation, and each process
records only the refs it moved itself.

Crash safety: before the first ref moves, the recorder creates a pending
record ``<gitdir>/jp/oplog/<op id>.pending`` and holds an ``flock`` on it
for as long as the command runs; each move adds one line (the refs with
their old and new values) before it happens, and a move that fails adds a
line saying so.  ``end`` writes the operation to the log and deletes the
record.  A command killed on the way leaves its record unlocked (the kernel
drops the lock), and the next command that opens the store completes it
(``recover``): every move that did not fail is recorded, except that the
last one counts only if one of its refs left its old value.  An operation
already in the log (killed after writing it) is not written twice.

Nothing here costs a command that moves no ref; a move costs one short
``write`` to a file already open.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstore.clock import SYSTEM
from gitstore.errors import GitStoreError, environment_fault
from gitstore.fs.flock import claim
from gitstore.fs.place import Place
from gitstore.git import objects
from gitstore.git.refs import transaction
from gitstore.git.refs.transaction import ANY, RefUpdate
from gitstore.intake import Verify
from gitstore.oplog import log as oplog
from gitstore.oplog.model import Move, Op, RemoteChange, coalesce

if TYPE_CHECKING:
    import pygit2
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")

FOLDER = ("jp", "oplog")
SUFFIX = ".pending"
_NULL: AbstractContextManager[None] = contextlib.nullcontext()


def folder(gitdir: Path) -> Path:
    return gitdir.joinpath(*FOLDER)


class Recorder:
    """The operation of one command in one process (inactive until ``begin``)."""

    def __init__(
        self,
        gitdir: Path,
        repo: Callable[[], pygit2.Repository],
        first_write: Callable[[], None] | None = None,
        now: Callable[[], float] = time.time,
        token: Callable[[int], str] = SYSTEM.token,
    ) -> None:
        self.gitdir = gitdir
        self._now = now  # the store's clock, in seconds: when an operation ran
        self._token = token  # the store's clock too: the random part of an operation's id
        self._repo = repo
        self._first_write = first_write
        self._wrote = False
        self.command: str | None = None
        self._reset()

    def _reset(self) -> None:
        self.op_id = self._token(8)
        self.started = 0.0  # set by ``begin``
        self._fd: int | None = None
        self._path: Path | None = None
        self._groups = 0
        self._landed: list[Move] = []
        self._remotes: list[RemoteChange] = []
        self._marks: dict[str, str] = {}

    @property
    def active(self) -> bool:
        return self.command is not None

    def begin(self, command: str, started: float | None = None) -> None:
        """Start recording: every ref moved from now on belongs to this operation."""
        if self.command is not None:
            return
        self._reset()
        self.command = command
        self.started = started if started is not None else self._now()

    def mark(self, *, undoes: str | None = None, restores: str | None = None) -> None:
        """Say what the operation is (an undo of one, a restore to one)."""
        if undoes:
            self._marks["undoes"] = undoes
        if restores:
            self._marks["restores"] = restores

    # -- the write sites -------------------------------------------------------------

    def moving(
        self,
        updates: Sequence[RefUpdate],
        partial: tuple[type[BaseException], ...] = (),
        verify: Verify = False,
    ) -> AbstractContextManager[None]:
        """Around one ref move (or one transaction): recorded if it happens.

        An exception of a ``partial`` type means some refs may have moved (a
        transaction that failed part-way, finished later by repair): the
        move counts as done.  With ``verify`` (a call that may move only some
        of ``updates``), only the refs that now hold their new value count:
        each is looked up, or, when ``verify`` is a function, it names them
        (a writer that knows which of thousands it wrote).
        """
        if not self._wrote:
            self._wrote = True
            if self._first_write is not None:
                self._first_write()
        if self.command is None or not updates:
            return _NULL
        return self._moving(updates, partial, verify)

    @contextmanager
    def _moving(
        self,
        updates: Sequence[RefUpdate],
        partial: tuple[type[BaseException], ...],
        verify: Verify,
    ) -> Iterator[None]:
        moves = [Move(u.name, self._old(u), u.new) for u in updates]
        group = self._intend({"u": [[m.ref, m.old, m.new] for m in moves]})
        try:
            yield
        except partial:
            self._landed += moves
            raise
        except BaseException:
            self._line({"f": group})
            raise
        if callable(verify):
            landed = set(verify())
            moves = [m for m in moves if m.ref in landed]
        elif verify:
            moves = [m for m in moves if transaction.current(self._repo(), m.ref) == m.new]
        self._landed += moves

    def remote(self, change: RemoteChange) -> None:
        """A remote's configuration changed (told once done: a config write is one step)."""
        if self.command is None or change.old == change.new:
            return
        self._intend({"r": [change.name, change.old, change.new]})
        self._remotes.append(change)

    def _old(self, update: RefUpdate) -> str | None:
        if update.old != ANY:
            return update.old
        return transaction.current(self._repo(), update.name)

    def _intend(self, entry: dict[str, Any]) -> int:
        if self._fd is None:
            self._open()
        self._groups += 1
        self._line({"g": self._groups, **entry})
        return self._groups

    def _open(self) -> None:
        where = folder(self.gitdir)
        where.mkdir(parents=True, exist_ok=True)
        path = where / f"{self.op_id}{SUFFIX}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)  # the kernel drops it if this process dies
        self._fd, self._path = fd, path
        self._line(
            {
                "id": self.op_id,
                "command": self.command,
                "started": self.started,
                "pid": os.getpid(),
                "host": os.uname().nodename,
            }
        )

    def _line(self, entry: dict[str, Any]) -> None:
        if self._fd is None:
            return
        data = (json.dumps(entry) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    # -- the end of the command ----------------------------------------------------------

    def end(
        self, signature: pygit2.Signature | objects.Who, active: Callable[[], str | None]
    ) -> Op | None:
        """Write the operation (if it moved anything) and stop recording.

        If writing fails the pending record stays, unlocked, and the next
        command that opens the store records the operation.
        """
        if self.command is None:
            return None
        command, self.command = self.command, None
        moves = coalesce(self._landed)
        try:
            if not moves and not self._remotes and not self._marks:
                self._drop()
                return None
            op = Op(
                id=self.op_id,
                command=command,
                time=self._now(),
                started=self.started,
                pid=os.getpid(),
                host=os.uname().nodename,
                active=active(),
                moves=moves,
                remotes=list(self._remotes),
                undoes=self._marks.get("undoes"),
                restores=self._marks.get("restores"),
            )
            oplog.write(Place(self.gitdir, self._repo), op, signature)
            self._drop()
            return op
        finally:
            if self._fd is not None:
                os.close(self._fd)
            self._reset()

    def _drop(self) -> None:
        if self._path is not None:
            self._path.unlink(missing_ok=True)


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
