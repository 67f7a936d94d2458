"""jp events → the ``messages`` of a Chat Completions request.

Pure data work, no SDK import.  The rules the API (and the chat templates of
OpenAI-compatible servers) enforce, and what is done about each:

- a ``system`` message first (when there are instructions), then user and
  assistant messages alternating: consecutive texts of one role are joined
  into one message; a history that opens with the assistant gets a user text
  ``(conversation continues)`` in front, and one that ends with the assistant
  (no pending call) gets a user text ``(continue)`` after it;
- tool calls are ``tool_calls`` entries of the assistant message, each
  answered by exactly one ``tool`` message with its id, right after that
  message and before anything else: a call with no result gets a synthetic
  error result ``Tool call was interrupted.``, a result whose call is not
  pending is dropped;
- ids are at most 40 characters of ``[a-zA-Z0-9_-]`` and names match
  ``^[a-zA-Z0-9_-]{1,64}$``: others are mapped to stable ones;
- a request that declares no tools holds no ``tool_calls`` and no ``tool``
  messages (``tools=False``): calls and results are rendered as text;
- a request's attachments are framed before its text as every provider
  reads them (``porcelain/domain/attachments.py``); its images also go as
  ``image_url`` parts with a data URL (the content becomes a list of parts);
- a tool result's images (an imported session's) follow the tool messages as a
  user message of ``image_url`` parts (a ``tool`` message holds text only); the
  result's text names each one;
- reasoning goes back only to the provider that wrote it, in the field it used
  (``reasoning_content``, ``reasoning``); other reasoning is left out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from gitstore import Event, Kind
from porcelain.domain.attachments import media_in, request_text, result_media
from porcelain.domain.media import IMAGE_TYPES
from porcelain.models.messages import CONTINUE, INTERRUPTED, OPENING

Message = dict[str, Any]

REASONING_META = "openai_reasoning"  # metadata: {"provider": NAME, "field": "reasoning_content"}
MAX_ID = 40
_ID_OK = re.compile(r"[a-zA-Z0-9_-]{1,40}")
_NAME_BAD = re.compile(r"[^a-zA-Z0-9_-]")
# one encoder for every call's arguments (json.dumps with options builds one per call)
_encode = json.JSONEncoder(ensure_ascii=False).encode


def call_id(raw: str) -> str:
    """An id the API accepts, stable for the same input."""
    if _ID_OK.fullmatch(raw):
        return raw
    return "call_" + hashlib.sha256(raw.encode()).hexdigest()[: MAX_ID - 5]


def tool_name(raw: str) -> str:
    name = _NAME_BAD.sub("_", raw)[:64]
    return name or "unnamed_tool"


RESULT_IMAGES = "(the images the tool results above returned)"


def _arguments(event: Event) -> dict[str, Any]:
    args = event.get("arguments")
    return dict(args) if isinstance(args, dict) else {}


class _Builder:
    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.messages: list[Message] = []
        self.pending: dict[str, None] = {}  # raw ids of the last assistant message's calls
        self.images: list[dict[str, Any]] = []  # tool results' images, sent after the results

    def _last(self) -> Message | None:
        return self.messages[-1] if self.messages else None

    def _settle(self) -> None:
        for raw in self.pending:
            self.messages.append(
                {"role": "tool", "tool_call_id": call_id(raw), "content": INTERRUPTED}
            )
        self.pending.clear()
        if self.images:  # a tool message holds text only: its images follow as the user's
            text = {"type": "text", "text": RESULT_IMAGES}
            self.messages.append({"role": "user", "content": [text, *self.images]})
            self.images = []

    def user(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        """Add user text (and image parts, which make the content a list of parts)."""
        self._settle()
        last = self._last()
        if last is None or last["role"] != "user":
            last = {"role": "user", "content": ""}
            self.messages.append(last)
        content = last["content"]
        if images or isinstance(content, list):
            parts = content if isinstance(content, list) else _parts(content)
            last["content"] = [*parts, *(images or []), {"type": "text", "text": text}]
        else:
            last["content"] = f"{content}\n\n{text}" if content else text

    def _assistant(self, calling: bool = False) -> Message:
        """The assistant message to add to; ``calling``: a call joins the calls pending."""
        last = self._last()
        if last is not None and last["role"] == "assistant" and (calling or not self.pending):
            return last
        self._settle()
        message: Message = {"role": "assistant", "content": None}
        self.messages.append(message)
        return message

    def text(self, text: str) -> None:
        last = self._last()
        if last is not None and last["role"] == "assistant" and last.get("tool_calls"):
            self._settle()  # text after the calls: a new assistant message, after the results
        message = self._assistant()
        message["content"] = text if not message["content"] else message["content"] + "\n\n" + text

    def reasoning(self, text: str, field: str) -> None:
        message = self._assistant()
        if message.get("tool_calls") or message["content"]:
            message = {"role": "assistant", "content": None}  # reasoning opens a message
            self._settle()
            self.messages.append(message)
        message[field] = message.get(field, "") + text

    def call(self, raw: str, name: str, arguments: dict[str, Any]) -> None:
        message = self._assistant(calling=True)
        entry = {
            "id": call_id(raw),
            "type": "function",
            "function": {
                "name": tool_name(name),
                "arguments": _encode(arguments),
            },
        }
        message.setdefault("tool_calls", []).append(entry)
        self.pending[raw] = None

    def result(
        self, raw: str, content: str, is_error: bool, images: Sequence[dict[str, Any]] = ()
    ) -> None:
        if raw not in self.pending:
            return  # its call is not in the last assistant message: the API would refuse it
        del self.pending[raw]
        text = content if content.strip() else ("(error, no output)" if is_error else "(no output)")
        self.messages.append({"role": "tool", "tool_call_id": call_id(raw), "content": text})
        self.images.extend(images)

    def finish(self, system: str) -> list[Message]:
        self._settle()
        # an assistant message needs content or calls (reasoning alone is not sent)
        body = [m for m in self.messages if not _empty_assistant(m)]
        if not body or body[0]["role"] != "user":
            body.insert(0, {"role": "user", "content": OPENING})
        if body[-1]["role"] == "assistant":
            body.append({"role": "user", "content": CONTINUE})
        head = [{"role": "system", "content": system}] if system.strip() else []
        return head + body


def _empty_assistant(message: Message) -> bool:
    return (
        message["role"] == "assistant"
        and not message.get("tool_calls")
        and not message.get("content")
    )


def _parts(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}] if text else []


def _image_parts(event: Event) -> list[dict[str, Any]]:
    """The attached images of a request as ``image_url`` parts (data URLs); a PDF,
    which Chat Completions does not take here, is read as its text frame only."""
    return [
        _image_url(media_type, data)
        for media_type, data in media_in(event)
        if media_type in IMAGE_TYPES
    ]


def _image_url(media_type: str, data: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{data}"}}


def _text_of_result(event: Event) -> str:
    content = event.get("content")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def to_chat_messages(
    events: Iterable[Event], *, system: str = "", tools: bool = True, provider: str = "openai"
) -> list[Message]:
    """The request's ``messages`` from provider-visible events, in order.

    ``tools``: the request declares tools (else calls and results become text).
    ``provider``: the provider the request goes to (its own reasoning is sent back).
    """
    builder = _Builder(provider)
    names: dict[str, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == Kind.CHAT_REQUEST:
            asked = request_text(event)
            if asked.strip():
                builder.user(asked, _image_parts(event))
        elif kind == Kind.CHAT_RESPONSE:
            _response(builder, event, provider)
        elif kind == Kind.TOOL_CALL_REQUEST:
            raw, name = str(event.get("id", "")), str(event.get("name", ""))
            if tools:
                builder.call(raw, name, _arguments(event))
            else:
                names[raw] = name
                args = json.dumps(_arguments(event), ensure_ascii=False, sort_keys=True)
                builder.text(f"[tool call {name}({args})]")
        elif kind == Kind.TOOL_CALL_RESPONSE:
            raw = str(event.get("id", ""))
            if tools:
                images = [_image_url(kind, data) for kind, data in result_media(event)]
                builder.result(raw, _text_of_result(event), bool(event.get("is_error")), images)
            elif raw in names:
                label = "tool error" if event.get("is_error") else "tool result"
                builder.user(f"[{label} from {names.pop(raw)}]\n{_text_of_result(event)}")
    return builder.finish(system)


def _response(builder: _Builder, event: Event, provider: str) -> None:
    if "reasoning" in event:
        meta = (event.get("metadata") or {}).get(REASONING_META)
        text = event.get("reasoning")
        if isinstance(meta, dict) and meta.get("provider") == provider and isinstance(text, str):
            field = str(meta.get("field") or "reasoning_content")
            if field in ("reasoning_content", "reasoning") and text:
                builder.reasoning(text, field)
    elif "message" in event:
        text = event.get("message")
        if isinstance(text, str) and text.strip():
            builder.text(text)
    elif "data" in event:
        builder.text(json.dumps(event["data"], ensure_ascii=False))
