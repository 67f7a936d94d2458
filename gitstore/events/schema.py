"""The pydantic models that validate events entering the store (import, append).

Imported on first use by ``gitstore.events.validate``: building the models
costs start-up time that commands which only read never need to pay.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from gitstore.errors import InvalidEvent
from gitstore.events.kinds import KNOWN_TYPES, Event, normalised, parse_time
from gitstore.values import check_value


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")
    timestamp: str
    metadata: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _check_time(self) -> _Base:
        try:
            parse_time(self.timestamp)
        except ValueError as exc:
            raise ValueError(f"timestamp {self.timestamp!r} is not a date: {exc}") from None
        return self


class TurnStart(_Base):
    type: Literal["turn_start"]


class Attachment(BaseModel):
    """A file, standard input or a command's output, as it was when attached.

    An image or PDF also holds its bytes (``data``, base64), ``media_type`` and
    ``size``; its ``content`` is the text a text-only reader sees instead."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["file", "stdin", "command"]
    source: str
    content: str
    media_type: (
        Literal["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"] | None
    ) = None
    data: str | None = None
    size: int | None = None

    @model_validator(mode="after")
    def _media_whole(self) -> Attachment:
        given = [self.media_type is not None, self.data is not None, self.size is not None]
        if any(given) and not all(given):
            raise ValueError("an attachment's media_type, data and size go together")
        if self.data is not None:
            try:
                raw = base64.b64decode(self.data, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("an attachment's data is not base64") from None
            if len(raw) != self.size:
                raise ValueError(f"an attachment's data holds {len(raw)} bytes, not {self.size}")
        return self


class ChatRequest(_Base):
    type: Literal["chat_request"]
    content: str
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    author: str | None = None
    attachments: list[Attachment] | None = None


class ChatResponse(_Base):
    type: Literal["chat_response"]
    message: str | None = None
    reasoning: str | None = None
    data: Any = None

    @model_validator(mode="after")
    def _one_variant(self) -> ChatResponse:
        present = [k for k in ("message", "reasoning", "data") if k in self.model_fields_set]
        if len(present) != 1:
            raise ValueError("a chat_response holds exactly one of message, reasoning, data")
        return self


class ToolCallRequest(_Base):
    type: Literal["tool_call_request"]
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolCallResponse(_Base):
    type: Literal["tool_call_response"]
    id: str
    content: str
    is_error: bool = False


class InquiryRequest(_Base):
    type: Literal["inquiry_request"]
    id: str
    source: dict[str, Any]
    question: dict[str, Any]


class InquiryResponse(_Base):
    type: Literal["inquiry_response"]
    id: str
    answer: Any = None


class ConfigDelta(_Base):
    type: Literal["config_delta"]
    delta: dict[str, Any]


class Summary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    summary: str


class ToolPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    policy: Literal["strip", "omit"]
    request: bool | None = None
    response: bool | None = None


class Compaction(_Base):
    type: Literal["compaction"]
    from_turn: int = Field(ge=0)
    to_turn: int = Field(ge=0)
    summary: Summary | None = None
    reasoning: Literal["strip"] | None = None
    tool_calls: ToolPolicy | None = None


class CompactionReset(_Base):
    type: Literal["compaction_reset"]
    withdraw: list[int] | None = None


class ConversationStart(_Base):
    type: Literal["conversation_start"]
    conversation_id: str
    forked_from: dict[str, Any] | None = None
    review: dict[str, Any] | None = None
    imported: dict[str, Any] | None = None


_Known = Annotated[
    TurnStart
    | ChatRequest
    | ChatResponse
    | ToolCallRequest
    | ToolCallResponse
    | InquiryRequest
    | InquiryResponse
    | ConfigDelta
    | Compaction
    | CompactionReset
    | ConversationStart,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(_Known)


def validate_event(event: Any, where: str = "event") -> Event:
    """Check one event and return its normalised form (timestamp in RFC 3339).

    Unknown ``type`` tags are kept as they are (a newer writer's events); a
    known tag with a body that does not fit is refused.
    """
    check_event(event, where)
    return normalised(event)


def check_event(event: Any, where: str = "event", walked: bool = False) -> bool:
    """Raise ``InvalidEvent`` unless ``event`` fits its type; True for an unknown type.

    ``walked``: the caller already checked its nesting and strings
    (``values.load_json``), so they are not walked again.
    """
    if not isinstance(event, dict):
        raise InvalidEvent(where, "an event must be a JSON object")
    if not walked:
        try:  # storable as UTF-8 JSON, and within what jp's writer can nest
            check_value(event)
        except ValueError as exc:
            raise InvalidEvent(where, str(exc)) from None
    kind = event.get("type")
    if not isinstance(kind, str) or not kind:
        raise InvalidEvent(where, "an event needs a string `type`")
    if "timestamp" not in event or not isinstance(event["timestamp"], str):
        raise InvalidEvent(where, f"{kind} event has no string `timestamp`")
    if kind not in KNOWN_TYPES:
        try:  # kept verbatim, but its commit is dated by it
            parse_time(event["timestamp"])
        except ValueError as exc:
            raise InvalidEvent(where, f"{kind}: timestamp {event['timestamp']!r}: {exc}") from None
        return True
    try:
        _ADAPTER.validate_python(event)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"][1:]) or kind
        raise InvalidEvent(where, f"{kind}: {loc}: {first['msg']}") from None
    return False
