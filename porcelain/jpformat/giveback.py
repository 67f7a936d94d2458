"""A conversation as the tool's records again, jp's own turns included (``export --to``).

Pure: a chain of events in, the session file's records out, each with the
span of events it stands for.  A record kept from the tool's file comes back
as it was (its ``sessionId`` set to the session's own when the conversation is
a fork with an id of its own); the turns added in jp (``q -i``, a fork, a
conversation never imported) become records of the tool's format:

- Claude Code: a prompt is a ``user`` record, an answer's text and tool calls
  one ``assistant`` record (``tool_use`` blocks), the results one ``user``
  record of ``tool_result`` blocks; each has a ``uuid`` made from the record
  before it and its own content, and that record's ``uuid`` as ``parentUuid``,
  so the same conversation gives the same records on every export;
- Codex: a prompt is a user ``message`` item with its ``user_message`` event
  (Codex lists a session by it), an answer an assistant ``message``, a tool
  call a ``function_call`` and its ``function_call_output``.

A prompt is written as the model read it: its attachments framed before its
text (``request_text``), its images (and, for Claude Code, its PDFs) as the
tool's own image blocks (``image`` / ``document``; Codex: ``input_image`` items
with a ``data:`` URL and the ``user_message``'s ``images``), before the text as
jp sends them; a tool result's images go inside it the same way.  A record
stays within the longest line jp's own import reads (``max_line``), so the file
imports back: the images that would not fit are left out and named in the text
(and a prompt's attached text files too, when they alone would not fit).

jp's reasoning is not given back: the tools send earlier thinking back to the
model only with the provider's signature, which jp's text does not have.

A turn jp added starts with a ``turn_start`` event that no record carries and
that is not dated like the record before it (a record's own events all take
its time); everything from there to the next kept record is jp's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gitstore import CONVERSATION_TYPES, Event, Kind
from porcelain.clock import name_uuid
from porcelain.domain.attachments import attachments_of, media_in, request_text, result_media
from porcelain.domain.media import IMAGE_TYPES, PDF, describe, media_of
from porcelain.jpformat.sessionmap import RECORD_TYPE, SOURCE_KEY

CLAUDE = "claude-code"
CODEX = "codex"
NAMESPACE = "6a7e0b52-5b1e-4c3a-9d1e-6a7067697662"  # jp's, for session and record ids
CLAUDE_VERSION = "2.1.39"  # written in the records of a conversation never imported
CODEX_VERSION = "0.125.0"
MODEL = "jp"  # an answer's model when jp did not record one
RECORD_MARGIN = 16 << 10  # a record's fields besides its text and media, and then some
MEDIA_MARGIN = 256  # an image's block besides its base64 bytes
_CALL_ID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Piece:
    """One record of the file and the events it stands for (``start``..``end``)."""

    start: int
    end: int
    record: dict[str, Any]
    jp: bool  # made from jp's own events (else kept from the tool's file)


@dataclass
class Context:
    """What every record of a session repeats (Claude Code: ``cwd``, ``version``...)."""

    session: str
    cwd: str
    rename: bool = False  # kept records take ``session`` as theirs (a session of its own)
    fields: dict[str, Any] = field(default_factory=dict)
    max_line: int | None = None  # the longest line a record may take (None: any)

    def room(self) -> int | None:
        """The bytes a record's text and media may take."""
        return None if self.max_line is None else max(0, self.max_line - RECORD_MARGIN)


def given_session(cid: str) -> str:
    """The session id a conversation of jp's own takes in the tool's files: the same
    on every machine, and found again when its file is imported back."""
    return name_uuid(NAMESPACE, f"jp-conversation:{cid}")


def carried(event: Event) -> dict[str, Any] | None:
    """The tool's record an event keeps, if any."""
    if event.get("type") == RECORD_TYPE:
        record = event.get("record")
    elif event.get("type") == Kind.CONVERSATION_START:
        return None
    else:
        meta = event.get("metadata")
        record = meta.get(SOURCE_KEY) if isinstance(meta, dict) else None
    return record if isinstance(record, dict) else None


def split(events: Sequence[Event]) -> list[tuple[int, int, dict[str, Any] | None]]:
    """The chain cut into runs: ``(start, end, record)`` for a kept record's events,
    ``(start, end, None)`` for a run of jp's own turns."""
    out: list[tuple[int, int, dict[str, Any] | None]] = []
    record_time: Any = None
    for index, event in enumerate(events):
        record = carried(event)
        if record is not None:
            out.append((index, index, record))
            record_time = event.get("timestamp")
            continue
        kind = event.get("type")
        opens = kind == Kind.TURN_START and event.get("timestamp") != record_time
        if out and (out[-1][2] is None or not opens):
            if kind in CONVERSATION_TYPES or out[-1][2] is None:
                out[-1] = (out[-1][0], index, out[-1][2])
            continue
        if opens or (not out and kind in CONVERSATION_TYPES):
            out.append((index, index, None))
            record_time = None
    return out


def records(tool: str, events: Sequence[Event], context: Context) -> list[Piece]:
    """The file's records for ``events``: kept ones as they were (their session id
    made ``context.session``), jp's turns as the tool's own."""
    out: list[Piece] = []
    for start, end, record in split(events):
        if record is not None:
            kept = _own_session(tool, record, context.session) if context.rename else record
            out.append(Piece(start, end, kept, False))
            _learn(tool, record, context)
            continue
        made = _claude(events, start, end, out, context) if tool == CLAUDE else None
        if made is None:
            made = _codex(events, start, end, context)
        out.extend(made)
    return out


def _own_session(tool: str, record: dict[str, Any], session: str) -> dict[str, Any]:
    if tool == CLAUDE:
        if isinstance(record.get("sessionId"), str) and record["sessionId"] != session:
            return {**record, "sessionId": session}
        return record
    payload = record.get("payload")
    meta = record.get("type") == "session_meta" and isinstance(payload, dict)
    if meta and isinstance(payload, dict) and payload.get("id") != session:
        return {**record, "payload": {**payload, "id": session}}
    return record


def _learn(tool: str, record: dict[str, Any], context: Context) -> None:
    """Take the session's repeated fields from a kept record (the last one wins)."""
    if tool == CLAUDE:
        if isinstance(record.get("cwd"), str) and record.get("type") in ("user", "assistant"):
            context.cwd = record["cwd"]
            for key in ("version", "gitBranch", "userType"):
                if isinstance(record.get(key), str):
                    context.fields[key] = record[key]
        return
    payload = record.get("payload")
    kind = record.get("type")
    if kind in ("session_meta", "turn_context") and isinstance(payload, dict):
        cwd = payload.get("cwd")
        context.cwd = cwd if isinstance(cwd, str) else context.cwd


# -- the turns as Claude Code records ---------------------------------------------


def _claude(
    events: Sequence[Event], start: int, end: int, before: list[Piece], context: Context
) -> list[Piece]:
    parent = next(
        (p.record["uuid"] for p in reversed(before) if _in_chain(p.record)),
        None,
    )
    out: list[Piece] = []
    pending: list[tuple[int, str, dict[str, Any]]] = []  # (event, "user"|"assistant", block)

    def flush(last: int) -> None:
        nonlocal parent
        if not pending:
            return
        role = pending[0][1]
        first = pending[0][0]
        blocks = [b for _, _, b in pending]
        stamp = str(events[pending[-1][0]].get("timestamp"))
        if role == "user" and len(blocks) == 1 and blocks[0].get("type") == "text":
            message: dict[str, Any] = {"role": "user", "content": blocks[0]["text"]}
        elif role == "user":
            message = {"role": "user", "content": blocks}
        else:
            message = _assistant_message(events[pending[0][0]], blocks)
        record = _claude_record(role, message, parent, stamp, context)
        parent = record["uuid"]
        out.append(Piece(first if out else start, last, record, True))
        pending.clear()

    for index in range(start, end + 1):
        event = events[index]
        kind = event.get("type")
        made, role = _claude_blocks(event, context.room())
        if not made:
            continue
        if pending and (pending[-1][1] != role or kind == Kind.CHAT_REQUEST):
            flush(index - 1)
        pending.extend((index, role, block) for block in made)
    flush(end)
    return out


CHAINED = ("user", "assistant", "system", "attachment")  # what Claude Code's chain links


def _in_chain(record: dict[str, Any]) -> bool:
    """Whether Claude Code follows ``parentUuid`` through this record when it resumes
    (a record of a type it does not load would cut the history there)."""
    return isinstance(record.get("uuid"), str) and record.get("type") in CHAINED


def _claude_blocks(event: Event, room: int | None) -> tuple[list[dict[str, Any]], str]:
    """The blocks an event gives its record, and the record's role (none: nothing);
    ``room``: the bytes its text and media may take."""
    kind = event.get("type")
    if kind == Kind.CHAT_REQUEST:
        text, kept = prompt(event, room)
        media = [_claude_media(media_type, data) for media_type, data in kept]
        if media and not text.strip():
            return media, "user"
        return [*media, {"type": "text", "text": text}], "user"
    if kind == Kind.CHAT_RESPONSE:
        said = event.get("message")
        if isinstance(said, str) and said.strip():
            return [{"type": "text", "text": said}], "assistant"
        return [], ""
    if kind == Kind.TOOL_CALL_REQUEST:
        arguments = event.get("arguments")
        return [{
            "type": "tool_use",
            "id": call_id(event.get("id")),
            "name": tool_name(event.get("name")),
            "input": arguments if isinstance(arguments, dict) else {},
        }], "assistant"  # fmt: skip
    if kind == Kind.TOOL_CALL_RESPONSE:
        output: Any
        output, images = result(event, room)
        if images:
            output = [{"type": "text", "text": output},
                      *(_claude_media(media_type, data) for media_type, data in images)]  # fmt: skip
        return [{
            "tool_use_id": call_id(event.get("id")),
            "type": "tool_result",
            "content": output,
            "is_error": event.get("is_error") is True,
        }], "user"  # fmt: skip
    return [], ""


def prompt(event: Event, room: int | None) -> tuple[str, list[tuple[str, str]]]:
    """A prompt's text as the model read it (its attachments framed before it) and its
    media, within ``room`` bytes: the media that fit, in order, the rest named in the
    text; when the framed text files alone do not fit, the prompt's own text and a line
    naming them."""
    text = request_text(event)
    if room is not None and _size(text) > room:
        content = event.get("content")
        files = sum(1 for a in attachments_of(event) if media_of(a) is None)
        note = f"[jp: {files} attached text files left out here: too large for one record]"
        text = f"{content}\n\n{note}" if isinstance(content, str) and content else note
    return _fit(text, media_in(event), room, "\n\n")


def result(event: Event, room: int | None) -> tuple[str, list[tuple[str, str]]]:
    """A tool result's text and its images, within ``room`` bytes (as ``prompt``)."""
    content = event.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    return _fit(text, result_media(event), room, "\n")


def _fit(
    text: str, media: list[tuple[str, str]], room: int | None, sep: str
) -> tuple[str, list[tuple[str, str]]]:
    if room is None:
        return text, media
    used = _size(text) + 256  # room for the lines naming what is left out
    kept, left = [], []
    for media_type, data in media:
        if used + len(data) + MEDIA_MARGIN <= room:
            kept.append((media_type, data))
            used += len(data) + MEDIA_MARGIN
        else:
            size = len(data) * 3 // 4 - data[-2:].count("=")
            left.append(f"[{describe(media_type)}, {size:,} bytes: left out here, too large]")
    named = "\n".join(left)
    return (f"{text}{sep}{named}" if text and named else text or named), kept


def _size(text: str) -> int:
    """The bytes ``text`` takes in a JSON line."""
    return len(json.dumps(text, ensure_ascii=False).encode())


def _claude_media(media_type: str, data: str) -> dict[str, Any]:
    """An image or PDF as Claude Code keeps it in a message (a base64 source)."""
    block = "document" if media_type == PDF else "image"
    return {"type": block, "source": {"type": "base64", "media_type": media_type, "data": data}}


def call_id(value: Any) -> str:
    """A tool call's id as the tools' APIs take it (letters, digits, ``_`` and ``-``)."""
    text = value if isinstance(value, str) and value else "call"
    return _CALL_ID.sub("_", text)[:64]


def tool_name(value: Any) -> str:
    """A tool's name as the APIs take it in a call (letters, digits, ``_`` and ``-``,
    at most 64): an MCP tool's ``server.tool`` becomes ``server_tool``."""
    text = value if isinstance(value, str) and value else "tool"
    return _CALL_ID.sub("_", text)[:64]


def _assistant_message(event: Event, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    meta = event.get("metadata")
    model = meta.get("model") if isinstance(meta, dict) else None
    uses = any(b.get("type") == "tool_use" for b in blocks)
    digest = hashlib.sha1(json.dumps(blocks, sort_keys=True).encode()).hexdigest()[:24]
    return {
        "model": model if isinstance(model, str) and model else MODEL,
        "id": f"msg_jp{digest}",
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": "tool_use" if uses else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


def _claude_record(
    role: str, message: dict[str, Any], parent: str | None, stamp: str, context: Context
) -> dict[str, Any]:
    name = json.dumps([parent, role, message, stamp], sort_keys=True, ensure_ascii=False)
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": context.fields.get("userType", "external"),
        "cwd": context.cwd,
        "sessionId": context.session,
        "version": context.fields.get("version", CLAUDE_VERSION),
        "gitBranch": context.fields.get("gitBranch", ""),
        "type": role,
        "message": message,
        "uuid": name_uuid(NAMESPACE, name),
        "timestamp": _millis(stamp),
    }


def _millis(stamp: str) -> str:
    """jp's time (microseconds) as the tools write theirs: milliseconds, ``Z``."""
    match = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$", stamp)
    if not match:
        return stamp
    fraction = (match.group(2) or ".000")[1:].ljust(3, "0")[:3]
    return f"{match.group(1)}.{fraction}Z"


# -- the turns as Codex records -----------------------------------------------------


def _codex(events: Sequence[Event], start: int, end: int, context: Context) -> list[Piece]:
    out: list[Piece] = []
    first = start
    for index in range(start, end + 1):
        made = _codex_items(events[index], context.room())
        if not made:
            continue
        for record in made:
            out.append(Piece(first, index, record, True))
            first = index
        first = index + 1
    return out


def _codex_items(event: Event, room: int | None) -> list[dict[str, Any]]:
    kind = event.get("type")
    stamp = _millis(str(event.get("timestamp")))

    def item(payload: dict[str, Any], typ: str = "response_item") -> dict[str, Any]:
        return {"timestamp": stamp, "type": typ, "payload": payload}

    if kind == Kind.CHAT_REQUEST:
        text, kept = prompt(event, room)
        urls = _data_urls(kept)
        return [
            item({"type": "message", "role": "user",
                  "content": [*({"type": "input_image", "image_url": u} for u in urls),
                              {"type": "input_text", "text": text}]}),
            item({"type": "user_message", "message": text, "images": urls}, "event_msg"),
        ]  # fmt: skip
    if kind == Kind.CHAT_RESPONSE:
        said = event.get("message")
        if not isinstance(said, str) or not said.strip():
            return []
        return [
            item({"type": "message", "role": "assistant",
                  "content": [{"type": "output_text", "text": said}]}),
        ]  # fmt: skip
    if kind == Kind.TOOL_CALL_REQUEST:
        arguments = event.get("arguments")
        return [
            item({"type": "function_call", "name": tool_name(event.get("name")),
                  "arguments": json.dumps(arguments if isinstance(arguments, dict) else {}),
                  "call_id": call_id(event.get("id"))}),
        ]  # fmt: skip
    if kind == Kind.TOOL_CALL_RESPONSE:
        output: Any
        output, images = result(event, room)
        urls = _data_urls(images)
        if urls:
            output = [{"type": "input_text", "text": output},
                      *({"type": "input_image", "image_url": u} for u in urls)]  # fmt: skip
        return [
            item({"type": "function_call_output", "call_id": call_id(event.get("id")),
                  "output": output}),
        ]  # fmt: skip
    return []


def _data_urls(media: list[tuple[str, str]]) -> list[str]:
    """The images among ``media`` as ``data:`` URLs (a PDF stays named in the text: a
    Codex message holds no documents)."""
    return [f"data:{kind};base64,{data}" for kind, data in media if kind in IMAGE_TYPES]


def codex_meta(session: str, stamp: str, cwd: str) -> dict[str, Any]:
    """The ``session_meta`` record a rollout of jp's own starts with."""
    when = _millis(stamp)
    return {
        "timestamp": when,
        "type": "session_meta",
        "payload": {
            "id": session,
            "timestamp": when,
            "cwd": cwd,
            "originator": "jp",
            "cli_version": CODEX_VERSION,
            "source": "cli",
            "model_provider": "openai",
        },
    }


# -- what a conversation's session file holds ------------------------------------------


def origin_of(events: Sequence[Event]) -> dict[str, Any] | None:
    """The ``imported`` facts of the chain's own start (its last), if any."""
    start = next((e for e in reversed(events) if e.get("type") == Kind.CONVERSATION_START), None)
    imported = start.get("imported") if start else None
    return imported if isinstance(imported, dict) else None


def own_session(tool: str, cid: str, events: Sequence[Event]) -> bool:
    """Whether the conversation takes a session id of its own in ``tool``'s files: it
    was not imported from ``tool`` (a fork of a session, or jp's own conversation)."""
    origin = origin_of(events)
    return origin is None or origin.get("format") != tool


def plan(
    tool: str, cid: str, events: Sequence[Event], cwd: str, max_line: int | None = None
) -> tuple[Context, list[Piece]]:
    """The records ``cid``'s session file holds, and its context (``cwd``: the folder
    a conversation of jp's own is given to, when no kept record names one;
    ``max_line``: the longest line jp's import reads, which jp's records keep within)."""
    origin = origin_of(events)
    if own_session(tool, cid, events):
        context = Context(given_session(cid), cwd, rename=True, max_line=max_line)
    else:
        assert origin is not None
        context = Context(str(origin.get("session") or ""), cwd, False, max_line=max_line)
    pieces = records(tool, events, context)
    if (
        tool == CODEX
        and context.rename
        and (not pieces or pieces[0].record.get("type") != "session_meta")
    ):
        stamp = str(events[0].get("timestamp")) if events else ""
        pieces.insert(0, Piece(0, 0, codex_meta(context.session, stamp, cwd), True))
    return context, pieces


def file_cwd(tool: str, found: Sequence[dict[str, Any]]) -> str:
    """The folder a session file's records name (the first), else ``""``."""
    for record in found:
        payload = record.get("payload") if tool == CODEX else record
        if isinstance(payload, dict) and isinstance(payload.get("cwd"), str):
            return str(payload["cwd"])
    return ""


def foreign(tool: str, events: Sequence[Event]) -> str | None:
    """The other tool whose records the chain keeps, if any (they cannot be given back)."""
    for event in events:
        imported = event.get("imported") if event.get("type") == Kind.CONVERSATION_START else None
        if isinstance(imported, dict) and imported.get("format") not in (None, tool):
            return str(imported.get("format"))
    return None
