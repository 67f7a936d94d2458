"""The one loopback fake of the Anthropic Messages API, for driving the real SDK in tests
(in process, or in a `jp` subprocess through ``env()``).

    with FakeMessages() as fake:
        fake.reply_text("Hello!", when={"last_user_contains": "hi"})
        client = anthropic.Anthropic(base_url=fake.url, api_key="test-key")

Each scripted reply answers one request (``times`` for more; None: every one), the
first matching one in the order scripted.  ``when`` is a function of the request
body or keys: ``last_user_contains``, ``tools_include``, ``no_tools``.  Requests
are refused with 400 the way the real API refuses them before any script is
consulted (tests/support/messages_api.py); a request no script matches gets a 500
with ``x-should-retry: false`` that says which request it was.

What it answers:

- ``reply_text`` / ``reply_blocks``: a message (text, thinking, tool_use blocks),
  streamed as the API streams it (server-sent events, chunked) or as JSON;
- ``reply_error``: an HTTP error with the API's body (``retry_after_ms`` for the
  SDK's retries);
- ``reply_drop_mid_stream``: part of an answer, then the connection is cut;
- ``reply_stall_mid_stream``: part of an answer, then nothing until the client hangs
  up (a slow stream a person presses Ctrl-C in) or the fake is closed;
- ``reply_events``: exactly the events given (an ``error`` event mid-stream, a
  stream that ends before ``message_stop``, ids and usage of the test's choice);
  ``hold`` keeps the stream waiting before an event until the test sets a
  ``threading.Event`` (a slow model, without a timer);
- ``reply_raw``: bytes the API never sends (bad JSON, an HTML page).

``requests``, ``headers`` and ``count_requests`` record what the SDK sent.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import Loopback
from tests.support.messages_api import (
    Body,
    Event,
    Predicate,
    Refused,
    When,
    error_body,
    estimate,
    last_user_text,
    message,
    predicate,
    sse,
    sse_events,
    tool_names,
    validate,
)

__all__ = ["FakeMessages", "Refused", "validate", "sse", "sse_events", "message", "error_body"]

KEY = "test-key"


@dataclass
class _Script:
    match: Predicate
    kind: str  # "blocks" | "error" | "drop" | "stall" | "events" | "raw"
    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    status: int = 200
    error: tuple[str, str] = ("", "")
    retry_after_ms: int | None = None
    times: int | None = 1
    usage: Mapping[str, int] | None = None
    events: list[Event] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    content_type: str = "text/event-stream"
    hold: Mapping[int, threading.Event] = field(default_factory=dict)


class FakeMessages(Loopback):
    """The server on 127.0.0.1 in a daemon thread; use as a context manager."""

    def __init__(self, api_key: str = KEY) -> None:
        self.api_key = api_key
        self.requests: list[Body] = []
        self.count_requests: list[Body] = []
        self.headers: list[dict[str, str]] = []
        super().__init__(_make_handler)

    def env(self) -> dict[str, str]:
        """What points the SDK (in ``jp`` or in process) at this fake."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": self.api_key}

    # -- scripting ----------------------------------------------------------------

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
        usage: Mapping[str, int] | None = None,
    ) -> None:
        """Blocks: ``{"type": "text", "text"}``, ``{"type": "thinking", "thinking",
        "signature"}``, ``{"type": "tool_use", "name", "input", "id"?}``; ``usage``
        overrides the token counts the fake estimates."""
        for block in blocks:
            if block.get("type") not in ("text", "thinking", "tool_use"):
                raise ValueError(f"cannot script a {block.get('type')!r} block")
        script = _Script(predicate(when), "blocks", [dict(b) for b in blocks], stop_reason)
        script.times, script.usage = times, usage
        self._add(script)

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
                predicate(when),
                "error",
                status=status,
                error=(type, message),
                retry_after_ms=retry_after_ms,
                times=times,
            )
        )

    def reply_drop_mid_stream(self, text: str, when: When = None) -> None:
        """Stream part of ``text``, then close the connection without finishing (a
        request without ``stream``: half the JSON body, then the same)."""
        self._add(_Script(predicate(when), "drop", [{"type": "text", "text": text}]))

    def reply_stall_mid_stream(self, text: str, when: When = None) -> None:
        """Stream part of ``text``, then send nothing more until the client hangs up."""
        self._add(_Script(predicate(when), "stall", [{"type": "text", "text": text}]))

    def reply_events(
        self,
        events: Sequence[Event],
        when: When = None,
        *,
        times: int | None = 1,
        hold: Mapping[int, threading.Event] | None = None,
    ) -> None:
        """Stream exactly ``events`` (name, data), then end the stream as a server that
        finished sending: built with ``sse_events(message(...))``, cut or extended.
        ``hold``: before the event at each index, wait until its ``Event`` is set."""
        script = _Script(
            predicate(when), "events", events=[(n, dict(d)) for n, d in events], times=times
        )
        script.hold = dict(hold or {})
        self._add(script)

    def reply_raw(
        self,
        chunks: Sequence[bytes],
        when: When = None,
        *,
        content_type: str = "text/event-stream",
        times: int | None = 1,
    ) -> None:
        """Answer 200 with ``chunks`` as the body as they are (``sse()`` makes one event)."""
        self._add(
            _Script(
                predicate(when), "raw", raw=list(chunks), content_type=content_type, times=times
            )
        )

    # -- answering ----------------------------------------------------------------

    def _message(self, body: Body, script: _Script) -> Body:
        blocks = [dict(b) for b in script.blocks]
        for block in blocks:
            if block["type"] == "tool_use":
                block.setdefault("id", self._next_id("toolu_01"))
        return message(
            blocks,
            model=body.get("model"),
            id=self._next_id("msg_01"),
            stop_reason=script.stop_reason,
            usage=script.usage,
            prompt=body.get("messages"),
        )


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
            body = error_body(kind, message)
            self._json(status, body, {k.replace("_", "-"): v for k, v in headers.items()})

        def _hang_up(self) -> None:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _open_stream(self, content_type: str = "text/event-stream; charset=utf-8") -> None:
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("transfer-encoding", "chunked")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", fake._next_id("req_01"))
            self.end_headers()

        def _stream(
            self,
            events: Sequence[Event],
            drop_at: int | None = None,
            hold: Mapping[int, threading.Event] | None = None,
            stall: bool = False,
        ) -> None:
            self._open_stream()
            for n, (event, data) in enumerate(events):
                if n == drop_at:
                    if stall:  # a stream that stopped coming: wait for the client to go
                        self.close_connection = True
                        self.connection.settimeout(60)
                        with contextlib.suppress(OSError):
                            self.connection.recv(1)
                            self._hang_up()
                        return None
                    return self._hang_up()
                if hold and n in hold:
                    hold[n].wait(60)  # a test that never releases fails on its own timeout
                self._chunk(sse(event, data))
            self._chunk(b"")

        def _raw(self, script: _Script) -> None:
            self._open_stream(script.content_type)
            for chunk in script.raw:
                self._chunk(chunk)
            self._chunk(b"")
            self.close_connection = True

        def _received(self, path: str, body: Any) -> int:
            with fake._lock:
                if path.endswith("count_tokens"):
                    fake.count_requests.append(body)
                else:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                return len(fake.requests)

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
            number = self._received(path, body)
            if not (self.headers.get("x-api-key") or self.headers.get("authorization")):
                return self._error(401, "authentication_error", "x-api-key header is required")
            try:
                validate(body, counting=counting)
            except Refused as exc:
                return self._error(400, "invalid_request_error", str(exc))
            if counting:
                return self._json(200, {"input_tokens": estimate(body.get("messages"))})
            script = fake._take(body)
            if script is None:
                return self._error(
                    500,
                    "api_error",
                    f"fake_messages: no scripted reply matches request #{number} "
                    f"(last user message {last_user_text(body)[:80]!r}, "
                    f"tools {tool_names(body)})",
                    x_should_retry="false",
                )
            self._answer(body, script)

        def _answer(self, body: Body, script: _Script) -> None:
            if script.kind == "error":
                extra = (
                    {}
                    if script.retry_after_ms is None
                    else {"retry_after_ms": str(script.retry_after_ms)}
                )
                return self._error(script.status, *script.error, **extra)
            if script.kind == "events":
                return self._stream(script.events, hold=script.hold)
            if script.kind == "raw":
                return self._raw(script)
            reply = fake._message(body, script)
            drop = script.kind in ("drop", "stall")
            if body.get("stream"):  # after message_start, ping, block start, one delta
                return self._stream(
                    sse_events(reply), drop_at=4 if drop else None, stall=script.kind == "stall"
                )
            return self._json(200, reply, cut=drop)

    return Handler
