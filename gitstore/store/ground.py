"""What every part of a store stands on: the repository it opened and what it was given.

``Ground`` is made once by ``Store`` and shared by its parts (``parts/``): the
path and git directory, libgit2's repository (opened on first use), the
reader of refs as files, the cache, the clock, identity and limits, and the
few readings of git objects every part makes (a commit, an event's bytes).
Callers never hold it: they hold a part.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from gitstore import intake
from gitstore.boundary import Limits, stored_event
from gitstore.cache.db import Cache
from gitstore.clock import SYSTEM, Clock, seconds
from gitstore.errors import CorruptEvent, EnvironmentFault, LockedRef
from gitstore.events import Event, parse_time
from gitstore.fs import diskfault
from gitstore.fs.place import Place
from gitstore.git import config as gitconfig
from gitstore.git import refs
from gitstore.git.config import IncludesOthers, config_entries
from gitstore.git.refs import files as refread
from gitstore.git.refs.reader import RefReader, reader_for
from gitstore.store import format as storeformat
from gitstore.store.repo import machine_id, notes_refs, open_repo
from gitstore.store.types import Identity

if TYPE_CHECKING:
    import pygit2

    from gitstore.git.objects import CatFile, Who
    from gitstore.store.maintenance import Maintenance
else:
    from gitstore.lazy import lazy_module

    pygit2 = lazy_module("pygit2")  # loaded by the first command that touches git objects


OPLOG_RETENTION = 90 * 86400.0  # seconds the operation log keeps an operation, by default


# the form a checked event's time stamp is stored in (``events.stored_time``), its hour,
# minute and second in range; a day that does not exist fails ``date.fromisoformat``
_STORED = re.compile(r"(\d{4}-\d\d-\d\d)T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)\.(\d{6})Z", re.ASCII)
_DAY_ONE = date(1970, 1, 1).toordinal()


@lru_cache(maxsize=64)
def _day_start(day: str) -> int:
    """The seconds from the epoch to the start of ``day`` (``YYYY-MM-DD``, UTC)."""
    return (date.fromisoformat(day).toordinal() - _DAY_ONE) * 86400


@lru_cache(maxsize=512)
def _epoch(stamp: str) -> int:
    """The seconds of an event's time stamp (author and committer dates; neighbouring
    events share stamps, and each commit has two): ``int(parse_time(stamp).timestamp())``.

    The stored form is read by its fields, without a ``datetime``: an import's
    stamps all differ, and the parse was most of a commit's author line.  The
    result is that expression's to the bit: its microseconds over a million as a
    float, truncated towards zero (before 1970 too, and where the float rounds up).
    """
    found = _STORED.fullmatch(stamp)
    if found is None:
        return int(parse_time(stamp).timestamp())
    day, hour, minute, second, micro = found.groups()
    whole = _day_start(day) + int(hour) * 3600 + int(minute) * 60 + int(second)
    return int((whole * 1_000_000 + int(micro)) / 1_000_000)


def _own_value(gitdir: Path, section: str, key: str) -> str | None:
    """The last ``section.key`` of the git directory's own config file, read without
    libgit2; None when it has none or cannot say (unreadable, or it includes others)."""
    found: str | None = None
    try:
        for at, name, value in config_entries(gitconfig.text(gitdir)):
            if at == section and name == key and value:
                found = value
    except (OSError, IncludesOthers):
        return None
    return found


class Ground:
    """One opened store's shared state; libgit2 is opened only when a part needs it.

    Refs of a plain git directory are read as files (``refs.reader``), so a
    command that finds what it reads in the cache never loads libgit2.
    """

    def __init__(
        self,
        path: Path,
        identity: Identity | None,
        limits: Limits | Callable[[], Limits] | None,
        clock: Clock | None,
    ) -> None:
        self.path = path
        self.identity = identity or Identity()
        self.clock: Clock = clock or SYSTEM  # the time of what the store records
        self._limits = limits
        self._repo: pygit2.Repository | None = None
        plain = refread.plain_gitdir(path)
        if plain is None:  # a worktree, a .git file, reftable..: libgit2 decides at once
            self._repo = open_repo(path)
        self.reader: RefReader = reader_for(plain, lambda: self.repo)
        self.gitdir = plain if plain is not None else Path(self.repo.path)
        self.place = Place(self.gitdir, lambda: self.repo)
        self.format = storeformat.read(self.gitdir, lambda: self.repo)
        storeformat.check(path, self.format)  # before anything is read or written
        self.cache = Cache(self.gitdir)
        self.retention: Callable[[], float] = lambda: OPLOG_RETENTION
        self._maintenance: Maintenance | None = None
        self._machine: str | None = None
        self._notes_refs: refs.NotesRefs | None = None
        self.holding = False  # an operation is being recorded (``Ops.begin`` .. ``end``)
        self._held: CatFile | None = None

    @property
    def repo(self) -> pygit2.Repository:
        if self._repo is None:
            self._repo = open_repo(self.path)
        return self._repo

    @property
    def limits(self) -> Limits:
        """Size limits (``boundary.Limits``): given, or asked for on first use."""
        if self._limits is None:
            self._limits = Limits()
        elif not isinstance(self._limits, Limits):
            self._limits = self._limits()
        return self._limits

    @property
    def maintenance(self) -> Maintenance:
        if self._maintenance is None:
            # lazy: start-up; only a write asks (a read-only command never loads it)
            from gitstore.store.maintenance import Maintenance

            self._maintenance = Maintenance(
                self.repo, self.gitdir, lambda: self.retention(), self.seconds
            )
        return self._maintenance

    @property
    def machine(self) -> str:
        """This machine's id in metadata lines (``jp.machine`` in the store's config)."""
        if self._machine is None:
            self._machine = _own_value(self.gitdir, "jp", "machine") or machine_id(
                self.repo, self.clock
            )
        return self._machine

    @property
    def notes_refs(self) -> refs.NotesRefs:
        """This store's notes refs (``refs/notes/jp/...`` in a project's repository)."""
        if self._notes_refs is None:
            self._notes_refs = notes_refs(self.gitdir)
        return self._notes_refs

    def held_reads(self) -> CatFile | None:
        """The one git process every write of a command reads objects through (its
        titles, its operation record), while an operation is recorded; None outside
        one: each write then starts and ends its own."""
        if self.holding and self._held is None:
            from gitstore.git.objects import CatFile  # lazy: only a write reads objects so

            self._held = CatFile(self.gitdir, held=True)
        return self._held

    def release_reads(self) -> None:
        """End the command's git process (if one was started)."""
        held, self._held = self._held, None
        if held is not None:
            held.close()

    def seconds(self) -> float:
        return seconds(self.clock)

    def signature(self, at: float | None = None) -> pygit2.Signature:
        """The signature of a notes or operation-log commit: this store's identity, at
        ``at`` (seconds), else the time of its clock."""
        moment = seconds(self.clock) if at is None else at
        return pygit2.Signature(self.identity.name, self.identity.email, int(moment), 0)

    def person(self, at: float | None = None) -> Who:
        """``signature``'s parts (``objects.Who``), made without libgit2."""
        moment = seconds(self.clock) if at is None else at
        return self.identity.name.encode(), self.identity.email.encode(), int(moment), 0

    def first_write(self) -> None:
        """Record the format version in a store that predates it (best effort: a store
        whose config cannot be written fails the write itself, with its own message)."""
        if self.format is None or self.format < storeformat.FORMAT:
            try:
                storeformat.write(self.repo)
            except (pygit2.GitError, OSError):
                return
            self.format = storeformat.FORMAT

    def locked(self, name: str) -> LockedRef | None:
        """The error for ``name`` when its lock file outlived its writer."""
        return intake.stale_lock(self.place, name)

    def commit(self, oid: str | pygit2.Oid) -> pygit2.Commit:
        """The commit ``oid`` (``CorruptEvent`` when it is missing or no commit)."""
        try:
            found = self.repo[oid]
        except (KeyError, ValueError):
            if (self.gitdir / "gc.pid").exists():  # git gc --prune=now took it meanwhile
                raise EnvironmentFault("pruned", str(self.gitdir), f"{oid} is gone") from None
            raise CorruptEvent(str(oid), "the object is missing from the store") from None
        if found.type_str != "commit":
            raise CorruptEvent(str(oid), f"it is a {found.type_str}, not a commit")
        return found.peel(pygit2.Commit)

    def event_bytes(self, commit: pygit2.Commit) -> bytes:
        """The ``event.json`` of an event commit, checked as a stored event."""
        return self._event_blob(self.event_blob(commit), str(commit.id))[0]

    def event(self, commit: pygit2.Commit) -> Event:
        """The event of an event commit, checked (``event_bytes``, parsed once)."""
        return self._event_blob(self.event_blob(commit), str(commit.id))[1]

    def event_blob(self, commit: pygit2.Commit) -> pygit2.Oid:
        """The id of an event commit's ``event.json`` (its tree read, not the blob)."""
        try:
            return commit.tree["event.json"].id
        except (KeyError, ValueError, pygit2.GitError):
            raise CorruptEvent(str(commit.id), "its tree has no event.json") from None

    def blob_event(self, blob_id: str | pygit2.Oid, commit: str) -> Event:
        """The event the ``event.json`` blob ``blob_id`` of ``commit`` holds, checked."""
        return self._event_blob(blob_id, commit)[1]

    def _event_blob(self, blob_id: str | pygit2.Oid, commit: str) -> tuple[bytes, Event]:
        """The bytes of the ``event.json`` blob ``blob_id`` of ``commit`` and the event
        they hold, checked as a stored event."""
        try:
            blob = self.repo[blob_id]
        except (KeyError, ValueError, pygit2.GitError):
            raise CorruptEvent(commit, "its event.json is missing from the store") from None
        if not isinstance(blob, pygit2.Blob):
            raise CorruptEvent(commit, "event.json is not a file")
        data = bytes(blob.data)
        try:
            return data, stored_event(data)
        except ValueError as exc:
            raise CorruptEvent(commit, str(exc)) from None

    def check_written(self, oid: str) -> None:
        """A commit jp wrote that the object database lacks: a write the disk dropped."""
        diskfault.check_written(self.place, oid)

    def who(self, name: str, event: Event) -> Who:
        """An event commit's author or committer ``name``, at the event's own time."""
        return name.encode(), self.identity.email.encode(), _epoch(str(event["timestamp"])), 0
