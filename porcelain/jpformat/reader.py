"""Reading a conversation folder written by JP (reference sections 1.4-1.7, 2).

A folder holds ``events.json`` (a JSON array of entries), ``metadata.json``
(the conversation record) and, in newer folders, ``base_config.json``.  Reading
either returns the whole conversation or raises one ``UserError`` that names
the file and the reason; it never returns part of a folder.  The files are
untrusted: they are read with the rules of ``gitstore.boundary`` (regular
files within a size limit, strict UTF-8 JSON, events of a known shape).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from gitstore import (
    CONVERSATION_TYPES,
    Event,
    Kind,
    Limits,
    NotStreamable,
    errors,
    fit_to_limits,
    format_time,
    load_json,
    parse_time,
    read_file,
    stream_array,
    validate_event,
)
from porcelain.errors import UserError

EVENTS_FILE = "events.json"
METADATA_FILE = "metadata.json"
BASE_CONFIG_FILE = "base_config.json"

#: Keys of ``metadata.json`` that hold timestamps (JP form on disk, RFC 3339 in memory).
TIME_KEYS = ("last_activated_at", "pinned_at", "archived_at", "expires_at")

# plain strings, compared for every entry read (a ``Kind`` member is looked up through
# the enum's metaclass, a thousand instructions)
_CALL, _RESULT = Kind.TOOL_CALL_REQUEST.value, Kind.TOOL_CALL_RESPONSE.value
_CONFIG = Kind.CONFIG_DELTA.value

FOLDER_HINT = (
    "a JP conversation folder holds events.json and metadata.json (and maybe base_config.json)"
)


class JpConversation(NamedTuple):
    """One JP conversation folder, decoded.

    ``metadata`` is the record of ``metadata.json`` with its timestamps in RFC
    3339 (as events carry them in memory); ``title`` mirrors
    ``metadata["title"]``.  ``events`` are validated, base64-free and include
    config deltas, compactions and unknown entries in file order.
    """

    jp_id: str | None
    title: str | None
    metadata: dict[str, Any]
    base_config: dict[str, Any] | None = None
    events: Sequence[Event] = ()


def jp_id_from_folder(name: str) -> str | None:
    """``17727391057-some-title`` -> ``jp-c17727391057``; None without leading digits."""
    head = name.split("-", 1)[0]
    if head.isascii() and head.isdigit():
        return f"jp-c{head}"
    return None


# -- base64 at rest -------------------------------------------------------------


def decode_text(value: str) -> str:
    """The decoded string if ``value`` is canonical padded base64 of UTF-8, else ``value``."""
    try:
        raw = base64.b64decode(value, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return value
    if base64.b64encode(raw).decode("ascii") != value:
        return value  # non-canonical (stray bits): not something JP wrote
    return text


def decode_strings(value: Any) -> Any:
    """Decode every string leaf of a JSON value (dict keys untouched)."""
    if isinstance(value, str):
        return decode_text(value)
    if isinstance(value, dict):
        return {k: decode_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_strings(v) for v in value]
    return value


def decode_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Undo JP's at-rest encoding of one entry (only conversation events are encoded)."""
    out = dict(entry)
    kind = out.get("type")
    if kind not in CONVERSATION_TYPES:
        return out
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = decode_strings(out["metadata"])
    if kind == _CALL and "arguments" in out:
        out["arguments"] = decode_strings(out["arguments"])
    if kind == _RESULT and isinstance(out.get("content"), str):
        out["content"] = decode_text(out["content"])
    return out


# -- files ----------------------------------------------------------------------


_MISSING: Any = object()  # what ``_load_json`` gives for an ``optional`` file not there


def _load_json(path: Path, limits: Limits, optional: bool = False) -> Any:
    """A file's JSON: a regular file within the size limit, read no further (a FIFO,
    a device or an endless file is refused before it is read), strict UTF-8 JSON."""
    try:
        data = read_file(path, limits.max_file_bytes)
    except FileNotFoundError:
        if optional:
            return _MISSING
        raise UserError(f"{path}: no such file", FOLDER_HINT)
    except errors.Refused as exc:  # a FIFO, a device, a file over the size limit
        raise UserError(f"{exc.what}: {exc.reason}")
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}")
    return _parsed(path, data)


def _parsed(path: Path, data: bytes) -> Any:
    try:
        return load_json(data)
    except ValueError as exc:
        raise UserError(f"{path}: {exc}")


def _kind_of(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def read_metadata(path: Path, limits: Limits) -> dict[str, Any]:
    raw = _load_json(path, limits, optional=True)
    if raw is _MISSING:
        return {}
    if not isinstance(raw, dict):
        raise UserError(f"{path}: expected a JSON object, found {_kind_of(raw)}", FOLDER_HINT)
    out = dict(raw)
    title = out.get("title")
    if title is not None and not isinstance(title, str):
        raise UserError(f"{path}: title: expected a string, found {_kind_of(title)}")
    for key in TIME_KEYS:
        if key not in out or out[key] is None:
            out.pop(key, None)
            continue
        value = out[key]
        if not isinstance(value, str):
            raise UserError(f"{path}: {key}: expected a timestamp, found {_kind_of(value)}")
        try:
            out[key] = format_time(parse_time(value))
        except ValueError:
            raise UserError(f"{path}: {key}: {value!r} is not a timestamp")
    labels = out.get("labels")
    if labels is not None and not (
        isinstance(labels, dict) and all(isinstance(v, str) for v in labels.values())
    ):
        raise UserError(f"{path}: labels: expected an object of strings")
    return out


def read_base_config(path: Path, limits: Limits) -> dict[str, Any] | None:
    raw = _load_json(path, limits, optional=True)
    if raw is _MISSING:
        return None
    if not isinstance(raw, dict):
        raise UserError(f"{path}: expected a JSON object, found {_kind_of(raw)}")
    return raw


def _unflatten_delta(entry: dict[str, Any]) -> dict[str, Any]:
    """Very old files put the config keys beside ``type``/``timestamp``; nest them."""
    if entry.get("type") != _CONFIG or "delta" in entry:
        return entry
    delta = {k: v for k, v in entry.items() if k not in ("type", "timestamp")}
    return {"type": "config_delta", "timestamp": entry.get("timestamp"), "delta": delta}


#: ``progress(entries, bytes_read, file_bytes)`` while ``events.json`` is read.
Progress = Callable[[int, int, int], None]


def read_events(
    path: Path, limits: Limits | None = None, progress: Progress | None = None
) -> list[Event]:
    """The entries of one ``events.json``, decoded and validated; a tool result over
    the size limit is cut (with a marker), any other event over it refused.

    The file is parsed one entry at a time (``stream_events``), so the bytes and
    the raw JSON never sit in memory whole.  Should that find any fault, the
    file is read again whole (``read_whole``), as before streaming, so a refusal
    names the fault in the same words and with the same precedence (a JSON
    error anywhere before a bad entry)."""
    limits = limits or Limits()
    try:
        return list(stream_events(path, limits, progress))
    except (NotStreamable, UserError):
        pass
    return read_whole(path, limits)


def read_whole(path: Path, limits: Limits, data: bytes | None = None) -> list[Event]:
    """``read_events`` of the file read whole (the exact fault, or the events of a file
    that only the whole reader takes); ``data``: its bytes, read already."""
    raw = _load_json(path, limits) if data is None else _parsed(path, data)
    if not isinstance(raw, list):
        raise UserError(
            f"{path}: expected a JSON array of events, found {_kind_of(raw)}", FOLDER_HINT
        )
    return _checked(path, raw, limits)


def stream_events(
    path: Path,
    limits: Limits,
    progress: Progress | None = None,
    on_data: Callable[[bytes], None] | None = None,
    again: bool = False,
) -> Iterator[Event]:
    """The checked events of ``events.json`` as they are parsed (``NotStreamable`` or a
    ``UserError`` part way for a fault); ``on_data`` is handed every block read, before
    any of it is parsed.  ``again``: a second read of a file whose events were checked
    as they were read before, ``on_data`` raising for a block that differs from that
    read's (``EventFile``): the events are decoded and normalised, not checked again."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise UserError(f"{path}: no such file", FOLDER_HINT)
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}")
    seen = [0, 0]  # entries, bytes read

    def on_read(data: bytes) -> None:
        seen[1] += len(data)
        if on_data:
            on_data(data)

    def entries() -> Iterable[Any]:
        for entry in stream_array(path, limits.max_file_bytes, on_read):
            yield entry
            seen[0] += 1
            if progress and seen[0] % 1000 == 0:
                progress(seen[0], seen[1], size)

    try:
        yield from checked(path, entries(), limits, again)
    except errors.Refused as exc:  # a FIFO, a device, a file over the size limit
        raise UserError(f"{exc.what}: {exc.reason}")
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}")
    if progress:
        progress(seen[0], seen[1], size)


def _checked(path: Path, raw: Iterable[Any], limits: Limits) -> list[Event]:
    return list(checked(path, raw, limits))


def checked(
    path: Path, raw: Iterable[Any], limits: Limits, again: bool = False
) -> Iterator[Event]:
    """Each entry of ``raw`` decoded, validated and fitted to the limits, in order
    (``again``: entries checked before, as ``stream_events`` says, only normalised)."""
    label = f"{path}: entry "  # the path formatted once, not twice an entry (1 us each)
    for i, entry in enumerate(raw):
        where = f"{label}{i}"
        if isinstance(entry, dict):
            entry = decode_entry(_unflatten_delta(entry))  # a copy
            if entry.get("type") == _RESULT:
                entry.setdefault("is_error", False)
        try:
            # its nesting and strings were checked as the file was parsed (``load_json``,
            # ``stream_array``); decoding base64 gives strict UTF-8 text at the same depth
            event = validate_event(entry, where, seen=again, walked=True)
        except errors.InvalidEvent as exc:
            raise UserError(str(exc), "fix or remove that entry of events.json and try again")
        try:
            event = fit_to_limits(event, limits)
        except errors.Refused as exc:
            raise UserError(f"{where}: {exc.what} is {exc.reason}")
        yield event


def read_conversation(
    folder: Path, limits: Limits | None = None, progress: Progress | None = None
) -> JpConversation:
    """Read one JP conversation folder; any problem raises ``UserError``."""
    folder = Path(folder)
    limits = limits or Limits()
    if not folder.is_dir():
        what = "no such folder" if not folder.exists() else "not a folder"
        raise UserError(f"{folder}: {what}", FOLDER_HINT)
    events = read_events(folder / EVENTS_FILE, limits, progress)
    metadata = read_metadata(folder / METADATA_FILE, limits)
    base_config = read_base_config(folder / BASE_CONFIG_FILE, limits)
    if base_config is None and events and events[0].get("type") == Kind.CONFIG_DELTA:
        # Legacy layout: the first entry carries the whole base config.
        base_config = dict(events.pop(0)["delta"])
    title = metadata.get("title")
    return JpConversation(
        jp_id=jp_id_from_folder(folder.resolve().name),
        title=title if isinstance(title, str) else None,
        metadata=metadata,
        base_config=base_config,
        events=events,
    )
