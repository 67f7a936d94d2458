"""A loopback fake of the Chat Completions API, for driving the real `openai` SDK.

    with FakeChat() as fake:
        fake.reply_text("Hello!", when={"last_user_contains": "hi"})
        client = openai.OpenAI(base_url=fake.url + "/v1", api_key="test-key")

Each scripted reply answers one request (``times`` for more), the first
matching one in the order scripted.  A request the real API refuses gets a 400
before any script is consulted: unknown top-level parameters, bad roles,
an assistant ``tool_calls`` entry not answered by exactly one ``tool`` message
before the next message (or a ``tool`` message with no pending call), ids over
40 characters, tool names outside ``^[a-zA-Z0-9_-]{1,64}$``, tool schemas not of
type object, ``stream_options`` without ``stream``.  A request no script
matches gets a 500 with ``x-should-retry: false`` naming it.  Answers stream
as the API streams them: ``chat.completion.chunk`` objects as server-sent
events, tool call arguments in five-character fragments, a usage chunk when
``stream_options.include_usage`` is set, then ``[DONE]``.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import Check, Loopback, predicate

Body = dict[str, Any]
When = Callable[[Body], bool] | Mapping[str, Any] | None

PATHS = ("/v1/chat/completions", "/chat/completions")
PARAMS = frozenset(
    ["model", "messages", "max_tokens", "max_completion_tokens", "stream", "stream_options", "tools", "tool_choice", "parallel_tool_calls", "temperature", "top_p", "stop", "seed", "user", "n"]
)
ROLES = ("system", "developer", "user", "assistant", "tool")
NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
MAX_ID = 40
PIECE = 5


class Refused(Exception):
    """What the API answers with 400 ``invalid_request_error``."""


def text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def last_user_text(body: Body) -> str:
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return text_of(users[-1]) if users else ""


def tool_names(body: Body) -> list[str]:
    return [str((t.get("function") or {}).get("name")) for t in body.get("tools") or []]


def _last_role(body: Body, role: Any) -> bool:
    return bool((body.get("messages") or [{}])[-1].get("role") == role)


_CHECKS: dict[str, Check] = {
    "last_user_contains": lambda body, v: v in last_user_text(body),
    "last_role": _last_role,
    "tools_include": lambda body, v: v in tool_names(body),
    "no_tools": lambda body, v: not v or not tool_names(body),
    "model": lambda body, v: body.get("model") == v,
}


def _predicate(when: When) -> Callable[[Body], bool]:
    return predicate(when, _CHECKS)


# -- validation, as the real API does it -------------------------------------------


def _check_tools(body: Body) -> None:
    tools = body.get("tools")
    if tools is None:
        for key in ("tool_choice", "parallel_tool_calls"):
            if key in body:
                raise Refused(f"'{key}' is only allowed when 'tools' are specified.")
        return
    if not isinstance(tools, list) or not tools:
        raise Refused("Invalid 'tools': expected a non-empty array.")
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            raise Refused(f"Invalid 'tools[{i}]': expected a function tool.")
        if not NAME.fullmatch(str(function.get("name", ""))):
            raise Refused(f"Invalid 'tools[{i}].function.name': string does not match pattern.")
        schema = function.get("parameters")
        if schema is not None and (not isinstance(schema, dict) or schema.get("type") != "object"):
            raise Refused(f"Invalid schema for function '{function['name']}': type must be object.")


def _check_calls(i: int, calls: Any, pending: list[str]) -> None:
    if not isinstance(calls, list) or not calls:
        raise Refused(f"Invalid 'messages[{i}].tool_calls': expected a non-empty array.")
    for k, call in enumerate(calls):
        at = f"messages[{i}].tool_calls[{k}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or call.get("type") != "function" or not isinstance(function, dict):
            raise Refused(f"Invalid '{at}': expected a function call.")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or len(call_id) > MAX_ID:
            raise Refused(f"Invalid '{at}.id': string too long or empty.")
        if not NAME.fullmatch(str(function.get("name", ""))):
            raise Refused(f"Invalid '{at}.function.name': string does not match pattern.")
        if not isinstance(function.get("arguments"), str):
            raise Refused(f"Invalid '{at}.function.arguments': expected a string.")
        if call_id in pending:
            raise Refused(f"Invalid 'messages[{i}].tool_calls': duplicate id {call_id!r}.")
        pending.append(call_id)


def validate(body: Any) -> None:
    """Raise ``Refused`` for a request the real API would refuse."""
    if not isinstance(body, dict):
        raise Refused("The request body must be a JSON object.")
    for key in body:
        if key not in PARAMS:
            raise Refused(f"Unrecognized request argument supplied: {key}")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Refused("you must provide a model parameter")
    if "stream_options" in body and not body.get("stream"):
        raise Refused("The 'stream_options' parameter is only allowed when 'stream' is enabled.")
    _check_tools(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Refused("Invalid 'messages': expected a non-empty array.")
    pending: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            raise Refused(f"Invalid value for 'messages[{i}].role': {role!r}.")
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                raise Refused(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            pending.remove(message["tool_call_id"])
            if not text_of(message):
                raise Refused(f"Invalid 'messages[{i}].content': a tool message needs content.")
            continue
        if pending:
            raise Refused(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(pending)}"
            )
        if role == "assistant" and message.get("tool_calls") is not None:
            _check_calls(i, message["tool_calls"], pending)
        elif not text_of(message):
            raise Refused(f"Invalid 'messages[{i}].content': expected a non-empty string.")
    if pending:
        raise Refused(f"tool_call_ids did not have response messages: {', '.join(pending)}")


# -- the server ---------------------------------------------------------------------


@dataclass
class _Script:
    match: Callable[[Body], bool]
    kind: str  # "answer" | "error" | "drop" | "stream_error"
    text: str = ""
    reasoning: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    finish: str | None = None
    status: int = 200
    error: tuple[str, str] = ("", "")
    retry_after_ms: int | None = None
    times: int | None = 1


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class FakeChat(Loopback):
    """The server on 127.0.0.1 in a daemon thread; use as a context manager."""

    def __init__(self, require_key: bool = True) -> None:
        self.requests: list[Body] = []
        self.headers: list[dict[str, str]] = []
        self.require_key = require_key
        self.release = threading.Event()  # a "hold" reply waits for it
        self.release.set()
        super().__init__(_handler)

    def close(self) -> None:
        self.release.set()
        super().close()

    def env(self, key: str = "test-openai-key") -> dict[str, str]:
        return {"OPENAI_BASE_URL": self.url + "/v1", "OPENAI_API_KEY": key}

    # -- scripting ----------------------------------------------------------------

    def reply_text(
        self, text: str, when: When = None, *, reasoning: str = "", finish: str | None = None,
        times: int | None = 1,
    ) -> None:
        self._add(_Script(_predicate(when), "answer", text, reasoning, finish=finish, times=times))

    def reply_calls(
        self, calls: list[dict[str, Any]], when: When = None, *, text: str = "", times: int | None = 1
    ) -> None:
        """``calls``: ``{"name", "arguments": dict or str, "id"?}``."""
        self._add(_Script(_predicate(when), "answer", text, calls=[dict(c) for c in calls], times=times))

    def reply_error(
        self, status: int, type: str, message: str, when: When = None, *,
        retry_after_ms: int | None = None, times: int | None = 1,
    ) -> None:
        self._add(
            _Script(_predicate(when), "error", status=status, error=(type, message),
                    retry_after_ms=retry_after_ms, times=times)
        )

    def reply_drop_mid_stream(self, text: str, when: When = None) -> None:
        """Stream the first pieces of ``text``, then hang up."""
        self._add(_Script(_predicate(when), "drop", text))

    def reply_stream_error(self, text: str, message: str, when: When = None) -> None:
        """Stream the first pieces of ``text``, then an ``error`` event, as the API does."""
        self._add(_Script(_predicate(when), "stream_error", text, error=("server_error", message)))

def chunks(fake: FakeChat, body: Body, script: _Script) -> Iterator[Body]:
    """The ``chat.completion.chunk`` objects that stream ``script``'s answer."""
    base = {"id": fake._next_id("chatcmpl-", 6), "object": "chat.completion.chunk",
            "created": 1780000000, "model": body.get("model")}

    def chunk(delta: Body, finish: str | None = None) -> Body:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(script.reasoning, 7):
        yield chunk({"reasoning_content": piece})
    for piece in _pieces(script.text, max(1, -(-len(script.text) // 3))):
        yield chunk({"content": piece})
    for index, call in enumerate(script.calls):
        args = call.get("arguments", {})
        raw = args if isinstance(args, str) else json.dumps(args)
        call_id = call.get("id") or fake._next_id("call_", 6)
        head = {"index": index, "id": call_id, "type": "function",
                "function": {"name": call["name"], "arguments": ""}}
        yield chunk({"tool_calls": [head]})
        for piece in _pieces(raw, PIECE):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    finish = script.finish or ("tool_calls" if script.calls else "stop")
    yield chunk({}, finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        prompt = len(json.dumps(body.get("messages"))) // 4
        done = (len(script.text) + len(json.dumps(script.calls))) // 4
        yield {**base, "choices": [],
               "usage": {"prompt_tokens": prompt, "completion_tokens": done,
                         "total_tokens": prompt + done}}


def _handler(fake: FakeChat) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _json(self, status: int, payload: Body, headers: Mapping[str, str] = {}) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, kind: str, message: str, headers: Mapping[str, str] = {}) -> None:
            error = {"message": message, "type": kind, "param": None, "code": None}
            self._json(status, {"error": error}, headers)

        def _send(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _stream(self, body: Body, script: _Script) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            cut = script.kind in ("drop", "stream_error")
            for n, item in enumerate(chunks(fake, body, script)):
                if cut and n == 2:  # the role chunk and one piece of text
                    if script.kind == "drop":
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    error = {"message": script.error[1], "type": script.error[0]}
                    self._send(f"data: {json.dumps({'error': error})}\n\n".encode())
                    break
                self._send(f"data: {json.dumps(item)}\n\n".encode())
            else:
                self._send(b"data: [DONE]\n\n")
            self._send(b"")

        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            path = self.path.split("?", 1)[0].rstrip("/")
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            if path not in PATHS:
                return self._error(404, "invalid_request_error", f"Unknown path {path}")
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                return self._error(400, "invalid_request_error", "the body is not JSON")
            with fake._lock:
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                number = len(fake.requests)
            bearer = self.headers.get("authorization", "")
            if fake.require_key and (not bearer.startswith("Bearer ") or bearer == "Bearer "):
                return self._error(401, "invalid_request_error", "You didn't provide an API key.")
            try:
                validate(body)
            except Refused as exc:
                return self._error(400, "invalid_request_error", str(exc))
            script = fake._take(body)
            if script is None:
                text = last_user_text(body)[:80]
                return self._error(
                    500, "server_error",
                    f"fake_chat: no scripted reply matches request #{number} ({text!r})",
                    {"x-should-retry": "false"},
                )
            if script.kind == "error":
                extra = {} if script.retry_after_ms is None else {"retry-after-ms": str(script.retry_after_ms)}
                return self._error(script.status, *script.error, extra)
            fake.release.wait(30)
            if not body.get("stream"):
                return self._error(400, "invalid_request_error", "fake_chat streams only")
            self._stream(body, script)

    return Handler
