"""A loopback stand-in of the OpenAI Responses API (``POST /v1/responses``), enough
for the real Codex CLI: every request is recorded, and each is answered, streamed as
server-sent events, with one assistant message of the scripted text.

    with FakeResponses() as fake:
        fake.reply_text("Hello!")            # every request, until another is scripted
        ... OPENAI_BASE_URL=fake.url + "/v1" ...
        fake.requests                       # the bodies Codex sent

Only what a plain text answer needs: no tool calls, no errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import Body, Loopback

KEY = "test-key"


@dataclass
class _Reply:
    match: Callable[[Body], bool]
    text: str
    times: int | None


class FakeResponses(Loopback):
    def __init__(self) -> None:
        self.requests: list[Body] = []
        super().__init__(_handler)

    def reply_text(self, text: str, times: int | None = None) -> None:
        self._add(_Reply(lambda body: True, text, times))

    def inputs(self, body: Body) -> str:
        """What a request gives the model (its ``input`` items) as one JSON text."""
        return json.dumps(body.get("input", []), ensure_ascii=False)


def _events(fake: FakeResponses, text: str, model: str) -> list[tuple[str, Body]]:
    rid = fake._next_id("resp_")
    item = {
        "type": "message",
        "id": fake._next_id("msg_"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    base = {"id": rid, "object": "response", "model": model, "output": []}
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 2,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 12,
    }
    return [
        ("response.created", {"type": "response.created", "response": base}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": item}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                        "content_index": 0, "item_id": item["id"], "delta": text}),
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": {
            **base, "status": "completed", "output": [item], "usage": usage}}),
    ]  # fmt: skip


def _handler(fake: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _plain(self, status: int, payload: Body) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            self._plain(200, {"object": "list", "data": [], "models": []})

        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path.split("?", 1)[0].rstrip("/") != "/v1/responses":
                return self._plain(404, {"error": {"message": f"not found: {self.path}"}})
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                return self._plain(400, {"error": {"message": "the body is not JSON"}})
            if not isinstance(body, dict):
                return self._plain(400, {"error": {"message": "the body is not an object"}})
            with fake._lock:
                fake.requests.append(body)
            reply = fake._take(body)
            if reply is None:
                return self._plain(500, {"error": {"message": "no reply scripted"}})
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for name, data in _events(fake, reply.text, str(body.get("model") or "m")):
                chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler
