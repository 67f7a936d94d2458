"""jp events → Messages API ``messages``: one test per rule, on realistic histories."""

from __future__ import annotations

from typing import Any

from porcelain.models.messages import (
    CONTINUE,
    INTERRUPTED,
    OPENING,
    system_blocks,
    to_messages,
)

T = "2026-01-05T09:00:00.000000Z"


def req(text: str) -> dict[str, Any]:
    return {"timestamp": T, "type": "chat_request", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"timestamp": T, "type": "chat_response", "message": text}


def think(text: str, sig: str | None = "c2lnbmF0dXJl") -> dict[str, Any]:
    event: dict[str, Any] = {"timestamp": T, "type": "chat_response", "reasoning": text}
    if sig:
        event["metadata"] = {"anthropic_thinking_signature": sig}
    return event


def call(cid: str, name: str = "fs_read_file", **args: Any) -> dict[str, Any]:
    return {"timestamp": T, "type": "tool_call_request", "id": cid, "name": name, "arguments": args}


def result(cid: str, content: str = "ok", is_error: bool = False) -> dict[str, Any]:
    return {
        "timestamp": T,
        "type": "tool_call_response",
        "id": cid,
        "content": content,
        "is_error": is_error,
    }


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def kinds(message: dict[str, Any]) -> list[str]:
    return [b["type"] for b in message["content"]]


def assert_valid(messages: list[dict[str, Any]]) -> None:
    """The structural rules the API enforces."""
    assert messages[0]["role"] == "user"
    assert messages[-1]["role"] == "user"
    for a, b in zip(messages, messages[1:], strict=False):
        assert a["role"] != b["role"]
    pending: set[str] = set()
    for m in messages:
        blocks = m["content"]
        assert blocks
        for block in blocks:
            if block["type"] == "text":
                assert block["text"].strip()
        if m["role"] == "user":
            ids = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
            assert set(ids) == pending
            n = len(ids)
            assert all(b["type"] == "tool_result" for b in blocks[:n])
            pending = set()
        else:
            assert not pending
            pending = {b["id"] for b in blocks if b["type"] == "tool_use"}


def test_a_turn_with_reasoning_tools_and_an_answer() -> None:
    events = [
        req("Why is the date missing from the version string?"),
        think("Let me look at build.rs."),
        say("I'll read the build script."),
        call("toolu_01", path="crates/jp_cli/build.rs"),
        result("toolu_01", "fn main() { ... }"),
        say("The build script never sets JP_BUILD_DATE."),
        req("Fix it please."),
    ]
    messages = to_messages(events)
    assert_valid(messages)
    assert roles(messages) == ["user", "assistant", "user", "assistant", "user"]
    assert kinds(messages[1]) == ["text", "tool_use"]  # reasoning left out: thinking is off
    assert messages[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "fs_read_file",
        "input": {"path": "crates/jp_cli/build.rs"},
    }
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "fn main() { ... }"}
    ]
    assert messages[4]["content"] == [{"type": "text", "text": "Fix it please."}]


def test_signed_reasoning_becomes_thinking_only_when_enabled() -> None:
    events = [req("q"), think("pondering", "U0lH"), say("answer"), req("next")]
    on = to_messages(events, thinking=True)
    assert on[1]["content"][0] == {"type": "thinking", "thinking": "pondering", "signature": "U0lH"}
    off = to_messages(events, thinking=False)
    assert kinds(off[1]) == ["text"]


def test_unsigned_reasoning_is_never_sent() -> None:
    events = [req("q"), think("no signature here", None), say("answer"), req("next")]
    assert kinds(to_messages(events, thinking=True)[1]) == ["text"]


def test_tool_error_results_carry_is_error() -> None:
    events = [req("read it"), call("t1"), result("t1", "no such file", is_error=True), req("hm")]
    messages = to_messages(events)
    assert messages[2]["content"][0]["is_error"] is True
    assert_valid(messages)


def test_consecutive_same_role_content_is_merged() -> None:
    events = [req("first"), req("second"), say("one"), say("two"), req("third")]
    messages = to_messages(events)
    assert roles(messages) == ["user", "assistant", "user"]
    assert [b["text"] for b in messages[0]["content"]] == ["first", "second"]
    assert [b["text"] for b in messages[1]["content"]] == ["one", "two"]


def test_parallel_calls_share_one_user_message_of_results() -> None:
    events = [req("read both"), call("a"), call("b"), result("a"), result("b")]
    events += [say("done"), req("k")]
    messages = to_messages(events)
    assert_valid(messages)
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["a", "b"]


def test_a_call_without_result_gets_a_synthetic_error() -> None:
    events = [req("run the tests"), call("t1", name="run", cmd="pytest"), req("never mind")]
    messages = to_messages(events)
    assert_valid(messages)
    first = messages[2]["content"][0]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": INTERRUPTED,
        "is_error": True,
    }
    assert messages[2]["content"][1]["text"] == "never mind"


def test_one_answered_one_interrupted_before_the_next_answer() -> None:
    events = [req("x"), call("a"), call("b"), result("a"), say("carrying on"), req("y")]
    messages = to_messages(events)
    assert_valid(messages)
    results = {b["tool_use_id"]: b.get("content") for b in messages[2]["content"]}
    assert results == {"a": "ok", "b": INTERRUPTED}


def test_a_trailing_call_is_closed_too() -> None:
    messages = to_messages([req("x"), call("a")])
    assert_valid(messages)
    assert messages[-1]["content"][0]["content"] == INTERRUPTED


def test_a_result_without_its_call_is_dropped() -> None:
    events = [req("x"), result("ghost", "orphan"), say("answer"), req("y")]
    messages = to_messages(events)
    assert_valid(messages)
    assert "orphan" not in str(messages)


def test_a_result_after_its_call_was_closed_is_dropped() -> None:
    events = [req("x"), call("a"), req("interrupt"), say("sure"), result("a", "late"), req("y")]
    messages = to_messages(events)
    assert_valid(messages)
    assert "late" not in str(messages)


def test_results_come_before_user_text_in_one_message() -> None:
    events = [req("x"), call("a"), req("also this"), result("a", "body"), say("ok"), req("y")]
    messages = to_messages(events)
    assert_valid(messages)
    assert kinds(messages[2]) == ["tool_result", "text"]


def test_empty_text_is_never_sent() -> None:
    events = [req("hello"), say(""), say("   "), req(""), say("real answer"), req("more")]
    messages = to_messages(events)
    assert_valid(messages)
    assert [b["text"] for b in messages[1]["content"]] == ["real answer"]


def test_history_opening_with_assistant_gets_a_user_opening() -> None:
    events = [say("Summary of earlier turns: we chose sqlite."), req("and now?")]
    messages = to_messages(events)
    assert_valid(messages)
    assert messages[0]["content"] == [{"type": "text", "text": OPENING}]


def test_history_ending_with_assistant_gets_a_user_tail() -> None:
    messages = to_messages([req("q"), say("a")])
    assert_valid(messages)
    assert messages[-1]["content"] == [{"type": "text", "text": CONTINUE}]


def test_empty_history_is_still_a_valid_request() -> None:
    messages = to_messages([])
    assert_valid(messages)


def test_structured_data_is_sent_as_json_text() -> None:
    data = {"timestamp": T, "type": "chat_response", "data": {"titles": ["a", "b"]}}
    messages = to_messages([req("titles?"), data, req("ok")])
    assert messages[1]["content"][0]["text"] == '{"titles": ["a", "b"]}'


def test_other_kinds_are_ignored() -> None:
    events = [
        {"timestamp": T, "type": "turn_start"},
        req("q"),
        {"timestamp": T, "type": "inquiry_request", "id": "i", "source": {}, "question": {}},
        say("a"),
        {"timestamp": T, "type": "config_delta", "delta": {}},
        req("r"),
    ]
    assert roles(to_messages(events)) == ["user", "assistant", "user"]


def test_without_tools_calls_and_results_become_text() -> None:
    events = [
        req("[turn 2] read src/app.py"),
        call("toolu_9", path="src/app.py"),
        result("toolu_9", "print('hi')"),
        say("It prints hi."),
        req("Summarize the conversation above."),
    ]
    messages = to_messages(events, tools=False)
    assert_valid(messages)
    every = [b["type"] for m in messages for b in m["content"]]
    assert set(every) == {"text"}
    text = str(messages)
    assert "src/app.py" in text and "print('hi')" in text and "fs_read_file" in text


def test_odd_tool_ids_are_made_acceptable_consistently() -> None:
    events = [req("x"), call("call:1/a"), result("call:1/a"), say("y"), req("z")]
    messages = to_messages(events)
    assert_valid(messages)
    assert messages[1]["content"][0]["id"] == "call_1_a"
    assert messages[2]["content"][0]["tool_use_id"] == "call_1_a"


def test_cache_marks_the_second_to_last_user_message() -> None:
    events = [req("[turn 1] a"), say("b"), req("[turn 2] c"), call("t"), result("t"), req("now")]
    messages = to_messages(events, cache=True)
    marked = [
        (i, j)
        for i, m in enumerate(messages)
        for j, b in enumerate(m["content"])
        if "cache_control" in b
    ]
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    assert marked == [(users[-2], len(messages[users[-2]]["content"]) - 1)]
    assert messages[users[-2]]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_cache_needs_two_user_messages_and_can_be_off() -> None:
    assert "cache_control" not in str(to_messages([req("only")], cache=True))
    assert "cache_control" not in str(to_messages([req("a"), say("b"), req("c")], cache=False))


def test_events_are_not_modified() -> None:
    events = [req("a"), say("b"), req("c"), say("d"), req("e")]
    before = repr(events)
    to_messages(events, cache=True)
    assert repr(events) == before


def test_system_blocks() -> None:
    assert system_blocks("", cache=True) == []
    assert system_blocks("Be brief.", cache=False) == [{"type": "text", "text": "Be brief."}]
    cached = system_blocks("Be brief.", cache=True)
    assert cached[0]["cache_control"] == {"type": "ephemeral"}
