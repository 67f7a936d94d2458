"""Codex rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) as jp events.

Pure: ``{timestamp, type, payload}`` records in, one group of events per record
out (``sessionmap``).

- ``response_item`` messages: the user's are requests (the context Codex adds,
  such as ``<environment_context>`` or AGENTS.md, is kept as a record), the
  assistant's are answers; ``developer`` messages are kept records;
- the same text as an ``event_msg`` (``user_message``, ``agent_message``,
  ``agent_reasoning``) and as a ``response_item`` is one event: whichever comes
  first, the other is a kept record;
- ``reasoning``: its summary text is reasoning; ``encrypted_content`` stays
  opaque, inside the kept record;
- ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` and their
  outputs are tool call requests and responses; a ``web_search_call`` is a
  call with its result in one;
- images (``input_image`` items with a ``data:`` URL, in a prompt or in a tool's
  output, and a ``user_message``'s ``images``) are sent to the model as images,
  never as base64 text (``sessionmap``);
- ``turn_context`` names the model of the answers after it (``metadata.model``);
- ``compacted`` is a jp compaction over the turns before it, with its summary;
- anything else is a kept record.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gitstore import Event
from porcelain.jpformat.sessionmap import (
    MAX_NAME,
    Builder,
    arguments_of,
    images_left_out,
    images_of,
    message_text,
    text_of,
)

TOOL = "codex"
_CONTEXT = re.compile(
    r"^\s*(<environment_context|<user_instructions|<permissions|<INSTRUCTIONS|<user_shell_command"
    r"|<turn_aborted|# AGENTS\.md|<skill)"
)
_DATA_URL = re.compile(r"data:([A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+);base64,([A-Za-z0-9+/=]*)")
_TEXT_ITEMS = ("input_text", "output_text", "text")


@dataclass(frozen=True)
class Mapped:
    groups: list[list[Event]]
    session: str | None  # ``session_meta.payload.id``
    agent: str | None = None


@dataclass
class _State:
    model: str | None = None
    # texts stored from one kind of record, waiting for their twin from the other
    waiting: dict[str, Counter[tuple[str, str]]] = field(
        default_factory=lambda: {"event": Counter(), "item": Counter()}
    )
    searches: int = 0


def session_of(records: list[dict[str, Any]]) -> str | None:
    for record in records:
        payload = record.get("payload")
        if record.get("type") == "session_meta" and isinstance(payload, dict):
            found = payload.get("id")
            if isinstance(found, str) and found:
                return found[:200]
    return None


def map_records(records: list[dict[str, Any]]) -> Mapped:
    builder = Builder()
    state = _State()
    groups = []
    for record in records:
        builder.begin(record)
        payload = record.get("payload")
        if isinstance(payload, dict):
            _map(builder, state, str(record.get("type")), payload)
        groups.append(builder.finish(record))
    return Mapped(groups, session_of(records))


def _map(builder: Builder, state: _State, kind: str, payload: dict[str, Any]) -> None:
    if kind == "response_item":
        _item(builder, state, payload)
    elif kind == "event_msg":
        _event(builder, state, payload)
    elif kind == "turn_context":
        model = payload.get("model")
        state.model = model[:MAX_NAME] if isinstance(model, str) and model else state.model
    elif kind == "compacted":
        message = payload.get("message")
        builder.compaction(message if isinstance(message, str) else "")


def _once(
    builder: Builder, state: _State, source: str, role: str, text: str, images: Any = None
) -> None:
    """``text`` said by ``role``, stored unless its twin from the other source was
    (``images``: a prompt's, as ``blocks`` makes them)."""
    other = "item" if source == "event" else "event"
    key = (role, text.strip())
    if state.waiting[other][key]:
        state.waiting[other][key] -= 1
        return
    state.waiting[source][key] += 1
    if role == "user":
        left = images_left_out(images)
        builder.request(f"{text}\n\n{left}" if text and left else text or left, images_of(images))
    elif role == "assistant":
        builder.answer(text, {"model": state.model} if state.model else None)
    else:
        builder.reasoning(text)


def _item(builder: Builder, state: _State, payload: dict[str, Any]) -> None:
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        text = message_text(payload.get("content"))
        images = _images(payload.get("content")) if role == "user" else []
        if (
            role in ("user", "assistant")
            and (text.strip() or images_of(images))
            and not (role == "user" and _CONTEXT.match(text))
        ):
            _once(builder, state, "item", str(role), text, images)
    elif kind == "reasoning":
        text = message_text(payload.get("summary"))
        if text.strip():
            _once(builder, state, "item", "reasoning", text)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        _call(builder, kind, payload)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call = payload.get("call_id")
        if isinstance(call, str) and call in builder.open_calls:
            _result(builder, call, payload.get("output"))
    elif kind == "web_search_call":
        state.searches += 1
        call = (
            payload.get("id")
            if isinstance(payload.get("id"), str)
            else f"web_search_{state.searches}"
        )
        action = payload.get("action")
        if builder.call(str(call), "web_search", arguments_of(action)):
            status = payload.get("status")
            builder.result(str(call), json.dumps({"status": status}), status == "failed")


def _call(builder: Builder, kind: Any, payload: dict[str, Any]) -> None:
    call = payload.get("call_id") or payload.get("id")
    if not isinstance(call, str):
        return
    name = payload.get("name") if isinstance(payload.get("name"), str) else "local_shell"
    if kind == "function_call":
        raw = payload.get("arguments")
        try:
            arguments = arguments_of(json.loads(raw) if isinstance(raw, str) else raw)
        except ValueError:
            arguments = arguments_of(raw)
    elif kind == "custom_tool_call":
        arguments = arguments_of(payload.get("input"))
    else:
        arguments = arguments_of(payload.get("action"))
    builder.call(call, str(name), arguments)


def _result(builder: Builder, call: str, output: Any) -> None:
    """A tool's output: its text, its images as images (within the turn's budget; the
    ones left out named in the text), and whether it says it failed."""
    failed = isinstance(output, dict) and output.get("success") is False
    body = blocks(output.get("content", output) if isinstance(output, dict) else output)
    images, left = builder.result_images(body)
    text = text_of(body)
    builder.result(call, f"{text}\n{left}" if text and left else text or left, failed, images)


def blocks(items: Any) -> Any:
    """Codex's content items (``input_text``, ``output_text``, ``input_image``) as the
    blocks ``sessionmap`` reads (text, and a base64 image for a ``data:`` URL; an image
    by address or file id is named as one that could not be read); anything else as
    it is."""
    if not isinstance(items, list):
        return items
    out: list[dict[str, Any]] = []
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in _TEXT_ITEMS and isinstance(item.get("text"), str):
            out.append({"type": "text", "text": item["text"]})
        elif kind == "input_image":
            out.append(image_block(item.get("image_url")))
        else:
            return items
    return out


def image_block(url: Any) -> dict[str, Any]:
    """An image given by URL as a base64 image block (a ``data:`` URL; any other is
    named in the text as an image that could not be read)."""
    found = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
    if found is None:
        return {"type": "image", "source": {"type": "url"}}
    return {"type": "image", "source": {"type": "base64", "media_type": found[1], "data": found[2]}}


def _images(content: Any) -> list[dict[str, Any]]:
    """The image blocks of a message's content items (whatever other items it holds)."""
    if not isinstance(content, list):
        return []
    return [
        image_block(item.get("image_url"))
        for item in content
        if isinstance(item, dict) and item.get("type") == "input_image"
    ]


def _event(builder: Builder, state: _State, payload: dict[str, Any]) -> None:
    kind = payload.get("type")
    roles = {"user_message": "user", "agent_message": "assistant", "agent_reasoning": "reasoning"}
    text = payload.get("message") if kind != "agent_reasoning" else payload.get("text")
    if kind == "user_message" and isinstance(text, str):
        urls = payload.get("images")
        images = [image_block(u) for u in urls] if isinstance(urls, list) else []
        if (text.strip() or images_of(images)) and not _CONTEXT.match(text):
            _once(builder, state, "event", "user", text, images)
    elif kind in roles and isinstance(text, str) and text.strip():
        _once(builder, state, "event", roles[str(kind)], text)
