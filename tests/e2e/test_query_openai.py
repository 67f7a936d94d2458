"""`jp q` on openai/* and OpenAI-compatible providers: the real `openai` SDK
against the loopback fake of the Chat Completions API, each test both in
process and through the warm model process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import User, write_conversation
from tests.support.fake_chat import FakeChat

pytestmark = pytest.mark.usefixtures("model_process")

OPENAI = '[assistant]\nmax_retries = 1\n[assistant.model]\nid = "openai/gpt-test"\n'
LOCAL_KEY = "local-secret-7f3e"


@pytest.fixture
def chat() -> Iterator[FakeChat]:
    with FakeChat() as server:
        yield server


@pytest.fixture
def openai_user(user: User, chat: FakeChat) -> User:
    user.env.update(chat.env())
    user.config(OPENAI)
    return user


def test_answers_stream_and_the_history_goes_back(openai_user: User, chat: FakeChat) -> None:
    chat.reply_text("FIRST answer.", when={"last_user_contains": "hello"})
    assert openai_user.ok("q", "--new", "hello").strip() == "FIRST answer."
    chat.reply_text("SECOND answer.", when={"last_user_contains": "again"})
    data = openai_user.json("q", "again")
    assert data["model"] == "openai/gpt-test"
    assert [e["type"] for e in data["events"]] == ["turn_start", "chat_request", "chat_response"]
    sent = chat.requests[-1]
    assert sent["model"] == "gpt-test" and sent["stream"] is True
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "user"]
    assert sent["messages"][2]["content"] == "FIRST answer."
    assert chat.headers[-1]["authorization"] == "Bearer test-openai-key"
    assert "test-openai-key" not in openai_user.git("log", "-p", "--all")


def test_a_provider_entry_and_an_alias(user: User, chat: FakeChat, tmp_path: Path) -> None:
    user.env.update({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "LOCAL_KEY": LOCAL_KEY})
    user.config(
        f'[assistant.model]\nid = "fast"\n[assistant.model.aliases]\nfast = "local/qwen-test"\n'
        f'other = "local/qwen-other"\n'
        f'[providers.local]\nkind = "openai"\nbase_url = "{chat.url}/v1"\napi_key_env = "LOCAL_KEY"\n'
    )
    chat.reply_text("LOCAL answer.", when={"model": "qwen-test"})
    assert "LOCAL answer." in user.ok("q", "--new", "hi")
    assert chat.headers[-1]["authorization"] == f"Bearer {LOCAL_KEY}"
    chat.reply_text("OTHER answer.", when={"model": "qwen-other"})
    assert "OTHER answer." in user.ok("q", "--model", "other", "and you?")
    cid = user.active()
    deltas = [e["delta"] for e in user.events(cid) if e["type"] == "config_delta"]
    assert deltas == [{"assistant": {"model": {"id": "local/qwen-other"}}}], "the id is recorded"
    assert LOCAL_KEY not in user.git("log", "-p", "--all")
    proc = user.fail("q", "--model", "nosuch", "x")
    assert "nosuch" in proc.stderr and "alias" in proc.stderr


TOOLS = OPENAI + """
[conversation.tools.show_env]
command = ["env"]
description = "Print the environment"
confirm = false
"""


def test_a_streamed_tool_call_runs_and_its_result_goes_back(
    openai_user: User, chat: FakeChat
) -> None:
    openai_user.config(TOOLS)
    openai_user.env["LOCAL_KEY"] = LOCAL_KEY
    arguments = {"why": "to see what a tool is given"}
    chat.reply_calls([{"name": "show_env", "arguments": arguments, "id": "call_env_1"}],
                     when={"last_role": "user"}, text="Checking.")
    chat.reply_text("Seen it.", when={"last_role": "tool"})
    proc = openai_user.run("q", "--new", "what do tools see?")
    assert proc.returncode == 0, proc.stderr
    assert "Seen it." in proc.stdout
    first, second = chat.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["show_env"]
    assistant = [m for m in second["messages"] if m.get("tool_calls")][0]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == arguments
    results = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["call_env_1"]
    assert "PATH=" in results[0]["content"]
    assert "OPENAI_API_KEY" not in results[0]["content"] and "test-openai-key" not in results[0]["content"]
    kinds = openai_user.kinds(openai_user.active())
    assert kinds[-4:] == ["chat_response", "tool_call_request", "tool_call_response", "chat_response"]


def test_a_review_on_openai(openai_user: User, chat: FakeChat, tmp_path: Path) -> None:
    source = openai_user.import_(write_conversation(tmp_path / "17800000601-five", 5))
    openai_user.ok("conversation", "use", source)
    chat.reply_text("DRAFT summary.", when={"no_tools": True})
    openai_user.ok("conversation", "compact", "--interactive", "--from", "1", "--to", "3")
    review = openai_user.active()
    assert review != source
    summarizer = chat.requests[0]
    assert summarizer["model"] == "gpt-test" and "tools" not in summarizer
    args = {"from_turn": 1, "to_turn": 2, "summary": "NEW summary."}
    chat.reply_calls([{"name": "propose_compaction", "arguments": args, "id": "call_p1"}],
                     when={"last_role": "user", "tools_include": "propose_compaction"})
    chat.reply_text("Recorded.", when={"last_role": "tool"})
    openai_user.ok("q", "only the first two")
    first, second = chat.requests[-2:]
    assert [t["function"]["name"] for t in first["tools"]] == ["propose_compaction"]
    answer = [m for m in second["messages"] if m["role"] == "tool" and m["tool_call_id"] == "call_p1"]
    assert len(answer) == 1
    proposal = openai_user.show(review)["proposal"]
    assert (proposal["from_turn"], proposal["to_turn"], proposal["summary"]) == (1, 2, "NEW summary.")
    openai_user.ok("conversation", "compact", "--continue", "--yes")
    compactions = openai_user.show(source)["compactions"]
    assert [(c["from_turn"], c["to_turn"]) for c in compactions] == [(1, 2)]


def test_a_server_error_is_one_line_and_the_request_is_kept(
    openai_user: User, chat: FakeChat
) -> None:
    chat.reply_error(500, "server_error", "EXPLODED", retry_after_ms=10, times=2)
    proc = openai_user.fail("q", "--new", "keep THIS request", code=4)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "500" in errors[0] and "EXPLODED" in errors[0]
    assert len(chat.requests) == 2, "max_retries = 1"
    assert "keep THIS request" in openai_user.git("log", "-p", "--all")
    chat.reply_text("Fine now.")
    assert "Fine now." in openai_user.ok("q", "again")


def test_precheck_refuses_before_anything_is_written(openai_user: User, chat: FakeChat) -> None:
    chat.reply_text("First.")
    openai_user.ok("q", "--new", "a first conversation")
    before = openai_user.refs()
    proc = openai_user.run("q", "x", drop=["OPENAI_API_KEY"])
    assert proc.returncode != 0 and "OPENAI_API_KEY" in proc.stderr
    proc = openai_user.fail("q", "--model", "nope/model", "x")
    assert "unknown model provider 'nope'" in proc.stderr
    openai_user.config('[providers.evil]\nkind = "openai"\n')
    proc = openai_user.fail("q", "--model", "evil/x", "x")
    assert "base_url" in proc.stderr
    assert openai_user.refs() == before and len(chat.requests) == 1
