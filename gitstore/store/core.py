"""The store: conversations as chains of event commits under refs, shown as named parts.

``Store`` opens a store (``ground.py``: its repository, cache, clock, identity
and limits), checks its format, repairs what killed commands left, and shows
its parts (``parts/``): ``log``, ``refs``, ``notes``, ``local`` and ``ops``.
Nothing here prints, reads the environment or knows about models and commands.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore.boundary import Limits
from gitstore.clock import Clock
from gitstore.fs.place import Place
from gitstore.git import writers
from gitstore.git.refs import transaction
from gitstore.store.ground import Ground
from gitstore.store.parts import Local, Log, Notes, Ops, Refs
from gitstore.store.types import Identity

if TYPE_CHECKING:
    import pygit2

# What a store shows besides its parts: what it was opened with and on
# (``tests/unit/test_layers.py`` holds ``Store`` to these and its parts).
OPENING = (
    "path",
    "gitdir",
    "repo",
    "place",
    "identity",
    "clock",
    "limits",
    "format",
    "repair",
    "close",
)


class Store:
    """A store, opened: its parts, and what it was opened with.

    Callers read and write through the parts; of the store itself they use
    only the opening (``OPENING``): the path and git directory, libgit2's
    repository, the two as one ``Place``, the identity, clock and limits it was given, its format
    version, ``repair`` and ``close``.
    """

    def __init__(
        self,
        path: Path,
        identity: Identity | None = None,
        limits: Limits | Callable[[], Limits] | None = None,
        repair: bool = True,
        clock: Clock | None = None,
    ) -> None:
        self._ground = g = Ground(path, identity, limits, clock)
        self.ops = Ops(g, lambda: self.refs.active())
        self.refs = Refs(g, self.ops)
        self.log = Log(g, self.refs, self.ops)
        self.notes = Notes(g, self.refs, self.ops)
        self.local = Local(g)
        if repair:
            self.repair()

    @property
    def path(self) -> Path:
        return self._ground.path

    @property
    def gitdir(self) -> Path:
        return self._ground.gitdir

    @property
    def repo(self) -> pygit2.Repository:
        """libgit2's repository (opened on first use)."""
        return self._ground.repo

    @property
    def place(self) -> Place:
        """The git directory and the repository together (``fs/place.py``)."""
        return self._ground.place

    @property
    def identity(self) -> Identity:
        return self._ground.identity

    @property
    def clock(self) -> Clock:
        """The time of what the store records."""
        return self._ground.clock

    @clock.setter
    def clock(self, value: Clock) -> None:
        self._ground.clock = value

    @property
    def limits(self) -> Limits:
        """Size limits (``boundary.Limits``): given, or asked for on first use."""
        return self._ground.limits

    @property
    def format(self) -> int | None:
        """The store's format version (``jp.format``), None in one that predates it."""
        return self._ground.format

    @format.setter
    def format(self, value: int | None) -> None:
        self._ground.format = value

    def repair(self, strict: bool = False) -> None:
        """Finish what killed commands left: journaled ref updates, then their operations
        (``strict``: an operation that cannot be recorded raises, for ``jp doctor --fix``)."""
        g = self._ground
        if transaction.pending(g.gitdir):
            transaction.repair(g.place)
        if _any_file(writers.packing_folder(g.gitdir)):  # a bulk writer was killed
            # lazy: start-up; the pack writer loads only to clear a killed one's packs
            from gitstore.store import packwrite

            packwrite.sweep(g.gitdir)
        if _any_file(writers.kept_folder(g.gitdir)):  # a bulk writer killed before its ref
            writers.sweep_kept(g.gitdir)
        if _any_file(g.gitdir / "jp" / "oplog"):  # one listing; the module only then
            from gitstore.oplog import recorder as oprecord  # only when a record was left

            if oprecord.pending(g.gitdir) and not transaction.pending(g.gitdir):
                oprecord.recover(lambda: g.repo, g.gitdir, g.signature, g.seconds, strict)

    def close(self) -> None:
        """Let go of the cache's database and the command's git process (the store may
        be opened again after)."""
        self._ground.cache.close()
        self._ground.release_reads()


def _any_file(folder: Path) -> bool:
    try:
        with os.scandir(folder) as found:
            return any(True for _ in found)
    except OSError:
        return False
