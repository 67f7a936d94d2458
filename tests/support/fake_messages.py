"""A loopback fake of the Anthropic Messages API, for driving the real SDK in tests.

    with FakeMessages() as fake:
        fake.reply_text("Hello!", when={"last_user_contains": "hi"})
        client = anthropic.Anthropic(base_url=fake.url, api_key="test-key")

Each scripted reply answers one request (``times`` for more), the first
matching one in the order scripted.  Requests are refused with 400 the way the
real API refuses them before any script is consulted; a request no script
matches gets a 500 with ``x-should-retry: false`` that says which request it was.
Streaming answers use the Messages API's server-sent events, chunked.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Body = dict[str, Any]
Predicate = Callable[[Body], bool]
When = Predicate | Mapping[str, Any] | None

_WHEN_KEYS = frozenset({"last_user_contains", "tools_include", "no_tools"})


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


def _predicate(when: When) -> Predicate:
    if when is None:
        return lambda body: True
    if callable(when):
        return when
    unknown = set(when) - _WHEN_KEYS
    if unknown:
        raise ValueError(f"unknown `when` keys: {sorted(unknown)} (known: {sorted(_WHEN_KEYS)})")
    keys = dict(when)

    def match(body: Body) -> bool:
        if "last_user_contains" in keys and keys["last_user_contains"] not in last_user_text(body):
            return False
        if "tools_include" in keys and keys["tools_include"] not in tool_names(body):
            return False
        return not (keys.get("no_tools") and tool_names(body))

    return match


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


# -- the server -------------------------------------------------------------------


@dataclass
class _Script:
    match: Predicate
    kind: str  # "blocks" | "error" | "drop"
    blocks: list[dict[str, Any]]
    stop_reason: str | None = None
    status: int = 200
    error: tuple[str, str] = ("", "")
    retry_after_ms: int | None = None
    times: int | None = 1


def _chunks(text: str, parts: int = 3) -> list[str]:
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _estimate(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


class FakeMessages:
    """``ThreadingHTTPServer`` on 127.0.0.1 in a daemon thread; use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[Body] = []
        self.count_requests: list[Body] = []
        self.headers: list[dict[str, str]] = []
        self._scripts: list[_Script] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeMessages:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def env(self) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": "test-key"}

    # -- scripting ----------------------------------------------------------------

    def _add(self, script: _Script) -> None:
        with self._lock:
            self._scripts.append(script)

    def reply_text(
        self, text: str, when: When = None, *, stop_reason: str | None = None, times: int | None = 1
    ) -> None:
        self.reply_blocks(
            [{"type": "text", "text": text}], when, stop_reason=stop_reason, times=times
        )

    def reply_blocks(
        self,
        blocks: list[dict[str, Any]],
        when: When = None,
        *,
        stop_reason: str | None = None,
        times: int | None = 1,
    ) -> None:
        """Blocks: ``{"type": "text", "text"}``, ``{"type": "thinking", "thinking",
        "signature"}``, ``{"type": "tool_use", "name", "input", "id"?}``."""
        for block in blocks:
            if block.get("type") not in ("text", "thinking", "tool_use"):
                raise ValueError(f"cannot script a {block.get('type')!r} block")
        self._add(
            _Script(_predicate(when), "blocks", [dict(b) for b in blocks], stop_reason, times=times)
        )

    def reply_error(
        self,
        status: int,
        type: str,
        message: str,
        when: When = None,
        *,
        retry_after_ms: int | None = None,
        times: int | None = 1,
    ) -> None:
        self._add(
            _Script(
                _predicate(when), "error", [], None, status, (type, message), retry_after_ms, times
            )
        )

    def reply_drop_mid_stream(self, text: str, when: When = None) -> None:
        """Stream part of ``text``, then close the connection without finishing."""
        self._add(_Script(_predicate(when), "drop", [{"type": "text", "text": text}]))

    def pending(self) -> int:
        """Scripted replies not used yet (``times=None`` ones count once)."""
        with self._lock:
            return len(self._scripts)

    # -- answering ----------------------------------------------------------------

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}{self._ids:024d}"

    def _take(self, body: Body) -> _Script | None:
        with self._lock:
            for i, script in enumerate(self._scripts):
                if script.match(body):
                    if script.times is not None:
                        script.times -= 1
                        if script.times <= 0:
                            del self._scripts[i]
                    return script
        return None

    def _message(self, body: Body, script: _Script) -> Body:
        content: list[dict[str, Any]] = []
        for block in script.blocks:
            block = dict(block)
            if block["type"] == "tool_use":
                block.setdefault("id", self._next_id("toolu_01"))
                block.setdefault("input", {})
            content.append(block)
        has_tool = any(b["type"] == "tool_use" for b in content)
        return {
            "id": self._next_id("msg_01"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": script.stop_reason or ("tool_use" if has_tool else "end_turn"),
            "stop_sequence": None,
            "usage": {
                "input_tokens": _estimate(body.get("messages")),
                "output_tokens": _estimate(content),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }


def sse_events(message: Body) -> Iterator[tuple[str, Body]]:
    """The server-sent events that stream ``message``, in the API's order."""
    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "text":
            opening: Body = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in _chunks(block["text"])]
        elif kind == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": c} for c in _chunks(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            pieces = ["", *_chunks(json.dumps(block["input"]), 4)]
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


def _make_handler(fake: FakeMessages) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _json(
            self, status: int, payload: Body, headers: Mapping[str, str] = {}, cut: bool = False
        ) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", fake._next_id("req_01"))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            if cut:  # half the body, then hang up
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self._hang_up()
                return
            self.wfile.write(data)

        def _error(self, status: int, kind: str, message: str, **headers: str) -> None:
            body = {"type": "error", "error": {"type": kind, "message": message}}
            self._json(status, body, {k.replace("_", "-"): v for k, v in headers.items()})

        def _hang_up(self) -> None:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _stream(self, message: Body, drop: bool) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", fake._next_id("req_01"))
            self.end_headers()
            for n, (event, data) in enumerate(sse_events(message)):
                if drop and n == 4:  # after message_start, ping, block start, one delta
                    return self._hang_up()
                self._chunk(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self._chunk(b"")

        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            path = self.path.split("?", 1)[0].rstrip("/")
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            if path not in ("/v1/messages", "/v1/messages/count_tokens"):
                return self._error(404, "not_found_error", f"Not found: {path}")
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                return self._error(
                    400, "invalid_request_error", "the request body is not valid JSON"
                )
            counting = path.endswith("count_tokens")
            with fake._lock:
                if counting:
                    fake.count_requests.append(body)
                else:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                number = len(fake.requests)
            if not (self.headers.get("x-api-key") or self.headers.get("authorization")):
                return self._error(401, "authentication_error", "x-api-key header is required")
            try:
                validate(body, counting=counting)
            except Refused as exc:
                return self._error(400, "invalid_request_error", str(exc))
            if counting:
                return self._json(200, {"input_tokens": _estimate(body.get("messages"))})
            script = fake._take(body)
            if script is None:
                text = last_user_text(body)[:80]
                return self._error(
                    500,
                    "api_error",
                    f"fake_messages: no scripted reply matches request #{number} "
                    f"(last user message {text!r}, tools {tool_names(body)})",
                    x_should_retry="false",
                )
            if script.kind == "error":
                extra = (
                    {}
                    if script.retry_after_ms is None
                    else {"retry_after_ms": str(script.retry_after_ms)}
                )
                return self._error(script.status, *script.error, **extra)
            message = fake._message(body, script)
            if body.get("stream"):
                return self._stream(message, drop=script.kind == "drop")
            if script.kind == "drop":
                return self._json(200, message, cut=True)
            return self._json(200, message)

    return Handler
