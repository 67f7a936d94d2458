"""`jp q` through the real anthropic SDK and the loopback fake, and offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.harness import NO_MARKERS, User, blocks, tool_use, user_texts, write_conversation
from tests.support.fake_messages import FakeMessages

# every test both ways: in process, and through the warm model process
pytestmark = pytest.mark.usefixtures("model_process")

NO_RETRIES = '[assistant]\nmax_retries = 0\n[assistant.model]\nid = "anthropic/claude-test"\n'

TOOLS = (
    NO_RETRIES
    + """
[conversation.tools.echo]
command = ["python3", "-c", "import sys, json; a = json.load(sys.stdin); print('ECHO:' + a['text'])"]
description = "Print the text back"
confirm = false
parameters = {type = "object", properties = {text = {type = "string"}}, required = ["text"]}

[conversation.tools.broken]
command = ["python3", "-c", "import sys; sys.stderr.write('BROKE-DOWN'); sys.exit(3)"]
confirm = false

[conversation.tools.asks_first]
command = ["python3", "-c", "print('SHOULD-NOT-RUN')"]
"""
)


def test_answer_streams_and_history_is_sent_in_order(online: User, fake: FakeMessages) -> None:
    fake.reply_text("Tabs, said the FAKE.", when={"last_user_contains": "tabs or spaces"})
    out = online.ok("q", "--new", "tabs or spaces?")
    assert out.strip() == "Tabs, said the FAKE."
    cid = online.active()
    fake.reply_text("Four.", when={"last_user_contains": "two plus two"})
    out = online.ok("q", "and", "two plus two?")  # words are joined
    assert "Four." in out
    first, second = fake.requests
    assert first["model"] == "claude-test" and first["stream"] is True
    assert user_texts(first) == ["tabs or spaces?"]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert user_texts(second) == ["tabs or spaces?", "and two plus two?"]
    assert blocks(second, "text")[1]["text"] == "Tabs, said the FAKE."
    sent = fake.headers[0]
    assert "test-key" in (sent.get("x-api-key", ""), sent.get("authorization", "").split()[-1])
    kinds = online.kinds(cid)
    assert kinds == ["conversation_start"] + ["turn_start", "chat_request", "chat_response"] * 2
    log = online.git("log", "--format=%s", online.tip(cid))
    assert "user: and two plus two?" in log and "assistant: Four." in log
    everything = online.git("log", "-p", "--all") + online.git("config", "--list")
    assert "test-key" not in everything, "the API key reached the store"
    assert online.show(cid)["turns"] == 2


def test_model_flag_records_a_config_delta_and_json_output(
    online: User, fake: FakeMessages
) -> None:
    cid = online.import_(NO_MARKERS)
    online.ok("conversation", "use", cid)
    fake.reply_text("Other model.", when={"last_user_contains": "second"})
    data = json.loads(
        online.ok("--format", "json", "q", "--model", "anthropic/claude-other", "second")
    )
    assert data["id"] == cid and data["model"] == "anthropic/claude-other"
    kinds = [e["type"] for e in data["events"]]
    assert kinds == ["config_delta", "turn_start", "chat_request", "chat_response"]
    assert data["events"][-1]["message"] == "Other model."
    assert fake.requests[-1]["model"] == "claude-other"
    deltas = [e for e in online.events(cid) if e["type"] == "config_delta"]
    assert [d["delta"] for d in deltas] == [{"assistant": {"model": {"id": "anthropic/claude-other"}}}]
    # the recorded model stays in force without the flag
    fake.reply_text("Still other.", when={"last_user_contains": "third"})
    online.ok("q", "third")
    assert fake.requests[-1]["model"] == "claude-other"
    assert len([k for k in online.kinds(cid) if k == "config_delta"]) == 1


def test_request_is_committed_before_the_model_is_called(online: User, fake: FakeMessages) -> None:
    online.config(NO_RETRIES)
    fake.reply_error(401, "authentication_error", "invalid x-api-key")
    proc = online.fail("q", "--new", "my PRECIOUS-PLAN for the release")
    assert "401" in proc.stderr or "authentication" in proc.stderr
    assert "check ANTHROPIC_API_KEY, then `jp q --retry` asks again" in proc.stderr
    assert "PRECIOUS-PLAN" in online.git("log", "-p", "--all")
    cid = online.active()
    fake.reply_error(500, "api_error", "the fake is failing")
    proc = online.fail("q", "second SAVED-TOO")
    assert "`jp q --retry` asks again (the request is saved)" in proc.stderr
    assert len(fake.requests) == 2, "max_retries = 0 makes one attempt"
    fake.reply_drop_mid_stream("This answer is cut off somewhere in the middle")
    proc = online.fail("q", "third")
    assert "This answer" in proc.stdout, "streamed text was shown"
    events = online.events(cid)
    requests = [e["content"] for e in events if e["type"] == "chat_request"]
    assert requests == ["my PRECIOUS-PLAN for the release", "second SAVED-TOO", "third"]
    partial = events[-1]
    assert partial["type"] == "chat_response" and partial["message"].startswith("This answer")
    online.fsck()
    # the conversation went on: the unanswered requests were sent as history
    assert user_texts(fake.requests[-1]) == [
        "my PRECIOUS-PLAN for the release",
        "second SAVED-TOO",
        "third",
    ]


def test_tool_loop_with_command_tools(online: User, fake: FakeMessages) -> None:
    online.config(TOOLS)
    fake.reply_blocks(
        [
            {"type": "text", "text": "Let me run the tools."},
            tool_use("echo", text="hello tool"),
            tool_use("broken"),
            tool_use("asks_first"),
        ],
        when={"last_user_contains": "use the tools"},
    )
    fake.reply_text("All three answered.", when={"last_user_contains": "ECHO:hello tool"})
    proc = online.run("q", "--new", "use the tools")
    assert proc.returncode == 0, proc.stderr
    assert "All three answered." in proc.stdout
    first, second = fake.requests
    assert sorted(t["name"] for t in first["tools"]) == ["asks_first", "broken", "echo"]
    echo = next(t for t in first["tools"] if t["name"] == "echo")
    assert echo["input_schema"]["properties"] == {"text": {"type": "string"}}
    calls = {b["id"]: b["name"] for b in blocks(second, "tool_use")}
    results = {calls[b["tool_use_id"]]: b for b in blocks(second, "tool_result")}
    assert set(results) == {"echo", "broken", "asks_first"}
    assert results["echo"]["content"].strip() == "ECHO:hello tool"
    assert not results["echo"].get("is_error")
    assert results["broken"]["is_error"] is True and "BROKE-DOWN" in results["broken"]["content"]
    assert results["asks_first"]["is_error"] is True
    assert "SHOULD-NOT-RUN" not in json.dumps(second), "a tool needing approval ran unasked"
    cid = online.active()
    events = online.events(cid)
    stored = [(e["type"], e.get("name"), e.get("is_error")) for e in events[3:]]
    assert stored == [
        ("chat_response", None, None),
        ("tool_call_request", "echo", None),
        ("tool_call_request", "broken", None),
        ("tool_call_request", "asks_first", None),
        ("tool_call_response", None, False),
        ("tool_call_response", None, True),
        ("tool_call_response", None, True),
        ("chat_response", None, None),
    ]
    assert online.show(cid)["turns"] == 1


def test_tool_result_subjects_name_the_tool(user: User, tmp_path: Path) -> None:
    # offline: a review's `propose_compaction` call is a tool call of a query
    source = user.import_(write_conversation(tmp_path / "17800000501-five", 5))
    user.ok("conversation", "use", source)
    user.ok("conversation", "compact", "--interactive")
    user.ok("q", "turns 2-3")
    subjects = user.git("log", "-3", "--format=%s", user.tip(user.active())).splitlines()
    assert "tool propose_compaction: ok" in subjects, subjects


def test_no_persist_writes_nothing(online: User, fake: FakeMessages) -> None:
    cid = online.import_(NO_MARKERS)
    online.ok("conversation", "use", cid)
    before = online.refs()
    state = (online.store / "jp" / "state.json").read_text()
    fake.reply_text("Ephemeral answer.", when={"last_user_contains": "just asking"})
    out = online.ok("q", "--no-persist", "just asking")
    assert "Ephemeral answer." in out
    sent = user_texts(fake.requests[-1])
    assert sent[0].startswith("Our GitHub Actions cache") and sent[-1] == "just asking"
    assert online.refs() == before
    assert "just asking" not in online.git("log", "-p", "--all")
    assert (online.store / "jp" / "state.json").read_text() == state, "activation recorded"


def test_no_persist_with_new_writes_nothing(user: User) -> None:
    user.ok("q", "--new", "a kept conversation")
    before = user.refs()
    head = user.git("symbolic-ref", "JP_HEAD").strip()
    user.ok("q", "--new", "--no-persist", "a throwaway question")
    assert user.refs() == before
    assert user.git("symbolic-ref", "JP_HEAD").strip() == head


def test_offline_model_without_a_key(user: User) -> None:
    assert not any(k.startswith("ANTHROPIC") for k in user.env)
    proc = user.run("q", "--new", "hello", "offline")
    assert proc.returncode == 0, proc.stderr
    assert "offline" in proc.stderr and "ANTHROPIC_API_KEY" in proc.stderr, "a one-line notice"
    assert "not a language model" in proc.stdout
    assert "hello offline" in proc.stderr, "the explanation quotes the request, on stderr"
    assert "ANTHROPIC_API_KEY" not in proc.stdout, "the how-to is no part of the stored answer"
    cid = user.active()
    events = user.events(cid)
    assert [e["type"] for e in events] == [
        "conversation_start",
        "turn_start",
        "chat_request",
        "chat_response",
    ]
    assert "not a language model" in events[-1]["message"]
    assert "hello offline" not in events[-1]["message"], "boilerplate is not stored history"
    # stdin is read when no words are given
    proc = user.run("q", input="from standard input\n")
    assert proc.returncode == 0 and "from standard input" in proc.stderr
    assert user.show(cid)["turns"] == 2
    assert user.fail("q", "  ").returncode == 2


def test_invalid_configuration_names_the_file_and_writes_nothing(user: User) -> None:
    user.ok("q", "--new", "before the config broke")
    before = user.refs()
    user.config("[assistant\nmodel = 3\n")
    proc = user.fail("q", "after")
    assert str(user.config_file) in proc.stderr and "line 1" in proc.stderr
    user.config('[assistant.model]\nid = "no-slash"\n')
    proc = user.fail("q", "after")
    assert str(user.config_file) in proc.stderr and "assistant.model.id" in proc.stderr
    user.config("[assistant.model]\nidd = 'x'\n")
    proc = user.fail("q", "after")
    assert "assistant.model.idd" in proc.stderr
    user.config("")
    extra = user.root / "extra.toml"
    extra.write_text("[conversation]\ncolour = 1\n")
    proc = user.fail("-c", str(extra), "q", "after")
    assert str(extra) in proc.stderr
    proc = user.fail("-c", str(user.root / "missing.toml"), "q", "after")
    assert "missing.toml" in proc.stderr
    proc = user.fail("--cfg", "assistant.nope=1", "q", "after")
    assert "--cfg" in proc.stderr and "assistant.nope" in proc.stderr
    assert user.refs() == before
    assert "after" not in user.git("log", "-p", "--all")


def test_config_delta_only_when_the_configuration_differs(user: User) -> None:
    user.ok("q", "--new", "one")
    cid = user.active()
    user.ok("--cfg", "assistant.instructions=Answer like a pirate", "q", "two")
    user.ok("--cfg", "assistant.instructions=Answer like a pirate", "q", "three")
    data = json.loads(user.ok("--format", "json", "q", "--model", "offline/second", "four"))
    assert data["model"] == "offline/second"
    deltas = [e["delta"] for e in user.events(cid) if e["type"] == "config_delta"]
    assert deltas == [
        {"assistant": {"instructions": "Answer like a pirate"}},
        {"assistant": {"model": {"id": "offline/second"}}},
    ]
    subjects = user.git("log", "--format=%s", user.tip(cid))
    assert "config: assistant.instructions" in subjects
    assert "config: assistant.model.id" in subjects


def test_show_says_whether_tokens_are_estimated_or_counted(
    online: User, fake: FakeMessages
) -> None:
    fake.reply_text("An answer of some length. " * 20)
    online.ok("q", "--new", "count me")
    estimated = online.show()["tokens"]
    assert estimated["estimated"] is True and estimated["counted_by"] is None
    assert estimated["tokens"] > 0 and fake.count_requests == [], "show alone counts nothing"
    assert f"~{estimated['tokens']:,} (estimated)" in online.ok("conversation", "show")
    out = online.ok("conversation", "show", "--count-tokens")
    assert len(fake.count_requests) == 1
    counted = online.show()["tokens"]
    assert counted["counted_by"] == "anthropic" and counted["estimated"] is False
    assert f"Tokens:       {counted['tokens']:,} (counted by anthropic)" in out
    assert len(fake.count_requests) == 1, "the count is kept for this tip"
    fake.reply_text("More.")
    online.ok("q", "and more")
    assert online.show()["tokens"]["estimated"] is True, "a new tip has no count yet"
