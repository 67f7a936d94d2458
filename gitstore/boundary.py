"""What jp takes in from outside: the one set of rules that pull and import share.

Anyone who can push to a shared remote, or who hands over a JP folder,
controls those bytes, so they are checked here before they land (the
checks on git objects, which use these rules, are in ``gitstore.sync.inbound``):

- JSON is strict (``gitstore.values``: UTF-8, no ``NaN``, nested at most
  ``MAX_DEPTH`` deep); a record read with ``load_record`` comes out ``Checked``,
  and an event that carries it is not walked into it again (only its depth is
  counted), so an import walks each record once;
- an event is a JSON object of a known shape with its field types checked
  (``gitstore.events.schema``), or of an unknown ``type`` kept as it is, and at most
  ``Limits.max_event_bytes`` long;
- a file is read only if it is a regular file no longer than
  ``Limits.max_file_bytes``, and never more than that is read;
- ref names: ``refs/conversations/<id>``, ``refs/archive/conversations/<id>``
  and ``refs/notes/<name>`` (one level);
- a metadata line is ``{"k": str, "v": any, "t": integer, "m": str}`` with a
  value of the right type for the keys jp knows; other lines are dropped.

Reading a store stays defensive with the same parsers (``meta_item``), so a
line that slipped in earlier is skipped, never fatal.  Nothing here imports
libgit2 at import time: the read path of ``ls`` uses it.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, NamedTuple

from gitstore import ids
from gitstore.errors import InvalidEvent, Refused
from gitstore.events import canonical_json
from gitstore.events.kinds import Kind
from gitstore.events.schema import check_event
from gitstore.values import LEAN, SURROGATE_ESCAPE, check_value, load_json
from gitstore.values import Checked as Checked  # what the boundary vouches for
from gitstore.values import load_record as load_record  # its one maker

MiB = 1024 * 1024
DEFAULT_MAX_EVENT_BYTES = 10 * MiB  # far below the 100 MB a forge such as GitHub refuses
DEFAULT_MAX_FILE_BYTES = 256 * MiB
NOTES_MAX_DEPTH = 32  # a 64-hex name split in 2-hex folders: 31 folders and a leaf
CONFIG_KEY = "store.max_event_bytes"


class Limits(NamedTuple):
    """Sizes jp accepts; porcelain sets them from the user's configuration."""

    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES


def size_text(n: int) -> str:
    if n >= MiB:
        return f"{n / MiB:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} bytes"


# -- events -------------------------------------------------------------------------------


def event_from_bytes(data: bytes, limits: Limits, what: str = "event.json") -> dict[str, Any]:
    """One event as stored in ``event.json``, checked (not normalised); raises ``Refused``."""
    if len(data) > limits.max_event_bytes:
        raise Refused(what, over_limit(len(data), limits))
    try:
        value = load_json(data)
    except ValueError as exc:
        raise Refused(what, str(exc)) from None
    try:
        check_event(value, what, walked=True)
    except InvalidEvent as exc:
        raise Refused(what, exc.reason) from None
    return dict(value)


def stored_event(data: bytes) -> dict[str, Any]:
    """The event an ``event.json`` already in a store holds; ``ValueError`` saying why
    it cannot be read (cheap checks: reading must not crash on a chain older jp or
    plain git wrote, nothing more).  The one parse of the event."""
    try:
        text = data.decode("utf-8")
        event = json.loads(text)
    except UnicodeDecodeError as exc:
        raise ValueError(f"event.json is not UTF-8 text (byte {exc.start})") from None
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"event.json is not JSON ({str(exc)[:80]})") from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise ValueError("event.json is not an event object")
    if not isinstance(event.get("timestamp", ""), str):
        raise ValueError("event.json has a timestamp that is not a string")
    if SURROGATE_ESCAPE.search(text) is not None:
        try:
            check_value(event)
        except ValueError as exc:
            raise ValueError(f"event.json: {exc}") from None
    return event


def over_limit(size: int, limits: Limits) -> str:
    return (
        f"{size_text(size)}, over the limit of {size_text(limits.max_event_bytes)} "
        f"per event ({CONFIG_KEY})"
    )


TRUNCATED = "\n\n[jp: {dropped} bytes of this tool result were dropped: over {limit} per event]"


def fit_event(event: dict[str, Any], encoded: bytes, limits: Limits) -> dict[str, Any] | None:
    """``event`` made to fit ``max_event_bytes`` (``encoded`` is its stored form).

    A tool result's ``content`` is cut, at a character boundary, and ends with
    a marker saying how many bytes were dropped; None when it fits as it is.
    Any other event over the limit is refused (``Refused``).
    """
    cap = limits.max_event_bytes
    if len(encoded) <= cap:
        return None
    content = event.get("content")
    if event.get("type") != Kind.TOOL_CALL_RESPONSE or not isinstance(content, str):
        raise Refused(f"a {event.get('type')} event", over_limit(len(encoded), limits))
    raw = content.encode("utf-8")
    best: dict[str, Any] | None = None
    lo, hi = 0, min(len(raw), cap)  # bytes of the content kept: the most that fits
    while best is None or hi - lo > max(64, cap // 1000):
        keep = (lo + hi) // 2 if best is not None else lo
        out = _cut(event, raw, keep, cap)
        if len(canonical_json(out)) <= cap:
            best, lo = out, keep
        elif keep == 0:
            raise Refused("a tool_call_response event", over_limit(len(encoded), limits))
        else:
            hi = keep
    return best


def _cut(event: dict[str, Any], raw: bytes, keep: int, cap: int) -> dict[str, Any]:
    text = raw[:keep].decode("utf-8", "ignore")  # a character cut in two goes whole
    dropped = len(raw) - len(text.encode("utf-8"))
    return {**event, "content": text + TRUNCATED.format(dropped=dropped, limit=size_text(cap))}


def fit(event: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """``fit_event`` for an event not yet encoded (a small one is not encoded at all).

    One loop over the values, not two generators: a big import asks this twice an
    event (the scan and the second read of ``events.json``), 2.0 to 0.4 us each."""
    text = 0
    for value in event.values():
        if isinstance(value, str):
            text += len(value)
        elif not (value is None or isinstance(value, bool | int | float)):
            break  # not flat: encoded and measured
    else:
        if text * 6 + 65536 < limits.max_event_bytes:  # escapes: at most 6 bytes a char
            return event
    return fit_event(event, canonical_json(event), limits) or event


# -- files -----------------------------------------------------------------------------------


def open_regular(path: Path, max_bytes: int) -> int:
    """A descriptor open on a regular file of at most ``max_bytes``; raises ``Refused``
    (or ``OSError``) for anything else.  FIFOs, devices and sockets are refused
    before they are read (``/dev/zero`` is never read, a FIFO never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise Refused(str(path), "is a folder, not a file") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise Refused(str(path), "is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise Refused(str(path), f"is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            size = size_text(info.st_size)
            raise Refused(str(path), f"is {size}, over the limit of {size_text(max_bytes)}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(path: Path, max_bytes: int) -> bytes:
    """A regular file's bytes, at most ``max_bytes``; raises ``Refused`` (or ``OSError``)
    as ``open_regular`` does."""
    fd = open_regular(path, max_bytes)
    try:
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:  # it grew while being read
            raise Refused(str(path), f"is over {size_text(max_bytes)}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


# -- ref names ---------------------------------------------------------------------------------

_NOTES_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}"  # compiled when first used (re's cache)


def conversation_name(rest: str) -> tuple[str, bool] | str:
    """``conversations/<id>`` or ``archive/conversations/<id>`` (the part after ``refs/``):
    ``(id, archived)``, else the reason it is not one jp holds."""
    archived = rest.startswith("archive/")
    name = rest[len("archive/") :] if archived else rest
    if not name.startswith("conversations/"):
        return "not a ref jp syncs (refs/archive/ holds only conversations/<id>)"
    cid = name[len("conversations/") :]
    if not ids.is_valid(cid):
        return "not a conversation id"
    return cid, archived


def notes_name(rest: str) -> str | None:
    """None when ``notes/<name>`` (after ``refs/``) is a notes ref jp syncs, else why not."""
    name = rest[len("notes/") :] if rest.startswith("notes/") else ""
    if not name or "/" in name:
        return "not a notes ref jp syncs (jp syncs refs/notes/NAME, one level)"
    if not re.fullmatch(_NOTES_NAME, name) or ".." in name or name.endswith((".lock", ".")):
        return "not a notes ref name jp can hold"
    return None


# -- metadata lines --------------------------------------------------------------------------

_TEXT_KEYS = frozenset(
    {
        "title",
        "pinned_at",
        "archived_at",
        "diverged_from",
        "diverge_reason",
        "diverged_at_commit",
        "diverged_remote",
        "diverged_at",
    }
)


class MetaLine(NamedTuple):
    key: str
    value: Any
    stamp: int
    machine: str


def meta_item(line: str) -> MetaLine | None:
    """One line of a metadata note, or None when it is not a well-formed line."""
    if not line.strip():
        return None
    try:  # the lean form of load_json: ls reads every line of every note
        item = LEAN.decode(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(item, dict):
        return None
    if "\\u" in line and SURROGATE_ESCAPE.search(line) is not None:
        try:
            check_value(item)
        except ValueError:
            return None
    key, stamp, machine = item.get("k"), item.get("t"), item.get("m")
    if not isinstance(key, str) or not isinstance(machine, str) or isinstance(stamp, bool):
        return None
    if isinstance(stamp, float) and stamp.is_integer():
        stamp = int(stamp)
    if not isinstance(stamp, int) or not -(2**63) <= stamp < 2**63:
        return None
    value = item.get("v")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is not None and not _value_fits(key, value):
        return None
    return MetaLine(key, value, stamp, machine)


def _value_fits(key: str, value: Any) -> bool:
    if key in _TEXT_KEYS:
        return isinstance(value, str)
    if key == "labels":
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    return True


def clean_meta(data: bytes) -> tuple[str, int]:
    """A metadata note's well-formed lines, and how many others (one that is not
    UTF-8 among them) were dropped."""
    kept: list[str] = []
    dropped = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = ""
        if meta_item(line) is None:
            dropped += 1
        else:
            kept.append(line)
    return "".join(line + "\n" for line in kept), dropped


def source_id(text: str | None) -> str | None:
    """The conversation id a ``refs/notes/source`` note names, or None."""
    value = text.strip().splitlines()[0].strip() if text and text.strip() else ""
    return value if ids.is_valid(value) else None
