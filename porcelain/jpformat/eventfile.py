"""A JP folder to import, whose ``events.json`` is never held in memory whole.

``scan_conversation`` reads the folder as ``read_conversation`` does, with
every entry of ``events.json`` parsed and checked, but keeps of the events
only their count, the first two and a digest of each block of the file's
bytes as it was read.  Its ``events`` is an ``EventFile``: each pass over it
reads the file again, one entry at a time, comparing each block with the
scan's before any of it is parsed, so every entry a pass parses is one the
scan checked: it is decoded and normalised (``validate_event(..., seen=True)``),
not checked again, and the store's writer takes it as checked.  A file changed
since (or changed part way through a pass) raises ``UserError`` from the pass,
at the first block that differs, so a write fed by it publishes nothing.  A file
the streaming parser does not take is read whole, as before (its fault named
exactly; in the rare case that the whole reader takes it, its events are a
list).  A small file (``KEEP_EVENTS`` events, ``KEEP_BYTES`` at most) keeps its
events from the scan as a list: read and checked once, not once more per pass; one
of ``WHOLE_BYTES`` at most is read whole straight away (streamed as well when it
holds more than ``KEEP_EVENTS``).
"""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from gitstore import Event, Kind, Limits, NotStreamable, errors, read_file
from porcelain.errors import UserError
from porcelain.jpformat.reader import (
    BASE_CONFIG_FILE,
    EVENTS_FILE,
    FOLDER_HINT,
    METADATA_FILE,
    Progress,
    jp_id_from_folder,
    read_base_config,
    read_metadata,
    read_whole,
    stream_events,
)

#: ``on_event(done, total)`` during a pass over an ``EventFile``, every ``EVERY`` events.
EVERY = 1000
#: A file this small keeps its scanned events (a list): its memory is no concern, and a
#: second pass would parse and check every event again.
KEEP_EVENTS = 1000
KEEP_BYTES = 2 * 2**20
#: A file this small is parsed whole, in one call of the strict decoder the streaming
#: parser uses element by element (the same events, a third of the time: an import
#: of many small conversations paid the stream's per-element cost for every one).
WHOLE_BYTES = 256 * 2**10


class EventFile:
    """The checked events of one ``events.json``, read again on each pass."""

    def __init__(
        self, path: Path, limits: Limits, count: int, skip: int, blocks: tuple[bytes, ...]
    ) -> None:
        self.path = path
        self.limits = limits
        self.count = count
        self.skip = skip  # a legacy first entry taken as the base config
        self.blocks = blocks  # the digest of each block the scan read, in order
        self.on_event: Callable[[int, int], None] | None = None

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Event]:
        expected = iter(self.blocks)

        def same(data: bytes) -> None:
            if next(expected, None) != hashlib.sha256(data).digest():
                raise self._changed()  # before a byte of it is parsed

        total = self.skip + self.count
        seen = 0
        try:
            for event in stream_events(self.path, self.limits, None, same, again=True):
                seen += 1
                if seen > total:
                    raise self._changed()
                if seen > self.skip:
                    yield event
                    if self.on_event and (seen - self.skip) % EVERY == 0:
                        self.on_event(seen - self.skip, self.count)
        except (NotStreamable, UserError):
            raise self._changed() from None
        if seen != total or next(expected, None) is not None:
            raise self._changed()
        if self.on_event:
            self.on_event(self.count, self.count)

    def _changed(self) -> UserError:
        return UserError(
            f"{self.path}: changed while it was imported; nothing of it was written",
            "import it again once nothing writes to it",
        )


class JpFolder(NamedTuple):
    """``JpConversation`` with its events in their file (``EventFile``), or a list."""

    jp_id: str | None
    title: str | None
    metadata: dict[str, Any]
    base_config: dict[str, Any] | None
    events: EventFile | list[Event]
    first: Event | None  # the first of ``events``, if any


def _scan_events(
    path: Path, limits: Limits, progress: Progress | None
) -> tuple[EventFile | list[Event], list[Event]]:
    """The events of ``path`` and the first two of them."""
    try:  # a small file: read at once (one open, no ``stat`` before it)
        data: bytes | None = read_file(path, min(WHOLE_BYTES, limits.max_file_bytes))
    except (OSError, errors.Refused):
        data = None  # a larger one, streamed; or a fault, which the stream names as always
    if data is not None:
        events = read_whole(path, limits, data)
        if len(events) <= KEEP_EVENTS:
            return events, events[:2]
        # more than are kept: an ``EventFile``, as the stream makes it below
    size = _size(path)
    blocks: list[bytes] = []
    kept: list[Event] | None = [] if size is not None and size <= KEEP_BYTES else None
    head: list[Event] = []
    count = 0

    def block(data: bytes) -> None:
        blocks.append(hashlib.sha256(data).digest())

    try:
        for event in stream_events(path, limits, progress, block):
            if count < 2:
                head.append(event)
            count += 1
            if kept is not None:
                kept.append(event)
                if count > KEEP_EVENTS:
                    kept = None
    except (NotStreamable, UserError):
        events = read_whole(path, limits)  # the fault, named as it always was
        return events, events[:2]
    if kept is not None:
        return kept, kept[:2]
    return EventFile(path, limits, count, 0, tuple(blocks)), head


def _size(path: Path) -> int | None:
    """The size of a regular file at ``path`` (None: anything else, which the stream
    refuses as it always has, or a fault the scan names)."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_size if stat.S_ISREG(found.st_mode) else None


def _name(folder: Path) -> str:
    """The folder's own name, as ``resolve`` gives it (a link's target, ``.``'s own),
    resolved only when it must be: resolving walks every component of the path."""
    name = folder.name
    if name in ("", ".", "..") or folder.is_symlink():
        return folder.resolve().name
    return name


def scan_conversation(
    folder: Path, limits: Limits | None = None, progress: Progress | None = None
) -> JpFolder:
    """Read and check one JP conversation folder, as ``read_conversation`` does, keeping
    the events in their file; any problem raises ``UserError``."""
    folder = Path(folder)
    limits = limits or Limits()
    if not folder.is_dir():
        what = "no such folder" if not folder.exists() else "not a folder"
        raise UserError(f"{folder}: {what}", FOLDER_HINT)
    events, head = _scan_events(folder / EVENTS_FILE, limits, progress)
    metadata = read_metadata(folder / METADATA_FILE, limits)
    base_config = read_base_config(folder / BASE_CONFIG_FILE, limits)
    if base_config is None and head and head[0].get("type") == Kind.CONFIG_DELTA:
        # Legacy layout: the first entry carries the whole base config.
        base_config = dict(head.pop(0)["delta"])
        if isinstance(events, list):
            events.pop(0)
        else:
            events = EventFile(events.path, limits, events.count - 1, 1, events.blocks)
    title = metadata.get("title")
    return JpFolder(
        jp_id=jp_id_from_folder(_name(folder)),
        title=title if isinstance(title, str) else None,
        metadata=metadata,
        base_config=base_config,
        events=events,
        first=head[0] if head else None,
    )


__all__ = ["EVERY", "EventFile", "JpFolder", "scan_conversation"]
