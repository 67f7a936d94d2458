"""The shapes of the events jp knows, and the one check of an event against its shape.

Each known kind names its fields, each with the check of its value and whether
it is required; any other field is refused, and an event of an unknown kind is
kept verbatim once its time reads (a newer writer's).  Values are taken as
JSON gives them: a string is a ``str``, a count an ``int`` (never a ``bool``),
a flag a ``bool``.  docs/data-model.md lists the fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gitstore.errors import InvalidEvent
from gitstore.events.kinds import KNOWN_TYPES, parse_time
from gitstore.values import check_value

# why a value does not fit: where inside it ("" for the value itself) and why
Problem = tuple[str, str]
Check = Callable[[Any], Problem | None]  # None: the value fits
Fields = Mapping[str, tuple[Check, bool]]  # field -> (its check, required)


def _inside(name: str | int, problem: Problem) -> Problem:
    where, why = problem
    return (f"{name}.{where}" if where else str(name)), why


def _of(kind: type, name: str) -> Check:
    def check(value: Any) -> Problem | None:
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return None
        return "", f"Input should be a valid {name}"

    return check


def _optional(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


def _one_of(*allowed: str) -> Check:
    names = ", ".join(repr(a) for a in allowed[:-1]) + f" or {allowed[-1]!r}"
    return lambda value: None if value in allowed else ("", f"Input should be {names}")


def _anything(value: Any) -> Problem | None:
    return None


_STR = _of(str, "string")
_DICT = _of(dict, "dictionary")
_BOOL = _of(bool, "boolean")
_INT = _of(int, "integer")
_OPT_STR, _OPT_DICT, _OPT_BOOL = _optional(_STR), _optional(_DICT), _optional(_BOOL)


def _count(value: Any) -> Problem | None:
    if _INT(value) is None and value < 0:
        return "", "Input should be greater than or equal to 0"
    return _INT(value)


def _list(item: Check) -> Check:
    def check(value: Any) -> Problem | None:
        if not isinstance(value, list):
            return "", "Input should be a valid list"
        for n, element in enumerate(value):
            problem = item(element)
            if problem is not None:
                return _inside(n, problem)
        return None

    return check


def _fields_problem(value: dict[str, Any], fields: Fields) -> Problem | None:
    """Where and why ``value``'s fields do not fit ``fields``; None when they do."""
    for name, (check, required) in fields.items():
        if name not in value:
            if required:
                return name, "Field required"
            continue
        problem = check(value[name])
        if problem is not None:
            return _inside(name, problem)
    for name in value:
        if name not in fields:
            return name, "Extra inputs are not permitted"
    return None


def _object(fields: Fields, whole: Check = _anything) -> Check:
    """A nested object of ``fields`` (``whole``: a check of the object once they fit)."""

    def check(value: Any) -> Problem | None:
        if not isinstance(value, dict):
            return "", "Input should be a valid dictionary"
        return _fields_problem(value, fields) or whole(value)

    return check


_MEDIA = _one_of("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf")


def _media_whole(attachment: dict[str, Any]) -> Problem | None:
    """An image or PDF: its ``media_type``, ``data`` (base64) and ``size`` go together."""
    given = [attachment.get(k) is not None for k in ("media_type", "data", "size")]
    if any(given) and not all(given):
        return "", "an attachment's media_type, data and size go together"
    if attachment.get("data") is None:
        return None
    import base64  # lazy: start-up (a millisecond); only an image or a PDF needs it
    import binascii

    try:
        raw = base64.b64decode(attachment["data"], validate=True)
    except (binascii.Error, ValueError):
        return "", "an attachment's data is not base64"
    if len(raw) != attachment["size"]:
        return "", f"an attachment's data holds {len(raw)} bytes, not {attachment['size']}"
    return None


_ATTACHMENT = _object(
    {
        "kind": (_one_of("file", "stdin", "command"), True),
        "source": (_STR, True),
        "content": (_STR, True),
        "media_type": (_optional(_MEDIA), False),
        "data": (_OPT_STR, False),
        "size": (_optional(_INT), False),
    },
    _media_whole,
)
_SUMMARY = _object({"summary": (_STR, True)})
_TOOL_POLICY = _object(
    {
        "policy": (_one_of("strip", "omit"), True),
        "request": (_OPT_BOOL, False),
        "response": (_OPT_BOOL, False),
    }
)

_COMMON: Fields = {"type": (_STR, True), "timestamp": (_STR, True), "metadata": (_OPT_DICT, False)}
SHAPES: dict[str, Fields] = {
    "turn_start": {},
    "chat_request": {
        "content": (_STR, True),
        "schema": (_OPT_DICT, False),
        "author": (_OPT_STR, False),
        "attachments": (_optional(_list(_ATTACHMENT)), False),
    },
    "chat_response": {
        "message": (_OPT_STR, False),
        "reasoning": (_OPT_STR, False),
        "data": (_anything, False),
    },
    "tool_call_request": {"id": (_STR, True), "name": (_STR, True), "arguments": (_DICT, False)},
    "tool_call_response": {
        "id": (_STR, True),
        "content": (_STR, True),
        "is_error": (_BOOL, False),
    },
    "inquiry_request": {"id": (_STR, True), "source": (_DICT, True), "question": (_DICT, True)},
    "inquiry_response": {"id": (_STR, True), "answer": (_anything, False)},
    "config_delta": {"delta": (_DICT, True)},
    "compaction": {
        "from_turn": (_count, True),
        "to_turn": (_count, True),
        "summary": (_optional(_SUMMARY), False),
        "reasoning": (_optional(_one_of("strip")), False),
        "tool_calls": (_optional(_TOOL_POLICY), False),
    },
    "compaction_reset": {"withdraw": (_optional(_list(_INT)), False)},
    "conversation_start": {
        "conversation_id": (_STR, True),
        "forked_from": (_OPT_DICT, False),
        "review": (_OPT_DICT, False),
        "imported": (_OPT_DICT, False),
    },
}
_FIELDS = {kind: {**_COMMON, **fields} for kind, fields in SHAPES.items()}
assert set(SHAPES) == KNOWN_TYPES, "every kind jp knows has its shape"
_ONE_OF = ("message", "reasoning", "data")  # a chat_response holds exactly one


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
    stamp = event.get("timestamp")
    if not isinstance(stamp, str):
        raise InvalidEvent(where, f"{kind} event has no string `timestamp`")
    fields = _FIELDS.get(kind)
    problem = None if fields is None else _fields_problem(event, fields)
    if problem is None and kind == "chat_response" and sum(k in event for k in _ONE_OF) != 1:
        problem = "", "a chat_response holds exactly one of message, reasoning, data"
    if problem is not None:
        inside, why = problem
        raise InvalidEvent(where, f"{kind}: {inside}: {why}" if inside else f"{kind}: {why}")
    try:  # an unknown kind is kept verbatim, but its commit is dated by it
        parse_time(stamp)
    except ValueError as exc:
        raise InvalidEvent(where, f"{kind}: timestamp {stamp!r} is not a date: {exc}") from None
    return fields is None
