"""The Messages API's wire format, for the loopback fake in tests/support/fake_messages.py:
the checks the real API makes before it answers (``validate``), and the messages and
server-sent events it answers with (``message``, ``sse_events``, ``sse``).

A test that scripts what the real API never sends builds it from these:

    events = sse_events(message([{"type": "text", "text": "Half an answer"}]))
    fake.reply_events([*events[:4], ("error", error_body("overloaded_error", "Overloaded"))])
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from tests.support.loopback import Check
from tests.support.loopback import predicate as loopback_predicate

Body = dict[str, Any]
Predicate = Callable[[Body], bool]
When = Predicate | Mapping[str, Any] | None
Event = tuple[str, Body]



class Refused(Exception):
    """A request the real API would refuse: 400 ``invalid_request_error``."""


def user_text(message: Mapping[str, Any]) -> str:
    """All text of one message: string content, text blocks, tool_result contents."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            inner = block.get("content", "")
            parts.append(inner if isinstance(inner, str) else user_text({"content": inner}))
    return "\n".join(parts)


def last_user_text(body: Body) -> str:
    users = [
        m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"
    ]
    return user_text(users[-1]) if users else ""


def tool_names(body: Body) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


_CHECKS: dict[str, Check] = {
    "last_user_contains": lambda body, v: v in last_user_text(body),
    "tools_include": lambda body, v: v in tool_names(body),
    "no_tools": lambda body, v: not v or not tool_names(body),
}


def predicate(when: When) -> Predicate:
    """A script's `when`: a function of the request body, or keys (see FakeMessages)."""
    return loopback_predicate(when, _CHECKS)


# -- validation, as the real API does it ------------------------------------------


def _blocks(message: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise Refused(f"{where}.content: Input should be a valid string or list of blocks")
    return list(content)


def validate(body: Any, *, counting: bool = False) -> None:
    """Raise ``Refused`` with the API's kind of message for a request it would refuse."""
    if not isinstance(body, dict):
        raise Refused("request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Refused("model: Field required")
    if not counting and (not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1):
        raise Refused("max_tokens: Field required (an integer >= 1)")
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or tool.get("type", "custom") != "custom":
            continue  # server tools (web search, ...) carry their own shape
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise Refused(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Refused("messages: at least one message is required")
    if not isinstance(messages[0], dict) or messages[0].get("role") != "user":
        raise Refused("messages: the first message must use the `user` role")
    uses_tools = False
    pending: list[str] = []  # tool_use ids of the previous assistant message
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            raise Refused(f"{where}.role: Input should be 'user' or 'assistant'")
        blocks = _blocks(message, where)
        final = i == len(messages) - 1
        if not blocks and not (final and role == "assistant"):
            raise Refused(
                f"{where}: all messages must have non-empty content "
                "except for the optional final assistant message"
            )
        answered: list[str] = []
        for j, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text" and not str(block.get("text", "")):
                raise Refused(f"{where}.content.{j}: text content blocks must be non-empty")
            if kind == "thinking" and not block.get("signature"):
                raise Refused(f"{where}.content.{j}.thinking.signature: Field required")
            if kind in ("tool_use", "tool_result"):
                uses_tools = True
            if kind == "tool_result":
                if role != "user" or block.get("tool_use_id") not in pending:
                    raise Refused(
                        f"{where}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have "
                        "a corresponding `tool_use` block in the previous message."
                    )
                answered.append(str(block["tool_use_id"]))
        missing = [t for t in pending if t not in answered]
        if missing:
            raise Refused(
                f"{where}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message."
            )
        pending = (
            [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
            if role == "assistant"
            else []
        )
        last = blocks[-1] if blocks else {}
        if final and role == "assistant" and last.get("type") == "text":
            text = str(last.get("text", ""))
            if text.rstrip() != text:
                raise Refused("final assistant content cannot end with trailing whitespace")
    if uses_tools and not body.get("tools"):
        raise Refused(
            "Requests which include `tool_use` or `tool_result` blocks must define tools."
        )


# -- what the API answers with ------------------------------------------------------


def chunks(text: str, parts: int = 3) -> list[str]:
    """``text`` in ``parts`` pieces, as the API streams it."""
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def estimate(value: Any) -> int:
    """A token count for ``value`` (a quarter of its JSON)."""
    return max(1, len(json.dumps(value)) // 4)


def message(
    blocks: Sequence[Mapping[str, Any]],
    *,
    model: Any = "claude-test",
    id: str = "msg_01test",
    stop_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    prompt: Any = None,
) -> Body:
    """A complete assistant message holding ``blocks`` (tool_use blocks need an ``id``);
    ``prompt`` (the request's messages) sizes the input tokens unless ``usage`` says."""
    content = [dict(b) for b in blocks]
    for block in content:
        if block["type"] == "tool_use":
            block.setdefault("input", {})
    has_tool = any(b["type"] == "tool_use" for b in content)
    counts = {
        "input_tokens": estimate(prompt),
        "output_tokens": estimate(content),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if has_tool else "end_turn"),
        "stop_sequence": None,
        "usage": counts | dict(usage or {}),
    }


def error_body(kind: str, text: str) -> Body:
    """The body of an API error (an HTTP error's, or an ``error`` event's data)."""
    return {"type": "error", "error": {"type": kind, "message": text}}


def sse(event: str, data: Mapping[str, Any]) -> bytes:
    """One server-sent event as bytes on the wire."""
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def sse_events(message: Body) -> list[Event]:
    """The server-sent events that stream ``message``, in the API's order."""
    return list(_sse_events(message))


def _sse_events(message: Body) -> Iterator[Event]:
    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "text":
            opening: Body = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in chunks(block["text"])]
        elif kind == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": c} for c in chunks(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            pieces = ["", *chunks(json.dumps(block["input"]), 4)]
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}
