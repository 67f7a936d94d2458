"""The openai adapter through the real `openai` SDK against the loopback fake of
the Chat Completions API (tests/support/fake_chat.py), in this process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from porcelain.errors import ConfigError, ProviderError
from porcelain.models import ModelRequest, StreamInterrupted, ToolSpec, get_model
from porcelain.models.catalog import Catalog, Warm
from porcelain.models.openai_messages import REASONING_META
from tests.support.fake_chat import FakeChat

from .test_model_messages import req

KEY = "sk-openai-test-SECRET-0123456789"
NO_WARM = Catalog(warm=Warm(enable=False))
TOOL = ToolSpec("now", "The time", {"type": "object", "properties": {"tz": {"type": "string"}}})


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChat]:
    with FakeChat() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield server


def ask(events: list[dict[str, Any]], tools: list[ToolSpec] = (), retries: int = 2) -> Any:  # type: ignore[assignment]
    deltas: list[tuple[str, str]] = []
    model = get_model("openai/gpt-test", max_retries=retries, catalog=NO_WARM)
    request = ModelRequest("openai/gpt-test", "be brief", events, list(tools))
    response = model.respond(request, lambda kind, text: deltas.append((kind, text)))
    return response, deltas


def test_text_streams_in_pieces_and_usage_is_read(fake: FakeChat) -> None:
    fake.reply_text("The answer is forty-two.")
    response, deltas = ask([req("what is it?")])
    assert [k for k, _ in deltas] == ["text", "text", "text"]
    assert "".join(t for _, t in deltas) == "The answer is forty-two."
    assert [e["message"] for e in response.events] == ["The answer is forty-two."]
    assert response.stop_reason == "end_turn"
    assert response.usage["input_tokens"] > 0 and response.usage["output_tokens"] > 0
    sent = fake.requests[0]
    assert sent["model"] == "gpt-test" and sent["stream"] is True
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"


def test_streamed_tool_calls_are_put_back_together_from_fragments(fake: FakeChat) -> None:
    arguments = {"tz": "Europe/Amsterdam", "why": "the user asked for the local time"}
    fake.reply_calls(
        [{"name": "now", "arguments": arguments, "id": "call_a"}, {"name": "now", "arguments": {}}],
        text="Looking.",
    )
    response, deltas = ask([req("time?")], [TOOL])
    assert ("tool", "now") in deltas
    calls = response.tool_calls
    assert [c["arguments"] for c in calls] == [arguments, {}]
    assert calls[0]["id"] == "call_a" and calls[1]["id"].startswith("call_")
    assert response.stop_reason == "tool_use"
    assert [e["type"] for e in response.events] == [
        "chat_response",
        "tool_call_request",
        "tool_call_request",
    ]


def test_a_tool_result_goes_back_as_a_tool_message(fake: FakeChat) -> None:
    fake.reply_calls([{"name": "now", "arguments": {"tz": "UTC"}, "id": "call_now"}])
    first, _ = ask([req("time?")], [TOOL])
    result = {
        "timestamp": first.events[0]["timestamp"],
        "type": "tool_call_response",
        "id": "call_now",
        "content": "12:00 UTC",
        "is_error": False,
    }
    fake.reply_text("It is noon.", when={"last_role": "tool"})
    second, _ = ask([req("time?"), *first.events, result], [TOOL])
    assert second.text == "It is noon."
    sent = fake.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == "call_now" and sent[3]["content"] == "12:00 UTC"


def test_reasoning_is_kept_with_the_field_the_provider_used(fake: FakeChat) -> None:
    fake.reply_text("Yes.", reasoning="Let me think about it carefully.")
    response, deltas = ask([req("sure?")])
    reasoning = response.events[0]
    assert reasoning["reasoning"] == "Let me think about it carefully."
    assert reasoning["metadata"][REASONING_META] == {
        "provider": "openai",
        "field": "reasoning_content",
    }
    assert deltas[0][0] == "reasoning"


def test_rate_limits_are_retried_by_the_sdk(fake: FakeChat) -> None:
    fake.reply_error(429, "requests", "slow down", retry_after_ms=10)
    fake.reply_error(500, "server_error", "oops", retry_after_ms=10)
    fake.reply_text("Made it.")
    response, _ = ask([req("hello")])
    assert response.text == "Made it." and len(fake.requests) == 3


def test_a_server_error_after_the_retries_is_one_line_without_the_key(fake: FakeChat) -> None:
    fake.reply_error(500, "server_error", f"exploded near {KEY}", retry_after_ms=10, times=3)
    with pytest.raises(ProviderError) as info:
        ask([req("hello")])
    assert len(fake.requests) == 3, "two retries"
    message = info.value.message
    assert message.startswith("openai returned 500 server_error") and "\n" not in message
    assert KEY not in message and "[redacted]" in message


def test_an_invalid_request_is_reported_with_the_apis_words(fake: FakeChat) -> None:
    with pytest.raises(ProviderError, match="400") as info:
        get_model("openai/gpt-test", catalog=NO_WARM).respond(
            ModelRequest("openai/gpt-test", "", [req("x")], [ToolSpec("bad name", "", {})]),
            lambda k, t: None,
        )
    assert "400" in info.value.message and len(fake.requests) == 1, "a 400 is not retried"


def test_a_dropped_stream_keeps_the_text_that_arrived(fake: FakeChat) -> None:
    fake.reply_drop_mid_stream("The first part of an answer that never ends")
    with pytest.raises(StreamInterrupted) as info:
        ask([req("hello")], retries=0)
    kept = info.value.partial_events
    assert len(kept) == 1 and "The first part".startswith(kept[0]["message"][:5])


def test_an_error_inside_the_stream_is_a_break(fake: FakeChat) -> None:
    fake.reply_stream_error("Half an answer", "the model crashed")
    with pytest.raises(StreamInterrupted) as info:
        ask([req("hello")])
    assert "broke off" in info.value.message and "crashed" in info.value.message


def test_a_missing_key_is_refused_before_anything_is_sent(
    fake: FakeChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    model = get_model("openai/gpt-test", catalog=NO_WARM)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        model.check()
    assert fake.requests == []


def test_a_provider_entry_sends_its_key_to_its_url(
    fake: FakeChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # the entry wins
    monkeypatch.setenv("LOCAL_KEY", "local-secret")
    catalog = Catalog.of(
        {
            "providers": {
                "local": {
                    "kind": "openai",
                    "base_url": fake.url + "/v1",
                    "api_key_env": "LOCAL_KEY",
                }
            },
            "assistant": {"model": {"aliases": {"fast": "local/qwen"}}, "warm": {"enable": False}},
        }
    )
    fake.reply_text("local answer", when={"model": "qwen"})
    model = get_model("fast", catalog=catalog)
    response = model.respond(ModelRequest("local/qwen", "", [req("hi")]), lambda k, t: None)
    assert response.text == "local answer"
    assert fake.headers[-1]["authorization"] == "Bearer local-secret"
    assert json.dumps(fake.requests[-1]).count("local-secret") == 0


def test_a_server_without_keys_is_sent_a_placeholder(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeChat(require_key=False) as server:
        catalog = Catalog.of(
            {
                "providers": {"ollama": {"base_url": server.url + "/v1"}},
                "assistant": {"warm": {"enable": False}},
            }
        )
        server.reply_text("from ollama")
        model = get_model("ollama/qwen3", catalog=catalog)
        model.check()  # no key needed
        response = model.respond(ModelRequest("ollama/qwen3", "", [req("hi")]), lambda k, t: None)
        assert response.text == "from ollama"
        assert "max_tokens" in server.requests[0]
