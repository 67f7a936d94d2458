"""Writing a conversation folder exactly as JP writes it (reference 1.2-1.7, 2.2).

In memory events carry RFC 3339 timestamps and no base64; on disk JP wants its
own timestamp form, base64 on the fields it encodes, a fixed key order, and
none of this project's internal entries (``conversation_start``,
``compaction_reset``).  Withdrawn compactions are left out.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from gitstore import (
    CONVERSATION_TYPES,
    Event,
    Kind,
    errors,
    parse_time,
    validate_event,
)
from gitstore import (
    files as store_files,
)
from porcelain import clock
from porcelain.errors import UserError
from porcelain.jpformat.reader import BASE_CONFIG_FILE, EVENTS_FILE, METADATA_FILE, TIME_KEYS

#: Types JP does not know; never exported.
INTERNAL_ONLY = frozenset({"conversation_start", "compaction_reset"})

# Field order of each kind, as JP's structs declare them.
_FIELDS: dict[str, tuple[str, ...]] = {
    "turn_start": (),
    "chat_request": ("content", "schema", "author"),
    "chat_response": ("message", "reasoning", "data"),
    "tool_call_request": ("id", "name", "arguments"),
    "tool_call_response": ("id", "content", "is_error"),
    "inquiry_request": ("id", "source", "question"),
    "inquiry_response": ("id", "answer"),
    "config_delta": ("delta",),
    "compaction": ("from_turn", "to_turn", "summary", "reasoning", "tool_calls"),
}
# Entries JP writes with the tag first (internally tagged enum around them).
_TAG_FIRST = frozenset({"config_delta", "compaction"})
_METADATA_ORDER = ("title", "last_activated_at", "pinned_at", "archived_at", "expires_at", "labels")


class ConversationParts(Protocol):
    """What the writer needs; ``JpConversation`` is one."""

    @property
    def events(self) -> Sequence[Event]: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...

    @property
    def base_config(self) -> Mapping[str, Any] | None: ...


# -- names ------------------------------------------------------------------------


def folder_name(jp_id: str, title: str | None) -> str:
    """JP's directory name: ``<deciseconds>`` or ``<deciseconds>-<slug>`` (reference 1.7)."""
    digits = jp_id.removeprefix("jp-c").split("-", 1)[0]
    if not (digits.isascii() and digits.isdigit()):
        raise UserError(f"not a JP conversation id: {jp_id!r}")
    if not title:
        return digits
    slug = "".join(c if c.isalnum() else "-" for c in title.strip()[:60]).rstrip("-").lower()
    if not slug:
        return digits
    name = f"{digits}-{slug}"
    if len(title.encode("utf-8")) > 60:
        name = name[: name.rfind("-")]
    return name


# -- values -----------------------------------------------------------------------


def jp_time(text: str) -> str:
    """Any accepted timestamp -> ``YYYY-MM-DD HH:MM:SS.<fraction>`` (UTC, trimmed)."""
    moment = parse_time(text)
    fraction = f"{moment.microsecond:06d}".rstrip("0") or "0"
    return f"{moment:%Y-%m-%d %H:%M:%S}.{fraction}"


def encode_text(value: str) -> str:
    return base64.b64encode(value.encode("utf-8")).decode("ascii")


def encode_strings(value: Any) -> Any:
    """Base64 every string leaf of a JSON value (dict keys untouched)."""
    if isinstance(value, str):
        return encode_text(value)
    if isinstance(value, dict):
        return {k: encode_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encode_strings(v) for v in value]
    return value


def _ordered(value: Mapping[str, Any], order: Iterable[str]) -> dict[str, Any]:
    """``value`` with ``order``'s keys first (those present), then the rest as given."""
    out = {k: value[k] for k in order if k in value}
    out.update((k, v) for k, v in value.items() if k not in out)
    return out


def _jp_inquiry(event: dict[str, Any]) -> None:
    """Nested objects of an inquiry, in JP's order (the store keeps keys sorted)."""
    if isinstance(event.get("source"), dict):
        event["source"] = _ordered(event["source"], ("source", "name"))
    question = event.get("question")
    if isinstance(question, dict):
        question = _ordered(question, ("text", "answer_type", "default"))
        if isinstance(question.get("answer_type"), dict):
            question["answer_type"] = _ordered(question["answer_type"], ("type", "options"))
        event["question"] = question


def to_jp_entry(event: Mapping[str, Any]) -> dict[str, Any]:
    """One in-memory event as JP writes it; unknown types are returned unchanged."""
    kind = event.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        return dict(event)
    body = dict(event)
    body["timestamp"] = jp_time(str(event["timestamp"]))
    metadata = body.pop("metadata", None)
    if kind in CONVERSATION_TYPES:
        if kind == Kind.TOOL_CALL_REQUEST:
            body["arguments"] = encode_strings(body.get("arguments", {}))
        elif kind == Kind.TOOL_CALL_RESPONSE:
            body["content"] = encode_text(body["content"])
            body.setdefault("is_error", False)
        elif kind == Kind.INQUIRY_REQUEST:
            _jp_inquiry(body)
        if metadata:
            metadata = encode_strings(metadata)
    elif kind == Kind.COMPACTION:
        if isinstance(body.get("tool_calls"), dict):
            body["tool_calls"] = _ordered(body["tool_calls"], ("policy", "request", "response"))
        for key in ("summary", "reasoning", "tool_calls"):
            if body.get(key) is None:
                body.pop(key, None)
    head = ("type", "timestamp") if kind in _TAG_FIRST else ("timestamp", "type")
    out = _ordered(body, (*head, *_FIELDS[kind]))
    if metadata:
        out["metadata"] = metadata
    return out


def standing_events(events: Sequence[Event]) -> list[Event]:
    """Drop internal-only entries and every compaction a ``compaction_reset`` withdrew.

    A reset with ``withdraw: null`` withdraws every earlier compaction; with a
    list, it withdraws the compactions with those 0-based ordinals among all
    compaction entries before it.
    """
    withdrawn: set[int] = set()
    compactions: list[int] = []  # positions of compaction entries seen so far
    for pos, event in enumerate(events):
        kind = event.get("type")
        if kind == Kind.COMPACTION:
            compactions.append(pos)
        elif kind == Kind.COMPACTION_RESET:
            which = event.get("withdraw")
            if which is None:
                withdrawn.update(compactions)
            else:
                withdrawn.update(compactions[n] for n in which if 0 <= n < len(compactions))
    return [
        e
        for pos, e in enumerate(events)
        if e.get("type") not in INTERNAL_ONLY and pos not in withdrawn
    ]


def jp_metadata(metadata: Mapping[str, Any], events: Sequence[Event]) -> dict[str, Any]:
    """The record as JP writes it: JP timestamps, ``last_activated_at`` always present."""
    out = {k: v for k, v in metadata.items() if v is not None}
    if "last_activated_at" not in out:
        stamps = [parse_time(str(e["timestamp"])) for e in events if "timestamp" in e]
        out["last_activated_at"] = (max(stamps) if stamps else clock.now()).isoformat()
    for key in TIME_KEYS:
        if key in out:
            out[key] = jp_time(str(out[key]))
    if not out.get("labels"):
        out.pop("labels", None)
    return _ordered(out, _METADATA_ORDER)


# -- files ------------------------------------------------------------------------


def dump_json(value: Any) -> bytes:
    """Pretty JSON as JP writes it: 2-space indent, UTF-8, trailing newline."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def render_conversation(conv: ConversationParts) -> dict[str, bytes]:
    """The bytes of each file of the folder, keyed by file name."""
    entries: list[dict[str, Any]] = []
    for i, event in enumerate(standing_events(conv.events)):
        try:
            validate_event(dict(event), f"event {i}")
        except errors.InvalidEvent as exc:
            raise UserError(f"cannot export: {exc}")
        entries.append(to_jp_entry(event))
    files = {
        EVENTS_FILE: dump_json(entries),
        METADATA_FILE: dump_json(jp_metadata(conv.metadata, conv.events)),
    }
    base = conv.base_config
    if base is None and entries and entries[0].get("type") == Kind.CONFIG_DELTA:
        base = {}  # otherwise a reader takes that first delta for the legacy base config
    if base is not None:
        files[BASE_CONFIG_FILE] = dump_json(dict(base))
    return files


def write_conversation(folder: Path, conv: ConversationParts) -> None:
    """Write ``events.json``, ``metadata.json`` and maybe ``base_config.json`` into ``folder``.

    Files are replaced atomically and left alone when their bytes are unchanged;
    a ``base_config.json`` the conversation no longer has is removed.
    """
    folder = Path(folder)
    files = render_conversation(conv)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            store_files.write_atomic(folder / name, data, mode=0o600, unchanged=True)  # as mkstemp made it
        if BASE_CONFIG_FILE not in files:
            (folder / BASE_CONFIG_FILE).unlink(missing_ok=True)
    except OSError as exc:
        raise UserError(f"{exc.filename or folder}: cannot write: {exc.strerror or exc}")
