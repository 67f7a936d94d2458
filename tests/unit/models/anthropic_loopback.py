"""A tiny Messages API on loopback for the anthropic adapter's tests: scripted
answers, streamed as the real API streams them (SSE), or JSON errors."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from porcelain.models import ModelRequest

KEY = "sk-ant-test-SECRET-0123456789"
T = "2026-01-05T09:00:00.000000Z"
Sse = list[tuple[str, dict[str, Any]]]


def start() -> Sse:
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1},
    }
    return [("message_start", {"type": "message_start", "message": message})]


def block(index: int, first: dict[str, Any], deltas: list[dict[str, Any]]) -> Sse:
    out: Sse = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": first},
        )
    ]
    for d in deltas:
        out.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
        )
    out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out


def finish(stop_reason: str) -> Sse:
    return [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 9},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def text_answer(text: str) -> Sse:
    chunks = [{"type": "text_delta", "text": text[i : i + 5]} for i in range(0, len(text), 5)]
    return start() + block(0, {"type": "text", "text": ""}, chunks) + finish("end_turn")


def tool_answer() -> Sse:
    args = json.dumps({"from_turn": 2, "to_turn": 15, "summary": "Keep the retry decision."})
    return (
        start()
        + block(
            0,
            {"type": "thinking", "thinking": "", "signature": ""},
            [
                {"type": "thinking_delta", "thinking": "The user wants 15."},
                {"type": "signature_delta", "signature": "U0lHTkFUVVJF"},
            ],
        )
        + block(1, {"type": "text", "text": ""}, [{"type": "text_delta", "text": "Recording."}])
        + block(
            2,
            {"type": "tool_use", "id": "toolu_abc", "name": "propose_compaction", "input": {}},
            [
                {"type": "input_json_delta", "partial_json": args[i : i + 11]}
                for i in range(0, len(args), 11)
            ],
        )
        + finish("tool_use")
    )


class Api:
    """Scripted answers, one per request: ("sse", events) or ("json", status, body)."""

    def __init__(self) -> None:
        self.script: list[tuple[Any, ...]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                api.requests.append(json.loads(self.rfile.read(length)))
                api.headers.append({k.lower(): v for k, v in self.headers.items()})
                answer = api.script.pop(0)
                if answer[0] == "json":
                    raw = json.dumps(answer[2]).encode()
                    self.send_response(answer[1])
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    self.send_header("retry-after-ms", "5")
                    self.end_headers()
                    self.wfile.write(raw)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for name, data in answer[1]:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def request(**kw: Any) -> ModelRequest:
    events = [{"timestamp": T, "type": "chat_request", "content": "Hello?"}]
    base: dict[str, Any] = {
        "model_id": "anthropic/claude-test",
        "system": "Be brief.",
        "events": events,
    }
    return ModelRequest(**(base | kw))


class Deltas:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def __call__(self, kind: str, text: str) -> None:
        self.seen.append((kind, text))
