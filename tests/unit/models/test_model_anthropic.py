"""The anthropic adapter against the real SDK and a tiny Messages API on loopback: answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from porcelain.models import ToolSpec, get_model
from porcelain.models.anthropic_model import build_params
from tests.support.fake_messages import FakeMessages

from .support import KEY, Deltas, T, request


def test_a_streamed_text_answer(fake: FakeMessages) -> None:
    fake.reply_blocks(
        [{"type": "text", "text": "Hello from the fake API."}], usage={"input_tokens": 12}
    )
    deltas = Deltas()
    response = get_model("anthropic/claude-test").respond(request(), deltas)
    assert [(e["type"], e.get("message")) for e in response.events] == [
        ("chat_response", "Hello from the fake API.")
    ]
    assert response.stop_reason == "end_turn"
    assert deltas.joined("text") == "Hello from the fake API."
    assert len([k for k, _ in deltas.seen if k == "text"]) > 1, "text should arrive in pieces"
    assert response.usage["input_tokens"] == 12
    body = fake.requests[0]
    assert body["model"] == "claude-test" and body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hello?"}]}]
    sent = fake.headers[0]
    assert KEY in (sent.get("x-api-key", ""), sent.get("authorization", "").removeprefix("Bearer "))


def test_a_tool_use_answer_with_thinking(fake: FakeMessages) -> None:
    arguments = {"from_turn": 2, "to_turn": 15, "summary": "Keep the retry decision."}
    fake.reply_blocks(
        [
            {"type": "thinking", "thinking": "The user wants 15.", "signature": "U0lHTkFUVVJF"},
            {"type": "text", "text": "Recording."},
            {
                "type": "tool_use",
                "id": "toolu_abc",
                "name": "propose_compaction",
                "input": arguments,
            },
        ],
        when={"tools_include": "propose_compaction"},
    )
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
    assert call["arguments"] == arguments
    assert response.stop_reason == "tool_use"
    assert ("tool", "propose_compaction") in deltas.seen
    assert deltas.joined("reasoning") == "The user wants 15."
    body = fake.requests[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048
    assert [t["name"] for t in body["tools"]] == ["propose_compaction"]


def test_overloaded_is_retried_then_succeeds(fake: FakeMessages) -> None:
    fake.reply_error(529, "overloaded_error", "Overloaded", retry_after_ms=5)
    fake.reply_text("after the retry")
    response = get_model("anthropic/claude-test", max_retries=1).respond(request(), Deltas())
    assert response.text == "after the retry"
    assert len(fake.requests) == 2


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
