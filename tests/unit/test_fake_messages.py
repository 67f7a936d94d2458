"""The fake Messages API, driven by the real ``anthropic`` SDK in-process."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

# `tests` is a package at the repository root; plain `pytest` does not put the root on
# sys.path (tests/unit has no __init__.py), `python -m pytest` does.
ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tests.support.fake_messages import (  # noqa: E402
    FakeMessages,
    Refused,
    error_body,
    message,
    sse,
    sse_events,
    validate,
)

WEATHER_TOOL: Any = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
MODEL = "claude-test-1"


@pytest.fixture
def fake() -> Iterator[FakeMessages]:
    with FakeMessages() as server:
        yield server


def client(fake: FakeMessages, **options: Any) -> anthropic.Anthropic:
    options.setdefault("max_retries", 0)
    return anthropic.Anthropic(base_url=fake.url, api_key="test-key", **options)


def ask(text: str) -> Any:
    return [{"role": "user", "content": text}]


def test_env_names_the_url_and_a_key(fake: FakeMessages) -> None:
    assert fake.env() == {"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "test-key"}
    assert fake.url.startswith("http://127.0.0.1:")


def test_streamed_text(fake: FakeMessages) -> None:
    fake.reply_text("Tabs are fine, spaces are fine too.", when={"last_user_contains": "tabs"})
    with client(fake).messages.stream(model=MODEL, max_tokens=100, messages=ask("tabs?")) as s:
        pieces = list(s.text_stream)
        final = s.get_final_message()
    assert len(pieces) > 1
    assert "".join(pieces) == "Tabs are fine, spaces are fine too."
    assert final.stop_reason == "end_turn"
    assert final.model == MODEL
    assert final.usage.output_tokens > 0
    assert fake.requests[0]["stream"] is True
    sent = fake.headers[0]
    assert sent.get("x-api-key") == "test-key" or sent.get("authorization") == "Bearer test-key"


def test_raw_stream_events_are_in_the_api_order(fake: FakeMessages) -> None:
    fake.reply_blocks(
        [
            {"type": "thinking", "thinking": "hm", "signature": "c2ln"},
            {"type": "text", "text": "ok"},
        ]
    )
    events: Any = client(fake).messages.create(
        model=MODEL, max_tokens=100, messages=ask("hi"), stream=True
    )
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 2


def test_streamed_tool_use_input_is_reassembled(fake: FakeMessages) -> None:
    tool_input = {"city": "Lisbon", "units": "metric", "days": [1, 2, 3]}
    fake.reply_blocks(
        [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "name": "get_weather", "input": tool_input},
        ],
        when={"tools_include": "get_weather"},
    )
    api = client(fake)
    with api.messages.stream(
        model=MODEL, max_tokens=100, messages=ask("weather?"), tools=[WEATHER_TOOL]
    ) as s:
        deltas = [
            e for e in s if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
        ]
        final = s.get_final_message()
    assert len(deltas) > 2
    use = final.content[1]
    assert use.type == "tool_use" and use.name == "get_weather" and use.input == tool_input
    assert use.id.startswith("toolu_")
    assert final.stop_reason == "tool_use"

    # the follow-up that answers the tool call is valid and matched by its text
    fake.reply_text("18 °C and sunny.", when={"last_user_contains": "sunny"})
    history: Any = [
        *ask("weather?"),
        {"role": "assistant", "content": [b.model_dump() for b in final.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny, 18"}],
        },
    ]
    reply = api.messages.create(model=MODEL, max_tokens=100, messages=history, tools=[WEATHER_TOOL])
    assert reply.content[0].type == "text" and reply.content[0].text == "18 °C and sunny."


def test_thinking_and_signature(fake: FakeMessages) -> None:
    fake.reply_blocks(
        [
            {
                "type": "thinking",
                "thinking": "The user wants a haiku about git.",
                "signature": "EpcCCkYIBx==",
            },
            {"type": "text", "text": "Commits like footprints"},
        ]
    )
    with client(fake).messages.stream(
        model=MODEL,
        max_tokens=2000,
        messages=ask("haiku"),
        thinking={"type": "enabled", "budget_tokens": 1024},
    ) as s:
        final = s.get_final_message()
    thinking = final.content[0]
    assert thinking.type == "thinking"
    assert thinking.thinking == "The user wants a haiku about git."
    assert thinking.signature == "EpcCCkYIBx=="


def test_non_streamed_message(fake: FakeMessages) -> None:
    fake.reply_text("Done.", when=lambda body: body["max_tokens"] == 7)
    reply = client(fake).messages.create(model=MODEL, max_tokens=7, messages=ask("go"))
    assert [b.type for b in reply.content] == ["text"]
    assert reply.content[0].type == "text" and reply.content[0].text == "Done."
    assert reply.stop_reason == "end_turn" and reply.id.startswith("msg_")
    assert "stream" not in fake.requests[0]


def test_count_tokens(fake: FakeMessages) -> None:
    count = client(fake).messages.count_tokens(model=MODEL, messages=ask("how many tokens?"))
    assert count.input_tokens > 0
    assert len(fake.count_requests) == 1 and fake.requests == []


def test_validation_error_is_a_bad_request(fake: FakeMessages) -> None:
    fake.reply_text("never sent")
    bad: Any = [{"role": "assistant", "content": "I start"}]
    with pytest.raises(anthropic.BadRequestError) as caught:
        client(fake).messages.create(model=MODEL, max_tokens=10, messages=bad)
    assert "first message must use the `user` role" in str(caught.value)
    assert fake.pending() == 1  # a refused request uses no script


def test_unanswered_tool_use_is_refused(fake: FakeMessages) -> None:
    history = [
        *ask("weather?"),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}],
        },
        {"role": "user", "content": "never mind"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="toolu_1"):
        client(fake).messages.create(
            model=MODEL, max_tokens=10, messages=history, tools=[WEATHER_TOOL]
        )


def test_authentication_error(fake: FakeMessages) -> None:
    fake.reply_error(401, "authentication_error", "invalid x-api-key")
    with pytest.raises(anthropic.AuthenticationError, match="invalid x-api-key"):
        client(fake).messages.create(model=MODEL, max_tokens=10, messages=ask("hi"))


def test_overloaded_is_retried_by_the_sdk(fake: FakeMessages) -> None:
    fake.reply_error(529, "overloaded_error", "Overloaded", retry_after_ms=10)
    fake.reply_text("second time lucky")
    reply = client(fake, max_retries=1).messages.create(
        model=MODEL, max_tokens=10, messages=ask("hi")
    )
    assert reply.content[0].type == "text" and reply.content[0].text == "second time lucky"
    assert len(fake.requests) == 2


def test_unmatched_request_is_a_500_that_is_not_retried(fake: FakeMessages) -> None:
    fake.reply_text("only for cats", when={"last_user_contains": "cat"})
    with pytest.raises(anthropic.InternalServerError, match="no scripted reply matches request #1"):
        client(fake, max_retries=2).messages.create(model=MODEL, max_tokens=10, messages=ask("dog"))
    assert len(fake.requests) == 1


def _transport_error() -> type[BaseException]:
    """The HTTP library's base error (the SDK lets it through from a broken stream)."""
    for name in ("httpx2", "httpx"):
        try:
            error: type[BaseException] = importlib.import_module(name).HTTPError
        except ImportError:
            continue
        return error
    return anthropic.APIError


def test_dropped_stream_raises_in_the_sdk(fake: FakeMessages) -> None:
    text = "This answer will never be finished because the line drops."
    fake.reply_drop_mid_stream(text)
    seen: list[str] = []
    with (
        pytest.raises((anthropic.APIError, _transport_error())),
        client(fake).messages.stream(model=MODEL, max_tokens=10, messages=ask("hi")) as s,
    ):
        seen.extend(s.text_stream)
    assert seen and text.startswith("".join(seen)) and "".join(seen) != text


def test_dropped_plain_response_is_a_connection_error(fake: FakeMessages) -> None:
    fake.reply_drop_mid_stream("cut")
    with pytest.raises(anthropic.APIConnectionError):
        client(fake).messages.create(model=MODEL, max_tokens=10, messages=ask("hi"))
    assert len(fake.requests) == 1


def test_scripted_events_are_sent_as_they_are(fake: FakeMessages) -> None:
    events = sse_events(message([{"type": "text", "text": "Done part, then"}], id="msg_mine"))
    fake.reply_events([*events[:-2], ("error", error_body("overloaded_error", "Overloaded"))])
    seen: list[str] = []
    with (
        pytest.raises(anthropic.APIStatusError, match="Overloaded"),
        client(fake).messages.stream(model=MODEL, max_tokens=10, messages=ask("hi")) as s,
    ):
        for event in s:
            seen.append(event.type)
            if event.type == "message_start":
                assert event.message.id == "msg_mine"
    assert seen[-1] == "content_block_stop" and "text" in seen


def test_usage_can_be_scripted(fake: FakeMessages) -> None:
    fake.reply_blocks([{"type": "text", "text": "ok"}], usage={"input_tokens": 12})
    with client(fake).messages.stream(model=MODEL, max_tokens=10, messages=ask("hi")) as s:
        final = s.get_final_message()
    assert final.usage.input_tokens == 12 and final.usage.output_tokens > 0


def test_raw_bytes_are_answered_as_they_are(fake: FakeMessages) -> None:
    good = sse_events(message([{"type": "text", "text": "Half an "}]))[:4]
    fake.reply_raw([*(sse(*e) for e in good), b"event: content_block_delta\ndata: {nope\n\n"])
    with (
        pytest.raises(Exception, match="Expecting property name|JSON"),
        client(fake).messages.stream(model=MODEL, max_tokens=10, messages=ask("hi")) as s,
    ):
        list(s.text_stream)
    fake.reply_raw([b"<html>502 ", b"Bad Gateway</html>"], content_type="text/html")
    raw = client(fake).messages.with_raw_response.create(
        model=MODEL, max_tokens=10, messages=ask("hi")
    )
    assert raw.http_response.headers["content-type"] == "text/html"
    assert raw.http_response.text == "<html>502 Bad Gateway</html>"
    assert fake.pending() == 0 and len(fake.requests) == 2


def test_a_key_of_the_tests_choice() -> None:
    with FakeMessages(api_key="sk-ant-mine") as fake:
        assert fake.env()["ANTHROPIC_API_KEY"] == "sk-ant-mine"
        fake.reply_text("yes")
        api = anthropic.Anthropic(base_url=fake.url, api_key="sk-ant-mine")
        reply = api.messages.create(model=MODEL, max_tokens=10, messages=ask("hi"))
        assert reply.content[0].type == "text"
        sent = fake.headers[0]
        assert "sk-ant-mine" in (sent.get("x-api-key"), sent.get("authorization", "")[7:])


def test_no_tools_and_scripts_used_once(fake: FakeMessages) -> None:
    fake.reply_text("plain", when={"no_tools": True}, times=None)
    api = client(fake)
    for _ in range(2):
        reply = api.messages.create(model=MODEL, max_tokens=10, messages=ask("x"))
        assert reply.content[0].type == "text" and reply.content[0].text == "plain"
    with pytest.raises(anthropic.InternalServerError):
        api.messages.create(model=MODEL, max_tokens=10, messages=ask("x"), tools=[WEATHER_TOOL])


def test_unknown_when_key_is_a_mistake(fake: FakeMessages) -> None:
    with pytest.raises(ValueError, match="last_user_is"):
        fake.reply_text("x", when={"last_user_is": "y"})


def req(*messages: Any, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 5, "messages": list(messages), **extra}


USER = {"role": "user", "content": "x"}
TOOL_USE = {"type": "tool_use", "id": "t", "name": "n", "input": {}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "t", "content": "ok"}
CALLED = {"role": "assistant", "content": [TOOL_USE]}
ANSWERED = {"role": "user", "content": [TOOL_RESULT]}
THOUGHT = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}
TOOLS = [WEATHER_TOOL]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"max_tokens": 5, "messages": [USER]}, "model: Field required"),
        ({"model": MODEL, "messages": [USER]}, "max_tokens"),
        (req(), "at least one message"),
        (req({"role": "system", "content": "x"}), "first message"),
        (req(USER, {"role": "tool", "content": "y"}), "role"),
        (req({"role": "user", "content": [{"type": "text", "text": ""}]}), "non-empty"),
        (req({"role": "user", "content": ""}), "messages.0: all messages must have non-empty"),
        (req(USER, {"role": "assistant", "content": []}, USER), "messages.1: all messages"),
        (req(ANSWERED, tools=TOOLS), "unexpected `tool_use_id`"),
        (req(USER, CALLED, USER, tools=TOOLS), "`tool_use` ids were found"),
        (req(USER, CALLED, ANSWERED), "must define tools"),
        (req(USER, tools=[{"name": "n", "input_schema": {"type": "array"}}]), "input_schema.type"),
        (req(USER, THOUGHT, USER), "signature"),
        (req(USER, {"role": "assistant", "content": "prefill "}), "trailing whitespace"),
    ],
)  # fmt: skip
def test_validation_rules(body: dict[str, Any], reason: str) -> None:
    with pytest.raises(Refused) as caught:
        validate(json.loads(json.dumps(body)))
    assert reason in str(caught.value)


def test_valid_tool_round_trip_passes_validation() -> None:
    validate(
        {
            "model": MODEL,
            "max_tokens": 5,
            "tools": [WEATHER_TOOL],
            "messages": [
                *ask("x"),
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "t", "signature": "s"},
                        {"type": "tool_use", "id": "a", "name": "get_weather", "input": {}},
                        {"type": "tool_use", "id": "b", "name": "get_weather", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "b", "content": "1"},
                        {
                            "type": "tool_result",
                            "tool_use_id": "a",
                            "content": [{"type": "text", "text": "2"}],
                        },
                        {"type": "text", "text": "go on"},
                    ],
                },
                {"role": "assistant", "content": "Partial"},
            ],
        }
    )
    validate(  # an empty final assistant message is allowed
        {
            "model": MODEL,
            "max_tokens": 5,
            "messages": [*ask("x"), {"role": "assistant", "content": ""}],
        }
    )
