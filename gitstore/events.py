"""Events: the unit of a conversation, one per commit.

In memory an event is a plain JSON object (``dict``) with JP's ``type`` tag and
field names (see docs/data-model.md).  Two differences from JP's files: nothing
is base64-encoded, and ``timestamp`` is RFC 3339 in UTC with microseconds
(``2026-01-05T09:00:07.000000Z``).  Plain dicts keep loading 10,000 events
cheap; the pydantic models below validate every event that enters the store
(import, append) and define the canonical JSON written into ``event.json``.

Conversation events (counted, turn-scoped): ``turn_start``, ``chat_request``,
``chat_response``, ``tool_call_request``, ``tool_call_response``,
``inquiry_request``, ``inquiry_response``.  Internal events (never sent to a
model): ``config_delta``, ``compaction``, ``compaction_reset`` and
``conversation_start``.  Any other tag is kept verbatim and ignored.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from gitstore.errors import InvalidEvent

Event = dict[str, Any]

CONVERSATION_TYPES = frozenset(
    {
        "turn_start",
        "chat_request",
        "chat_response",
        "tool_call_request",
        "tool_call_response",
        "inquiry_request",
        "inquiry_response",
    }
)
INTERNAL_TYPES = frozenset({"config_delta", "compaction", "compaction_reset", "conversation_start"})
KNOWN_TYPES = CONVERSATION_TYPES | INTERNAL_TYPES


def is_conversation_event(event: Event) -> bool:
    """True for the events JP counts and turns are made of."""
    return event.get("type") in CONVERSATION_TYPES


# -- time ---------------------------------------------------------------------


def format_time(moment: datetime) -> str:
    """RFC 3339, UTC, microseconds: the one form stored in events."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Accept RFC 3339 and JP's ``YYYY-MM-DD HH:MM:SS.<fraction>`` (UTC)."""
    raw = text.strip()
    if not raw:
        raise ValueError("empty timestamp")
    norm = raw.replace(" ", "T", 1)
    if norm.endswith(("Z", "z")):
        norm = norm[:-1] + "+00:00"
    head, sep, frac = norm.partition(".")
    if sep:
        digits = ""
        rest = ""
        for i, ch in enumerate(frac):
            if not ch.isdigit():
                rest = frac[i:]
                break
            digits += ch
        norm = f"{head}.{(digits + '000000')[:6]}{rest}"
    moment = datetime.fromisoformat(norm)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def now_text() -> str:
    return format_time(datetime.now(UTC))


# -- validation models --------------------------------------------------------


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


class ChatRequest(_Base):
    type: Literal["chat_request"]
    content: str
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    author: str | None = None


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


def validate(event: Any, where: str = "event") -> Event:
    """Check one event and return its normalised form (timestamp in RFC 3339).

    Unknown ``type`` tags are kept as they are (a newer writer's events); a
    known tag with a body that does not fit is refused.
    """
    if not isinstance(event, dict):
        raise InvalidEvent(where, "an event must be a JSON object")
    kind = event.get("type")
    if not isinstance(kind, str) or not kind:
        raise InvalidEvent(where, "an event needs a string `type`")
    if "timestamp" not in event or not isinstance(event["timestamp"], str):
        raise InvalidEvent(where, f"{kind} event has no string `timestamp`")
    if kind not in KNOWN_TYPES:
        return dict(event)
    try:
        _ADAPTER.validate_python(event)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"][1:]) or kind
        raise InvalidEvent(where, f"{kind}: {loc}: {first['msg']}") from None
    out = dict(event)
    out["timestamp"] = format_time(parse_time(event["timestamp"]))
    if not out.get("metadata"):
        out.pop("metadata", None)
    return out


def canonical_json(event: Event) -> bytes:
    """The bytes of ``event.json``: sorted keys, UTF-8, one trailing newline.

    Changing this changes every object id written from then on.
    """
    return (json.dumps(event, sort_keys=True, ensure_ascii=False, indent=1) + "\n").encode()
