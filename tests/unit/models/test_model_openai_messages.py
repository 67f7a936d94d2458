"""jp events → Chat Completions ``messages``: one test per rule, each request also
checked by the fake's validator (the rules the real API enforces)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from porcelain.models import ModelRequest, ToolSpec
from porcelain.models.catalog import BUILTIN
from porcelain.models.messages import CONTINUE, INTERRUPTED, OPENING
from porcelain.models.openai_messages import REASONING_META, call_id, to_chat_messages
from porcelain.models.openai_model import build_params
from tests.support.fake_chat import Refused, validate

from .test_model_messages import call, req, result, say, think

T = "2026-01-05T09:00:00.000000Z"
TOOL = ToolSpec("fs_read_file", "Read a file", {"type": "object", "properties": {}})


def body(
    events: list[dict[str, Any]], tools: bool = True, system: str = "be brief"
) -> dict[str, Any]:
    request = ModelRequest("openai/gpt-test", system, events, [TOOL] if tools else [])
    params = build_params(request)
    validate(params)  # the fake refuses what the API refuses
    return params


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def test_a_plain_history_alternates_after_the_system_message() -> None:
    sent = body([req("one"), say("two"), req("three")])["messages"]
    assert roles(sent) == ["system", "user", "assistant", "user"]
    assert [m["content"] for m in sent] == ["be brief", "one", "two", "three"]


def test_consecutive_texts_of_one_role_are_joined() -> None:
    sent = body([req("a"), req("b"), say("c"), say("d"), req("e")])["messages"]
    assert roles(sent) == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "a\n\nb" and sent[2]["content"] == "c\n\nd"


def test_an_assistant_opening_and_an_assistant_tail_get_a_user_text() -> None:
    sent = body([say("hello")], system="")["messages"]
    assert sent == [
        {"role": "user", "content": OPENING},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": CONTINUE},
    ]


def test_each_call_is_answered_by_one_tool_message_right_after() -> None:
    events = [
        req("read"),
        say("Reading."),
        call("toolu_1", path="a"),
        call("toolu_2"),
        result("toolu_2", "second"),
        result("toolu_1", "first"),
        say("Done."),
        req("next"),
    ]
    sent = body(events)["messages"]
    assert roles(sent) == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    calls = sent[2]["tool_calls"]
    assert sent[2]["content"] == "Reading."
    assert [c["id"] for c in calls] == ["toolu_1", "toolu_2"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "a"}
    assert [(m["tool_call_id"], m["content"]) for m in sent[3:5]] == [
        ("toolu_2", "second"),
        ("toolu_1", "first"),
    ]


def test_a_call_without_a_result_gets_an_interrupted_one_and_a_stray_result_is_dropped() -> None:
    events = [req("go"), call("toolu_1"), req("what happened?"), result("toolu_9", "stray")]
    sent = body(events)["messages"]
    assert roles(sent) == ["system", "user", "assistant", "tool", "user"]
    assert sent[3] == {"role": "tool", "tool_call_id": "toolu_1", "content": INTERRUPTED}


def test_an_empty_result_still_has_content() -> None:
    sent = body([req("go"), call("toolu_1"), result("toolu_1", "")])["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["content"] == "(no output)"


def test_long_or_odd_ids_and_names_are_mapped_to_ones_the_api_takes() -> None:
    raw = "toolu_" + "x" * 60 + "/weird"
    events = [req("go"), call(raw, name="fs.read file"), result(raw, "ok")]
    sent = body(events)["messages"]
    entry = sent[2]["tool_calls"][0]
    assert len(entry["id"]) <= 40 and entry["id"] == call_id(raw) == sent[3]["tool_call_id"]
    assert entry["function"]["name"] == "fs_read_file"


def test_without_tools_calls_and_results_are_text() -> None:
    events = [req("go"), call("toolu_1", path="a"), result("toolu_1", "content"), say("ok")]
    sent = body(events, tools=False)
    assert "tools" not in sent
    assert all("tool_calls" not in m and m["role"] != "tool" for m in sent["messages"])
    text = json.dumps(sent["messages"])
    assert "[tool call fs_read_file" in text and "content" in text


def test_reasoning_goes_back_only_to_the_provider_that_wrote_it() -> None:
    mine = {
        "timestamp": T,
        "type": "chat_response",
        "reasoning": "my thoughts",
        "metadata": {REASONING_META: {"provider": "local", "field": "reasoning_content"}},
    }
    events = [req("q"), think("claude's thoughts"), mine, say("answer"), req("more")]
    to_local = to_chat_messages(events, provider="local")
    assert to_local[1]["role"] == "assistant"
    assert to_local[1]["reasoning_content"] == "my thoughts"
    assert "claude's thoughts" not in json.dumps(to_local)
    assert "reasoning_content" not in json.dumps(to_chat_messages(events, provider="openai"))


def test_the_tools_are_functions_and_the_limit_key_fits_the_provider() -> None:
    sent = body([req("q")])
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "fs_read_file",
                "description": "Read a file",
                "parameters": TOOL.input_schema,
            },
        }
    ]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert "max_completion_tokens" in sent
    local = build_params(ModelRequest("ollama/qwen", "", [req("q")]), BUILTIN["ollama"])
    assert "max_tokens" in local and "max_completion_tokens" not in local


@pytest.mark.parametrize(
    "broken",
    [
        [
            {"role": "user", "content": "a"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "user", "content": "b"},
        ],
        [{"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "c1", "content": "x"}],
        [{"role": "robot", "content": "a"}],
    ],
)
def test_the_fake_refuses_what_the_api_refuses(broken: list[dict[str, Any]]) -> None:
    with pytest.raises(Refused):
        validate({"model": "m", "messages": broken})
    with pytest.raises(Refused):
        validate({"model": "m", "messages": [{"role": "user", "content": "a"}], "reasoning": 1})
