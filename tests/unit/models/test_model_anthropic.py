"""The anthropic adapter against the real SDK and a tiny Messages API on loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from porcelain.errors import ConfigError, ProviderError
from porcelain.models import ModelRequest, StreamInterrupted, ToolSpec, get_model
from porcelain.models.anthropic_model import build_params

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


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    server = Api()
    thread = threading.Thread(target=server.server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    yield server
    server.server.shutdown()
    server.server.server_close()


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


def test_a_streamed_text_answer(api: Api) -> None:
    api.script.append(("sse", text_answer("Hello from the fake API.")))
    deltas = Deltas()
    response = get_model("anthropic/claude-test").respond(request(), deltas)
    assert [(e["type"], e.get("message")) for e in response.events] == [
        ("chat_response", "Hello from the fake API.")
    ]
    assert response.stop_reason == "end_turn"
    assert "".join(t for k, t in deltas.seen if k == "text") == "Hello from the fake API."
    assert len([k for k, _ in deltas.seen if k == "text"]) > 1, "text should arrive in pieces"
    assert response.usage["input_tokens"] == 12
    body = api.requests[0]
    assert body["model"] == "claude-test" and body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hello?"}]}]
    sent = api.headers[0]
    assert KEY in (sent.get("x-api-key", ""), sent.get("authorization", "").removeprefix("Bearer "))


def test_a_tool_use_answer_with_thinking(api: Api) -> None:
    api.script.append(("sse", tool_answer()))
    tool = ToolSpec("propose_compaction", "Record a proposal.", {"type": "object"})
    deltas = Deltas()
    response = get_model("anthropic/claude-test").respond(
        request(tools=[tool], thinking_budget=2048), deltas
    )
    reasoning, message, call = response.events
    assert reasoning["reasoning"] == "The user wants 15."
    assert reasoning["metadata"] == {"anthropic_thinking_signature": "U0lHTkFUVVJF"}
    assert message["message"] == "Recording."
    assert call["type"] == "tool_call_request"
    assert (call["id"], call["name"]) == ("toolu_abc", "propose_compaction")
    assert call["arguments"] == {
        "from_turn": 2,
        "to_turn": 15,
        "summary": "Keep the retry decision.",
    }
    assert response.stop_reason == "tool_use"
    assert ("tool", "propose_compaction") in deltas.seen
    assert ("reasoning", "The user wants 15.") in deltas.seen
    body = api.requests[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048
    assert [t["name"] for t in body["tools"]] == ["propose_compaction"]


def test_401_is_one_line_without_the_key(api: Api) -> None:
    error = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    api.script.append(("json", 401, error))
    with pytest.raises(ProviderError) as info:
        get_model("anthropic/claude-test").respond(request(), Deltas())
    assert info.value.message == "anthropic returned 401 authentication_error: invalid x-api-key"
    assert KEY not in info.value.message and KEY not in str(info.value.hint)
    assert len(api.requests) == 1, "a 401 is not retried"


def test_overloaded_is_retried_then_succeeds(api: Api) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    api.script += [("json", 529, overloaded), ("sse", text_answer("after the retry"))]
    response = get_model("anthropic/claude-test", max_retries=1).respond(request(), Deltas())
    assert response.text == "after the retry"
    assert len(api.requests) == 2


def test_overloaded_without_retries_left(api: Api) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    api.script += [("json", 529, overloaded)]
    with pytest.raises(ProviderError, match="anthropic returned 529 overloaded_error: Overloaded"):
        get_model("anthropic/claude-test", max_retries=0).respond(request(), Deltas())


def test_a_dropped_stream_keeps_the_text_already_shown(api: Api) -> None:
    cut = start() + [
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "The first half"},
            },
        ),
    ]
    api.script.append(("sse", cut))
    deltas = Deltas()
    with pytest.raises(StreamInterrupted) as info:
        get_model("anthropic/claude-test").respond(request(), deltas)
    assert isinstance(info.value, ProviderError)
    assert [e.get("message") for e in info.value.partial_events] == ["The first half"]
    assert ("text", "The first half") in deltas.seen


def test_an_error_event_mid_stream_keeps_completed_blocks(api: Api) -> None:
    events = start() + block(
        0, {"type": "text", "text": ""}, [{"type": "text_delta", "text": "Done part."}]
    )
    events.append(
        ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    )
    api.script.append(("sse", events))
    with pytest.raises(StreamInterrupted) as info:
        get_model("anthropic/claude-test").respond(request(), Deltas())
    assert "overloaded_error" in info.value.message
    assert [e.get("message") for e in info.value.partial_events] == ["Done part."]


def test_an_unreachable_api_names_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(ProviderError) as info:
        get_model("anthropic/claude-test", max_retries=0).respond(request(), Deltas())
    assert info.value.message.startswith(
        f"could not reach the anthropic API at http://127.0.0.1:{port}"
    )
    assert "\n" not in info.value.message and KEY not in info.value.message


def no_credentials(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for name in list(os.environ):
        if name.startswith("ANTHROPIC_") or name == "XDG_CONFIG_HOME":
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")


def test_no_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    no_credentials(monkeypatch, tmp_path)
    with pytest.raises(ConfigError, match="no Anthropic API key") as info:
        get_model("anthropic/claude-test").respond(request(), Deltas())
    assert "ANTHROPIC_API_KEY" in str(info.value.hint)


def test_a_broken_credentials_profile_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    no_credentials(monkeypatch, tmp_path)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="anthropic credentials"):
        get_model("anthropic/claude-test").respond(request(), Deltas())


def test_build_params_without_tools_renders_calls_as_text() -> None:
    events = [
        {"timestamp": T, "type": "chat_request", "content": "read it"},
        {
            "timestamp": T,
            "type": "tool_call_request",
            "id": "t1",
            "name": "fs_read_file",
            "arguments": {"path": "a.py"},
        },
        {
            "timestamp": T,
            "type": "tool_call_response",
            "id": "t1",
            "content": "x",
            "is_error": False,
        },
        {"timestamp": T, "type": "chat_request", "content": "Summarize the conversation above."},
    ]
    params = build_params(request(events=events, task="summary", cache=False, system=""))
    assert "tools" not in params and "system" not in params and "thinking" not in params
    kinds = {b["type"] for m in params["messages"] for b in m["content"]}
    assert kinds == {"text"}


def test_loading_the_model_layer_does_not_import_the_sdk() -> None:
    code = (
        "import sys; from porcelain.models import get_model; "
        "get_model('anthropic/claude-x'); get_model('offline/default'); "
        "assert 'anthropic' not in sys.modules, 'SDK imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[3])


def test_an_api_message_echoing_the_key_is_redacted(api: Api) -> None:
    error = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": f"bad header value {KEY}"},
    }
    api.script.append(("json", 400, error))
    with pytest.raises(ProviderError) as info:
        get_model("anthropic/claude-test").respond(request(), Deltas())
    assert KEY not in info.value.message
    assert info.value.message.startswith("anthropic returned 400 invalid_request_error:")
