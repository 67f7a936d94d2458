"""jp events → the ``messages`` of an Anthropic Messages API request.

Pure data work, no SDK import.  The rules the API enforces, and what is done
about each:

- roles alternate and the first message is the user's: consecutive content of
  one role is merged into one message; a history that opens with assistant
  content gets a user text ``(conversation continues)`` in front;
- the last message is the user's (a query is answered, not continued): an
  assistant tail gets a user text ``(continue)`` after it;
- every ``tool_use`` is answered by a ``tool_result`` in the very next user
  message, results first in that message: a call with no result gets a
  synthetic error result ``Tool call was interrupted.``; a result whose call is
  not pending is dropped;
- a tool result's images (an imported session's) go inside its ``tool_result``
  as image blocks, after its text;
- empty (or blank) text blocks are never sent;
- ``thinking`` blocks need their signature (``redacted_thinking`` its data), and
  are only sent when the request enables thinking; otherwise reasoning is left
  out;
- a request that declares no tools may not hold ``tool_use``/``tool_result``
  blocks: with ``tools=False`` calls and results are rendered as text.

Prompt caching marks the system prompt and the last block of the
second-to-last user message: the long shared prefix a review resends each turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from gitstore import Event, Kind
from porcelain.domain.attachments import media_in, request_text, result_media
from porcelain.domain.media import PDF

Block = dict[str, Any]
Message = dict[str, Any]

INTERRUPTED = "Tool call was interrupted."
OPENING = "(conversation continues)"
CONTINUE = "(continue)"
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}

_BAD_ID = re.compile(r"[^a-zA-Z0-9_-]")


def tool_use_id(raw: str) -> str:
    """An id the API accepts (``^[a-zA-Z0-9_-]+$``), stable for the same input."""
    return _BAD_ID.sub("_", raw) or "toolu_unnamed"


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def media_block(media_type: str, data: str) -> Block:
    """An attached image or PDF as the Messages API takes it (base64 source)."""
    kind = "document" if media_type == PDF else "image"
    return {"type": kind, "source": {"type": "base64", "media_type": media_type, "data": data}}


class _Builder:
    """Collects blocks into alternating messages, keeping tool calls paired."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[Block]]] = []
        self.pending: dict[str, None] = {}  # raw ids of unanswered tool_use, in order

    def _last_role(self) -> str | None:
        return self.messages[-1][0] if self.messages else None

    def _push(self, role: str, block: Block) -> None:
        if self._last_role() == role:
            self.messages[-1][1].append(block)
        else:
            self.messages.append((role, [block]))

    def _settle_pending(self) -> None:
        """Answer every unanswered call, in the user message after the calls."""
        for raw in self.pending:
            block = {
                "type": "tool_result",
                "tool_use_id": tool_use_id(raw),
                "content": INTERRUPTED,
                "is_error": True,
            }
            self._push("user", block)
        self.pending.clear()

    def assistant(self, block: Block) -> None:
        if self.pending and self._last_role() == "user":
            self._settle_pending()
        self._push("assistant", block)

    def user(self, block: Block) -> None:
        self._push("user", block)

    def call(self, raw_id: str, name: str, arguments: dict[str, Any]) -> None:
        block = {"type": "tool_use", "id": tool_use_id(raw_id), "name": name, "input": arguments}
        self.assistant(block)
        self.pending[raw_id] = None

    def result(
        self, raw_id: str, content: str, is_error: bool, media: Sequence[tuple[str, str]] = ()
    ) -> None:
        if raw_id not in self.pending:
            return  # its call is not in the last assistant message: the API would refuse it
        del self.pending[raw_id]
        block: Block = {"type": "tool_result", "tool_use_id": tool_use_id(raw_id)}
        if media:  # a result's images go inside it, after its text
            texts = [text_block(content)] if content.strip() else []
            block["content"] = texts + [media_block(kind, data) for kind, data in media]
        elif content:
            block["content"] = content
        if is_error:
            block["is_error"] = True
        self.user(block)

    def finish(self) -> list[Message]:
        self._settle_pending()
        if not self.messages or self.messages[0][0] != "user":
            self.messages.insert(0, ("user", [text_block(OPENING)]))
        if self.messages[-1][0] != "user":
            self.messages.append(("user", [text_block(CONTINUE)]))
        out: list[Message] = []
        for role, blocks in self.messages:
            if role == "user":  # tool results must open the message
                blocks = [b for b in blocks if b["type"] == "tool_result"] + [
                    b for b in blocks if b["type"] != "tool_result"
                ]
            out.append({"role": role, "content": blocks})
        return out


def _arguments(event: Event) -> dict[str, Any]:
    args = event.get("arguments")
    return dict(args) if isinstance(args, dict) else {}


def _call_as_text(event: Event) -> str:
    args = json.dumps(_arguments(event), ensure_ascii=False, sort_keys=True)
    return f"[tool call {event.get('name', '')}({args})]"


def _result_as_text(name: str, event: Event) -> str:
    label = "tool error" if event.get("is_error") else "tool result"
    return f"[{label} from {name}]\n{event.get('content') or ''}"


def to_messages(
    events: Iterable[Event],
    *,
    thinking: bool = False,
    tools: bool = True,
    cache: bool = False,
) -> list[Message]:
    """Build the request's ``messages`` from provider-visible events, in order.

    ``thinking``: the request enables extended thinking (signed reasoning is
    sent back as ``thinking`` blocks).  ``tools``: the request declares tools
    (else calls and results become text).  ``cache``: mark the second-to-last
    user message for prompt caching.  Other event kinds are ignored.
    """
    builder = _Builder()
    call_names: dict[str, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == Kind.CHAT_REQUEST:
            for media_type, data in media_in(event):
                builder.user(media_block(media_type, data))
            asked = request_text(event)
            if asked.strip():
                builder.user(text_block(asked))
        elif kind == Kind.CHAT_RESPONSE:
            _add_response(builder, event, thinking)
        elif kind == Kind.TOOL_CALL_REQUEST:
            raw_id, name = str(event.get("id", "")), str(event.get("name", ""))
            if tools:
                builder.call(raw_id, name, _arguments(event))
            else:
                call_names[raw_id] = name
                builder.assistant(text_block(_call_as_text(event)))
        elif kind == Kind.TOOL_CALL_RESPONSE:
            raw_id = str(event.get("id", ""))
            if tools:
                content = event.get("content")
                text = content if isinstance(content, str) else json.dumps(content)
                builder.result(raw_id, text, bool(event.get("is_error")), result_media(event))
            elif raw_id in call_names:
                builder.user(text_block(_result_as_text(call_names.pop(raw_id), event)))
    messages = builder.finish()
    if cache:
        mark_cache(messages)
    return messages


def _add_response(builder: _Builder, event: Event, thinking: bool) -> None:
    if "reasoning" in event:
        metadata = event.get("metadata") or {}
        signature = metadata.get("anthropic_thinking_signature")
        redacted = metadata.get("anthropic_redacted_thinking")
        text = event.get("reasoning")
        if not thinking:
            return
        if signature and isinstance(text, str) and text:
            builder.assistant({"type": "thinking", "thinking": text, "signature": signature})
        elif redacted:
            builder.assistant({"type": "redacted_thinking", "data": redacted})
    elif "message" in event:
        text = event.get("message")
        if isinstance(text, str) and text.strip():
            builder.assistant(text_block(text))
    elif "data" in event:
        builder.assistant(text_block(json.dumps(event["data"], ensure_ascii=False)))


def mark_cache(messages: list[Message]) -> None:
    """Put a cache breakpoint on the last block of the second-to-last user message."""
    users = [m for m in messages if m["role"] == "user"]
    if len(users) < 2:
        return
    blocks = users[-2]["content"]
    blocks[-1] = {**blocks[-1], "cache_control": dict(EPHEMERAL)}


def system_blocks(system: str, *, cache: bool) -> list[Block]:
    """The ``system`` parameter: one text block, cached when asked; none if blank."""
    if not system.strip():
        return []
    block = text_block(system)
    if cache:
        block["cache_control"] = dict(EPHEMERAL)
    return [block]
