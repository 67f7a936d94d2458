"""What the session mappers share: jp events built record by record, each
source record kept whole in the first event made from it.

Every record of a session file becomes a group of jp events: the first one
carries the record itself in ``metadata.source_record``, and a record that
maps onto nothing jp sends to a model becomes one ``source_record`` event
(an event type older versions keep verbatim and ignore).  So the file comes
back from the events, every record in order (``records_of``), and nothing a
tool wrote is lost, whatever jp makes of it.

The mapping of a record depends only on the records before it, never on the
ones after: a session that grew maps to the events of the shorter one
followed by new ones, so a re-import appends and never rewrites.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import Any

from gitstore import CONVERSATION_TYPES, Event, Kind, format_time, parse_time
from porcelain.domain.media import IMAGE_TYPES, describe, media_attachment, placeholder, sniff
from porcelain.jpformat.sessionlines import valid_time

IMAGE_BUDGET = 3 << 20  # bytes of images a prompt sends (its record holds them once more)
SOURCE_KEY = "source_record"  # metadata key of a mapped event holding its record
RECORD_TYPE = "source_record"  # the event of a record jp maps onto nothing
TOOLS = ("claude-code", "codex")
RESULT_MEDIA = "attachments"  # metadata key of a tool result's images (domain/attachments.py)
INDEX_KEY = "source_index"  # metadata key: a rewind branch's record, its 0-based place in the file
MAX_NAME = 200  # a tool name or model name from a record, as jp keeps it
EPOCH = "1970-01-01T00:00:00Z"  # the time of records before the first that has one

# what a Builder holds between records: time, turn, seen_in_turn, fresh_turn, open calls, seen_any
State = tuple[str, int, bool, bool, dict[str, str] | None, bool]


class Builder:
    """Events for one record at a time, with the turn and tool-call state JP's rules need.

    A tool result becomes a ``tool_call_response`` only when its call is an
    unanswered request of the current turn (the store refuses any other); the
    record is kept either way.
    """

    def __init__(self) -> None:
        self.time = _normal(EPOCH)
        self.group: list[Event] = []
        self.turn = 0  # the current turn's 0-based index
        self.seen_in_turn = False  # the current turn holds a conversation event
        self.fresh_turn = False  # the last conversation event is a turn_start
        self.open_calls: dict[str, str] = {}  # id -> name, requested in this turn, unanswered
        self.seen_any = False
        self.images_left = IMAGE_BUDGET  # bytes of images the turn may still send

    # -- a branch point ----------------------------------------------------------

    def snapshot(self) -> State:
        """The state between two records, to go on from later (a rewind's branch)."""
        calls = dict(self.open_calls) if self.open_calls else None
        return (self.time, self.turn, self.seen_in_turn, self.fresh_turn, calls, self.seen_any)

    @classmethod
    def resumed(cls, state: State) -> Builder:
        """A builder that goes on from ``state`` (``snapshot``)."""
        out = cls()
        out.time, out.turn, out.seen_in_turn, out.fresh_turn, calls, out.seen_any = state
        out.open_calls = dict(calls) if calls else {}
        return out

    # -- one record ------------------------------------------------------------

    def begin(self, record: dict[str, Any]) -> None:
        """Start the events of ``record``, dated by its ``timestamp`` (or one of an object
        it holds, as a snapshot's); a record without one takes the time of the one before."""
        found = valid_time(record.get("timestamp"))
        if found is None:
            nested = (v.get("timestamp") for v in record.values() if isinstance(v, dict))
            found = next((t for t in map(valid_time, nested) if t), None)
        if found:
            self.time = _normal(found)
        self.group = []

    def finish(self, record: dict[str, Any]) -> list[Event]:
        """The record's events; the first carries the record whole."""
        group, self.group = self.group, []
        if not group:
            return [{"type": RECORD_TYPE, "timestamp": self.time, "record": record}]
        first = group[0]
        first["metadata"] = {**(first.get("metadata") or {}), SOURCE_KEY: record}
        return group

    # -- events ----------------------------------------------------------------

    def emit(self, event: Event) -> None:
        kind = event.get("type")
        if kind in CONVERSATION_TYPES:
            if kind == Kind.TURN_START:
                if self.seen_in_turn:
                    self.turn += 1
                self.open_calls = {}
            self.seen_in_turn = True
            self.seen_any = True
            self.fresh_turn = kind == Kind.TURN_START
        self.group.append(event)

    def start_turn(self) -> None:
        if not self.fresh_turn:
            self.emit({"type": Kind.TURN_START.value, "timestamp": self.time})

    def request(self, text: str, attachments: list[dict[str, Any]] | None = None) -> None:
        """A prompt; ``attachments``: its images (``images_of``), sent to the model as images."""
        self.start_turn()
        event: Event = {"type": Kind.CHAT_REQUEST.value, "timestamp": self.time, "content": text}
        if attachments:
            event["attachments"] = attachments
        self.emit(event)
        self.images_left = IMAGE_BUDGET - sum(int(a.get("size", 0)) for a in attachments or [])

    def answer(self, text: str, metadata: dict[str, Any] | None = None) -> None:
        event: Event = {"type": Kind.CHAT_RESPONSE.value, "timestamp": self.time, "message": text}
        if metadata:
            event["metadata"] = metadata
        self.emit(event)

    def reasoning(self, text: str) -> None:
        self.emit({"type": Kind.CHAT_RESPONSE.value, "timestamp": self.time, "reasoning": text})

    def call(self, call_id: str, name: str, arguments: dict[str, Any]) -> bool:
        """A tool call request; False (nothing made) when its id is already open."""
        if not call_id or call_id in self.open_calls:
            return False
        name = name[:MAX_NAME] or "tool"
        self.emit(
            {
                "type": Kind.TOOL_CALL_REQUEST.value,
                "timestamp": self.time,
                "id": call_id,
                "name": name,
                "arguments": arguments,
            }
        )
        self.open_calls[call_id] = name
        return True

    def result(
        self, call_id: str, content: str, is_error: bool, images: list[dict[str, Any]] | None = None
    ) -> bool:
        """A tool result; False (nothing made) when no open call of this turn has its id.
        ``images``: the result's images (``images_of``), sent to the model as images
        (``metadata.attachments``: a tool result holds text only)."""
        if call_id not in self.open_calls:
            return False
        del self.open_calls[call_id]
        event: Event = {
            "type": Kind.TOOL_CALL_RESPONSE.value,
            "timestamp": self.time,
            "id": call_id,
            "content": content,
            "is_error": is_error,
        }
        if images:
            event["metadata"] = {RESULT_MEDIA: images}
        self.emit(event)
        return True

    def result_images(self, content: Any) -> tuple[list[dict[str, Any]], str]:
        """A tool result's images within what the turn may still send, and lines naming
        the ones left out."""
        found = images_of(content, self.images_left)
        self.images_left -= sum(int(a["size"]) for a in found)
        return found, images_left_out(content, len(found))

    def compaction(self, summary: str) -> None:
        """The tool compacted everything so far: a jp compaction over every turn
        before this point, which opens a turn of its own (a boundary may fall mid-turn)."""
        if not self.seen_any:
            return
        self.fresh_turn = False
        self.start_turn()
        event: Event = {
            "type": Kind.COMPACTION.value,
            "timestamp": self.time,
            "from_turn": 0,
            "to_turn": self.turn - 1,
        }
        if summary:
            event["summary"] = {"summary": summary}
        if self.turn > 0:
            self.emit(event)


def _normal(stamp: str) -> str:
    return format_time(parse_time(stamp))


def arguments_of(value: Any) -> dict[str, Any]:
    """A tool call's arguments as jp keeps them: an object, else ``{"input": value}``."""
    if isinstance(value, dict):
        return value
    return {} if value is None else {"input": value}


def images_of(content: Any, budget: int = IMAGE_BUDGET) -> list[dict[str, Any]]:
    """The well-formed base64 images of a message's blocks, as request attachments
    (``domain/media.py``: the bytes in base64, their type, size and a one-line text
    naming them); an image whose bytes do not decode or are no image is left out
    (it stays in the kept record)."""
    if not isinstance(content, list):
        return []
    out = []
    left = budget
    for block in content:
        raw, kind = _image_bytes(block)
        if raw is not None and kind is not None and len(raw) <= left:
            out.append(media_attachment("file", "an image in the session", kind, raw))
            left -= len(raw)
    return out


def images_left_out(content: Any, kept: int | None = None) -> str:
    """Lines naming the images of ``content`` that ``images_of`` leaves out (over its
    budget: the record keeps them, and the event holding both must fit the store's limit;
    ``kept``: how many it took, when given another budget)."""
    if not isinstance(content, list):
        return ""
    kept = len(images_of(content)) if kept is None else kept
    found = [_image_bytes(b) for b in content]
    named = [
        f"[{describe(kind)}, {len(raw):,} bytes: too large to send again, kept in the record]"
        for raw, kind in found
        if raw is not None and kind is not None
    ]
    return "\n".join(named[kept:])


def _image_bytes(block: Any) -> tuple[bytes | None, str | None]:
    if not isinstance(block, dict) or block.get("type") != "image":
        return None, None
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None, None
    data = source.get("data")
    if not isinstance(data, str):
        return None, None
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None, None
    kind = sniff(raw)
    return (raw, kind) if kind in IMAGE_TYPES else (None, None)


def text_of(content: Any) -> str:
    """A tool result's content as text: a string as it is, text blocks joined (an image
    block as one line naming it and its size: its bytes stay in the kept record), else
    JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [_block_text(b) for b in content if isinstance(b, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "\n".join(t for t in texts if isinstance(t, str))
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def _block_text(block: dict[str, Any]) -> str | None:
    if block.get("type") == "image":
        raw, kind = _image_bytes(block)
        if raw is not None and kind is not None:
            return placeholder(kind, len(raw))
        return "[an image that could not be read]"
    text = block.get("text")
    return text if isinstance(text, str) else None


def message_text(content: Any) -> str:
    """The text of a message's content: a string, or its text blocks joined (images and
    other blocks stay in the kept record)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [b.get("text") for b in content if isinstance(b, dict)]
    return "\n".join(t for t in texts if isinstance(t, str))


def records_of(events: Iterable[Event]) -> list[dict[str, Any]]:
    """The source records kept in a chain's events, in order (``export``)."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event.get("type") == RECORD_TYPE:
            record = event.get("record")
        else:
            meta = event.get("metadata")
            record = meta.get(SOURCE_KEY) if isinstance(meta, dict) else None
        if isinstance(record, dict):
            out.append(record)
    return out


def indexed_records(events: Iterable[Event]) -> list[tuple[Any, dict[str, Any]]]:
    """The source records kept in events with the file index each notes (a rewind
    branch's records do, ``INDEX_KEY``; None for the others), in order."""
    out: list[tuple[Any, dict[str, Any]]] = []
    for event in events:
        meta = event.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        record = event.get("record") if event.get("type") == RECORD_TYPE else meta.get(SOURCE_KEY)
        if isinstance(record, dict):
            out.append((meta.get(INDEX_KEY), record))
    return out
