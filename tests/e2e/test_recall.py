"""`recall` end to end: a fact a summary dropped is read back by the model from
the raw turns, on the offline model and on the Anthropic and OpenAI fakes (the
real SDKs on loopback); errors, a review and the off switch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import User, blocks, request_text, tool_use, write_conversation
from tests.support.fake_chat import FakeChat
from tests.support.fake_messages import FakeMessages

FACT = "<<T04>>"  # turn 4's tool result: what the summary below leaves out
SUMMARY = "SUMMARY-3-5: files were read."
OPENAI = '[assistant]\nmax_retries = 0\n[assistant.model]\nid = "openai/gpt-test"\n'


def summarized(user: User, tmp_path: Path, summarizer: Any = None) -> str:
    """A nine-turn conversation whose turns 3-5 are replaced by a summary."""
    cid = user.import_(write_conversation(tmp_path / "17800000501-nine", 9))
    user.ok("conversation", "use", cid)
    if summarizer is not None:
        summarizer.reply_text(SUMMARY, when={"no_tools": True})
    proc = user.run("conversation", "compact", "--from", "3", "--to", "5", "--summarize")
    assert proc.returncode == 0, proc.stderr
    return cid


def tool_events(user: User, cid: str) -> list[dict[str, Any]]:
    return [e for e in user.events(cid) if e["type"].startswith("tool_call")]


def test_the_offline_model_recalls_a_range_and_answers_with_it(user: User, tmp_path: Path) -> None:
    cid = summarized(user, tmp_path)
    before = user.tip(cid)
    out = user.ok("q", "recall turns 3-5")
    assert FACT in out and "src/f04.rs" in out
    call, result = tool_events(user, cid)[-2:]
    assert call["name"] == "recall" and call["arguments"] == {"from_turn": 3, "to_turn": 5}
    assert FACT in result["content"] and result.get("is_error") is not True
    assert user.kinds(cid)[-1] == "chat_response" and FACT in user.events(cid)[-1]["message"]
    printed = user.ok("conversation", "print", cid)
    assert "recall" in printed, "the call is an ordinary tool event print shows"
    user.ok("undo")
    assert user.tip(cid) == before, "the recall turn is undone like any other"


def test_the_offline_model_searches_the_compacted_turns(user: User, tmp_path: Path) -> None:
    cid = summarized(user, tmp_path)
    out = user.ok("q", 'recall "f04"')
    assert "src/f04.rs" in out
    result = tool_events(user, cid)[-1]
    assert "matching 'f04'" in result["content"] and "<<Q03>>" not in result["content"]


def test_an_uncompacted_or_missing_range_is_an_error_result(user: User, tmp_path: Path) -> None:
    cid = summarized(user, tmp_path)
    proc = user.run("q", "recall turns 7-8")
    assert proc.returncode == 0, proc.stderr
    result = tool_events(user, cid)[-1]
    assert result["is_error"] is True and "turns 7-8 are not compacted" in result["content"]
    user.run("q", "recall turns 40-41")
    result = tool_events(user, cid)[-1]
    assert result["is_error"] is True and "turn 41 does not exist" in result["content"]
    assert "Traceback" not in proc.stderr


@pytest.mark.usefixtures("model_process")  # in process and through the warm model process
def test_a_fact_dropped_by_a_summary_is_recalled_on_anthropic(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    cid = summarized(online, tmp_path, fake)
    fake.reply_blocks(
        [tool_use("recall", from_turn=3, to_turn=5)], {"last_user_contains": "which file"}
    )
    fake.reply_text("It was src/f04.rs (<<T04>>).", {"last_user_contains": FACT})
    out = online.ok("q", "which file held the token?")
    assert FACT in out
    first, second = fake.requests[-2:]
    assert "recall" in [t["name"] for t in first["tools"]]
    sent = request_text(first)
    assert SUMMARY in sent and FACT not in sent, "the summary dropped the fact"
    assert "turns 3-5" in sent and "recall tool" in sent, "the summary block says so"
    result = blocks(second, "tool_result")[-1]
    assert FACT in json.dumps(result)
    call, response = tool_events(online, cid)[-2:]
    assert call["name"] == "recall" and FACT in response["content"]


def test_a_fact_dropped_by_a_summary_is_recalled_on_openai(user: User, tmp_path: Path) -> None:
    with FakeChat() as chat:
        user.env.update(chat.env())
        user.config(OPENAI)
        cid = summarized(user, tmp_path, chat)
        chat.reply_calls(
            [{"name": "recall", "arguments": {"query": "f04"}, "id": "call_r1"}],
            when={"last_user_contains": "which file"},
        )
        chat.reply_text("It was src/f04.rs.", when={"last_role": "tool"})
        out = user.ok("q", "which file was read in turn 4?")
        assert "src/f04.rs" in out
        first, second = chat.requests[-2:]
        assert "recall" in [t["function"]["name"] for t in first["tools"]]
        assert FACT not in json.dumps(first["messages"])
        answer = [m for m in second["messages"] if m["role"] == "tool"][-1]
        assert answer["tool_call_id"] == "call_r1" and "src/f04.rs" in answer["content"]
        assert tool_events(user, cid)[-1]["content"] == answer["content"]


def test_recall_is_not_offered_without_a_compaction(online: User, fake: FakeMessages) -> None:
    fake.reply_text("Plain.", {"last_user_contains": "hello"})
    online.ok("q", "--new", "hello")
    assert not fake.requests[-1].get("tools")


def test_recall_is_off_when_disabled_and_stays_off_in_the_conversation(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    summarized(online, tmp_path, fake)
    fake.reply_text("Off.", {"last_user_contains": "no recall"})
    online.ok("q", "--cfg", "conversation.compaction.recall.enable=false", "no recall")
    body = fake.requests[-1]
    assert not body.get("tools") and "can be read with the recall tool" not in request_text(body)
    # recorded in the conversation: the next query is off too
    fake.reply_text("Still off.", {"last_user_contains": "later"})
    online.ok("q", "later")
    assert not fake.requests[-1].get("tools")
    fake.reply_text("Tried.", {"last_user_contains": "back on"})
    proc = online.run("q", "--cfg", "conversation.compaction.recall.enable=true", "back on")
    assert proc.returncode == 0, proc.stderr
    assert fake.requests[-1].get("tools"), "the user's own --cfg turns it back on"


def test_recall_is_absent_in_a_review(online: User, fake: FakeMessages, tmp_path: Path) -> None:
    summarized(online, tmp_path, fake)
    fake.reply_text("DRAFT", when={"no_tools": True})
    online.ok("conversation", "compact", "--interactive", "--from", "6", "--to", "8")
    fake.reply_text("Noted.", {"tools_include": "propose_compaction"})
    online.ok("q", "what do you see?")
    names = [t["name"] for t in fake.requests[-1]["tools"]]
    assert names == ["propose_compaction"]
    assert "can be read with the recall tool" not in request_text(fake.requests[-1])


def test_an_imported_conversation_cannot_turn_recall_on_or_size_it(
    online: User, fake: FakeMessages, tmp_path: Path
) -> None:
    online.config(
        '[assistant.model]\nid = "anthropic/claude-test"\n'
        "[conversation.compaction.recall]\nenable = false\n"
    )
    folder = write_conversation(tmp_path / "17800000502-hostile", 9)
    entries = json.loads((folder / "events.json").read_text())
    hostile = {"recall": {"enable": True, "max_bytes": 10**9}}
    entries.append(
        {
            "type": "config_delta",
            "timestamp": "2026-02-01 11:00:00.5",
            "delta": {
                "conversation": {"compaction": hostile, "tools": {"recall": {"enable": True}}}
            },
            "metadata": {"written_by": "jp"},  # a label anyone can write
        }
    )
    (folder / "events.json").write_text(json.dumps(entries, indent=2) + "\n")
    cid = online.import_(folder)
    online.ok("conversation", "use", cid)
    fake.reply_text(SUMMARY, when={"no_tools": True})
    online.ok("conversation", "compact", "--from", "3", "--to", "5", "--summarize")
    fake.reply_text("No recall here.", {"last_user_contains": "anything"})
    online.ok("q", "anything to recall?")
    assert not fake.requests[-1].get("tools"), "the recorded delta turned recall on"
    ignored = {i["key"] for i in online.json("config", "show", "--conversation", cid)["ignored"]}
    assert {
        "conversation.compaction.recall.enable",
        "conversation.compaction.recall.max_bytes",
        "conversation.tools.recall.enable",
    } <= ignored
