"""Many event commits written straight into pack files, never as loose objects.

An import of a million events written one object at a time leaves three
million loose files, and an interrupted one leaves them all behind.  Here
the blobs, trees and commits go, as they are made, into a temporary pack
under ``<gitdir>/jp/packing/<writer>/``; every ``CHUNK`` events that pack is
closed and indexed (``git.pack.PackFile``, from what it kept of each entry: an
index byte for byte git's own), and a new one begins, so memory stays bounded
whatever the size.  Only once every chunk is complete are the packs moved into
``objects/pack/`` (pack, then index, as git does); the caller moves a ref only
after that.

The bytes are ``events.commits.objects``, the same a write of one event makes
(``store.log.write_commits``), so a conversation imported this way is
identical to one written event by event (``tests/reliability/test_bulk_write.py``
compares the two, and ``git fsck`` checks what an import wrote).

An interrupted writer (an exception, Ctrl-C, SIGTERM turned into one)
removes its folder; one killed outright leaves it, holding an ``flock`` that
dies with it, and the next ``Store`` removes it (``sweep``).
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

from gitstore import faults
from gitstore.errors import EnvironmentFault, environment_fault
from gitstore.events import Event, commits
from gitstore.events.kinds import Kind
from gitstore.fs import atomic
from gitstore.git import pack as gitpack
from gitstore.git import writers
from gitstore.git.objects import BLOB, Who
from gitstore.git.pack import PackFile

CHUNK = 50_000  # events per pack: bounds what its index keeps (32 bytes an object)
ROWS = 2_000  # events handed to ``on_rows`` at a time (the cache)
Signer = Callable[[str, Event], Who]
# (commit, parent, the event, or its ``event.json`` text as a chain read from git gives it)
Rows = list[tuple[str, str | None, Event | str]]
_CALL = Kind.TOOL_CALL_REQUEST.value  # a plain string: compared for every event


def folder(gitdir: Path) -> Path:
    return writers.packing_folder(gitdir)


def sweep(gitdir: Path) -> None:
    """Remove the temporary packs of writers that died (their ``flock`` is free)."""
    for work, _ in writers.dead_writers(folder(gitdir)):
        shutil.rmtree(work, ignore_errors=True)


@contextmanager
def _workspace(gitdir: Path) -> Iterator[Path]:
    """This writer's temporary folder, held by an ``flock``; removed on the way out."""
    top, fd = writers.claim(folder(gitdir), f"{os.getpid()}-{os.urandom(4).hex()}")
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)
        os.close(fd)


class Packed(NamedTuple):
    """What ``write_stream`` wrote: the last commit and the packs that hold the chain
    (names under ``objects/pack/``; while they all remain, nothing of it is lost)."""

    tip: str | None
    packs: tuple[str, ...]

    def present(self, gitdir: Path) -> bool:
        """Whether every pack is still where it was published (git's repack replaces
        packs whole; none is ever changed in place)."""
        pack = gitpack.folder(gitdir)
        return all((pack / name).is_file() for name in self.packs)


def write(
    gitdir: Path,
    events: Iterable[tuple[Event, bytes]],
    parent: str | None,
    names: dict[str, str],
    sign: Signer,
    committer: str,
    on_rows: Callable[[Rows], None] | None = None,
) -> list[str]:
    """Write one commit per event (each with its ``event.json`` bytes) on top of
    ``parent`` into packs; returns the commit ids.  ``sign(name, event)`` gives the author (``Who``) for
    the author or committer ``name``; ``on_rows`` is handed the rows (commit,
    parent, the event) ``ROWS`` at a time (they may name commits of a
    pack that an interruption then drops: harmless for a cache keyed by commit id)."""
    out: list[str] = []
    _write(gitdir, events, parent, names, sign, committer, out, on_rows)
    return out


def write_stream(
    gitdir: Path,
    events: Iterable[tuple[Event, bytes]],
    parent: str | None,
    names: dict[str, str],
    sign: Signer,
    committer: str,
    on_rows: Callable[[Rows], None] | None = None,
) -> Packed:
    """``write`` that keeps no list of what it wrote (an import of any size in bounded
    memory, ``events`` consumed as they come): the tip and the packs holding it.
    Should ``events`` raise, nothing is published."""
    return _write(gitdir, events, parent, names, sign, committer, None, on_rows)


def write_blobs(gitdir: Path, blobs: Iterable[bytes]) -> tuple[str, ...]:
    """Write ``blobs`` into one pack (published behind a ``.keep`` until
    ``release``), not a loose file each; the packs' names (none for no blobs)."""
    return write_objects(gitdir, ((BLOB, data, None) for data in blobs))


def write_objects(
    gitdir: Path, objects: Iterable[tuple[int, bytes, bytes | None]]
) -> tuple[str, ...]:
    """Write ``objects`` (type, bytes, raw name when the caller has it: whole objects of
    any kind, as a notes commit of many notes makes them) into one pack published
    behind a ``.keep`` until ``release``; the packs' names (none for no objects)."""
    try:
        with _terminate_as_interrupt(), _workspace(gitdir) as work:
            pack = PackFile(work / "objects.pack")
            for kind, data, name in objects:
                pack.add(kind, data, name)
            if not pack.count:
                pack.file.close()
                return ()
            return _publish(gitdir, [(pack.path, pack.finish())])
    except OSError as exc:
        raise environment_fault(exc, str(gitdir)) or exc from None


def _write(
    gitdir: Path,
    events: Iterable[tuple[Event, bytes]],
    parent: str | None,
    names: dict[str, str],
    sign: Signer,
    committer: str,
    out: list[str] | None,
    on_rows: Callable[[Rows], None] | None,
) -> Packed:
    with Writer(gitdir) as writer:
        tip = writer.chain(events, parent, names, sign, committer, out, on_rows)
        return Packed(tip, writer.publish())


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM while packs are written unwinds like Ctrl-C, so the temporary
    packs are removed (by default it ends the process on the spot)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


class Writer:
    """The packs one command writes: chains (and blobs) added one after another into
    the same pack, a new one begun every ``CHUNK`` events, all published together
    (``publish``) before any ref names them.  Leaving it unpublished (an error,
    Ctrl-C) removes them; a kill leaves them to ``sweep``."""

    def __init__(self, gitdir: Path) -> None:
        self.gitdir = gitdir
        self._stack = ExitStack()
        self._done: list[tuple[Path, str]] = []
        self._pack: PackFile | None = None
        self._work: Path | None = None

    def __enter__(self) -> Writer:
        try:
            self._stack.enter_context(_terminate_as_interrupt())
            self._work = self._stack.enter_context(_workspace(self.gitdir))
        except OSError as exc:
            self._stack.close()
            raise environment_fault(exc, str(self.gitdir)) or exc from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pack is not None:
            self._pack.file.close()
        self._stack.close()

    def _current(self) -> PackFile:
        if self._pack is None:
            assert self._work is not None, "a Writer is used inside its with block"
            self._pack = PackFile(self._work / f"chunk-{len(self._done)}.pack")
        return self._pack

    def _close_pack(self) -> None:
        if self._pack is not None:
            self._done.append((self._pack.path, self._pack.finish()))
            faults.point("pack:chunk-written")
            self._pack = None

    @property
    def empty(self) -> bool:
        return not self._done and (self._pack is None or not self._pack.count)

    def blob(self, data: bytes) -> str:
        """Add one blob (an anchor); its id."""
        try:
            return self._current().add(BLOB, data).hex()
        except OSError as exc:
            raise environment_fault(exc, str(self.gitdir)) or exc from None

    def chain(
        self,
        events: Iterable[tuple[Event, bytes]],
        parent: str | None,
        names: dict[str, str],
        sign: Signer,
        committer: str,
        out: list[str] | None = None,
        on_rows: Callable[[Rows], None] | None = None,
    ) -> str | None:
        """Add one commit per event on top of ``parent``; the last commit.  ``out``
        (if any) takes each id, ``on_rows`` the rows ``ROWS`` at a time."""
        try:
            rows: Rows = []
            for event, data in events:
                pack = self._current()
                if event.get("type") == _CALL:
                    names[str(event.get("id"))] = str(event.get("name"))
                author = sign(commits.author_name(event), event)
                blob, tree, commit = commits.objects(
                    event, parent, names, author, sign(committer, event), data
                )
                oid = pack.add_event(blob, tree, commit).hex()
                if on_rows:
                    # the event as it came, its keys in their order (a tool call's
                    # arguments as the model wrote them): an export from a warm cache
                    # gives JP's file back byte for byte; ``event.json`` sorts them
                    rows.append((oid, parent, event))
                if out is not None:
                    out.append(oid)
                parent = oid
                if len(rows) >= ROWS and on_rows:
                    on_rows(rows)
                    rows = []
                if pack.count >= 3 * CHUNK:
                    self._close_pack()
            if rows and on_rows:
                on_rows(rows)
            return parent
        except OSError as exc:
            raise environment_fault(exc, str(self.gitdir)) or exc from None

    def publish(self) -> tuple[str, ...]:
        """Index the last pack and move every pack into the object database (each
        behind a ``.keep`` until ``release``); their names.  The writer starts over."""
        try:
            self._close_pack()
            done, self._done = self._done, []
            return _publish(self.gitdir, done)
        except OSError as exc:
            raise environment_fault(exc, str(self.gitdir)) or exc from None


def _publish(gitdir: Path, packs: list[tuple[Path, str]]) -> tuple[str, ...]:
    """Move complete packs into the object database: each pack, then its index,
    each behind a ``.keep`` made first (``_shelter``). Returns the packs' names."""
    target = gitpack.folder(gitdir)
    target.mkdir(parents=True, exist_ok=True)
    names = []
    for path, checksum in packs:
        stem = writers.free_stem(target, f"pack-{checksum}")  # an earlier one's name: not reused
        _shelter(gitdir, f"{stem}.keep")
        atomic.replace(path, target / f"{stem}.pack")
        atomic.replace(path.with_suffix(".idx"), target / f"{stem}.idx")
        names.append(f"{stem}.pack")
    return tuple(names)


# The .keep files of packs this process published whose ref may not name them yet:
# git's repack drops a pack no ref reached when it began (``git gc --prune=now``
# beside the write), but leaves a kept one alone.  ``release`` ends the shelter
# once the ref is written; one a killed process left is removed by ``writers.sweep_kept``
# (the flock on its owner file ends with the process).
_SHELTERED: list[tuple[Path, Path, int]] = []


def _shelter(gitdir: Path, name: str) -> None:
    work, owner = writers.claim(writers.kept_folder(gitdir), os.urandom(16).hex(), name.encode())
    path = gitpack.folder(gitdir) / name
    _SHELTERED.append((path, work, owner))
    path.write_text(f"jp: until its ref names this pack (pid {os.getpid()})\n")


def release(names: Collection[str] | None = None) -> None:
    """Let git's maintenance repack the packs this process published (their refs
    name them now); with ``names`` (as ``_publish`` gave them), those packs only."""
    stems = None if names is None else {name.removesuffix(".pack") for name in names}
    kept = []
    while _SHELTERED:
        path, work, owner = _SHELTERED.pop()
        if stems is not None and path.name.removesuffix(".keep") not in stems:
            kept.append((path, work, owner))
            continue
        path.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
        os.close(owner)
    _SHELTERED.extend(reversed(kept))


__all__ = [
    "CHUNK",
    "EnvironmentFault",
    "Packed",
    "Writer",
    "sweep",
    "release",
    "write",
    "write_blobs",
    "write_objects",
    "write_stream",
]
