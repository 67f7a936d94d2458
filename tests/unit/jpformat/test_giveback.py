"""The pure side of giving jp's turns back as a tool's records (no store, no jp)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gitstore import Kind
from porcelain.domain.sessionident import branch_cid, session_cid
from porcelain.jpformat import claude_code, codex, giveback
from porcelain.jpformat.sessionmap import records_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"
CLAUDE = next((FIXTURES / "claude-code").glob("*/*.jsonl"))
CODEX = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
CID = "jp-c17708040000-277aead4f6"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def start(tool: str | None, session: str = "s") -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": Kind.CONVERSATION_START.value,
        "timestamp": "2026-02-11T10:00:00.000000Z",
        "conversation_id": CID,
    }
    if tool:
        event["imported"] = {"format": tool, "session": session, "agent": None, "path": "p/x"}
    return event


def jp_turn(when: str, call: str = "call/1 bad") -> list[dict[str, Any]]:
    def at(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "timestamp": when, **fields}

    return [
        at("turn_start"),
        at("chat_request", content="JP prompt \x1b[2J"),
        at("chat_response", reasoning="unsigned thoughts"),
        at("chat_response", message="Running it."),
        at("tool_call_request", id=call, name="echo", arguments={"text": "x"}),
        at("tool_call_response", id=call, content="x", is_error=False),
        at("chat_response", message="Done."),
    ]


def said(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for e in events:
        if e["type"] == "chat_request":
            out.append(("request", e["content"]))
        elif e["type"] == "chat_response" and e.get("message"):
            out.append(("answer", e["message"]))
        elif e["type"] == "tool_call_request":
            out.append(("call", e["id"], e["name"], e["arguments"]))
        elif e["type"] == "tool_call_response":
            out.append(("result", e["id"], e["content"], e["is_error"]))
    return out


def imported(tool: str, path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    found = records(path)
    mapper = claude_code.map_records if tool == "claude-code" else codex.map_records
    groups = mapper(found).groups
    session = claude_code.identity(found)[0] if tool == "claude-code" else codex.session_of(found)
    return found, [start(tool, session or ""), *(e for g in groups for e in g)]


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_the_turns_come_back_as_the_same_turns(tool: str) -> None:
    found, events = imported(tool, CLAUDE if tool == "claude-code" else CODEX)
    events += jp_turn("2026-12-01T10:00:00.123456Z")
    context, pieces = giveback.plan(tool, CID, events, "/elsewhere")
    given = [p.record for p in pieces]
    assert given[: len(found)] == found, "a kept record changed"
    assert [p.jp for p in pieces].count(False) == len(found)
    mapper = claude_code.map_records if tool == "claude-code" else codex.map_records
    back = [e for g in mapper(given).groups for e in g]
    mine = said(jp_turn("x"))
    assert said(back)[-len(mine) :] == [
        (k, giveback.call_id(a), *rest) if k in ("call", "result") else (k, a, *rest)
        for k, a, *rest in mine
    ]
    assert "unsigned thoughts" not in json.dumps(given)
    assert giveback.plan(tool, CID, events, "/elsewhere")[1] == pieces, "not the same each time"
    assert not context.rename


def test_claude_records_chain_and_take_the_session_s_context() -> None:
    found, events = imported("claude-code", CLAUDE)
    events += jp_turn("2026-12-01T10:00:00.123456Z")
    given = [p.record for p in giveback.plan("claude-code", CID, events, "/x")[1]]
    mine = given[len(found) :]
    assert [r["type"] for r in mine] == ["user", "assistant", "user", "assistant"]
    last_uuid = [r["uuid"] for r in found if "uuid" in r][-1]
    last_message = [r["uuid"] for r in found if r["type"] in ("user", "assistant")][-1]
    assert found[-1]["uuid"] == last_uuid != last_message  # a type Claude Code does not load
    assert mine[0]["parentUuid"] == last_message, "the chain Claude Code follows is cut"
    assert all(b["parentUuid"] == a["uuid"] for a, b in zip(mine, mine[1:], strict=False))
    assert {r["cwd"] for r in mine} == {"/home/me/demo"} and mine[0]["gitBranch"] == "main"
    assert mine[0]["timestamp"] == "2026-12-01T10:00:00.123Z"
    use = mine[1]["message"]["content"][1]
    assert use["id"] == "call_1_bad" == mine[2]["message"]["content"][0]["tool_use_id"]


def test_a_conversation_of_its_own_takes_a_session_of_its_own() -> None:
    events = [start(None), *jp_turn("2026-12-01T10:00:00Z")]
    context, pieces = giveback.plan("claude-code", CID, events, "/home/me/work")
    assert context.session == giveback.given_session(CID) != giveback.given_session(CID + "x")
    assert {p.record["sessionId"] for p in pieces} == {context.session}
    assert pieces[0].record["parentUuid"] is None and pieces[0].record["cwd"] == "/home/me/work"
    _, rollout = giveback.plan("codex", CID, events, "/home/me/work")
    assert rollout[0].record["type"] == "session_meta"
    assert rollout[0].record["payload"]["id"] == context.session
    assert codex.session_of([p.record for p in rollout]) == context.session


def test_a_fork_renames_the_kept_records_session() -> None:
    found, events = imported("claude-code", CLAUDE)
    events += [start(None), *jp_turn("2026-12-01T10:00:00Z")]
    context, pieces = giveback.plan("claude-code", CID, events, "/x")
    assert context.rename and {p.record.get("sessionId") for p in pieces} - {None} == {
        context.session
    }
    assert records_of(events) == found, "the stored records are not touched"


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_hostile_ids_and_names_are_written_as_the_apis_take_them(tool: str) -> None:
    turn = jp_turn("2026-12-01T10:00:00Z", call="../\x1b[2J" + "x" * 200)
    turn[4]["name"] = "mcp.server/\x07tool"
    _, pieces = giveback.plan(tool, CID, [start(None), *turn], "/x")
    found = json.dumps([p.record for p in pieces])
    names = re.findall(r'"(?:id|tool_use_id|call_id|name)": "([^"]*)"', found)
    assert names and all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in names), names
    assert giveback.tool_name("mcp.server/\x07tool") == "mcp_server__tool"
    assert len(giveback.call_id("x" * 200)) == 64


def test_a_turn_start_dated_as_its_record_belongs_to_the_record() -> None:
    """One record can hold tool results and a prompt: its turn_start, dated by the
    record, is the record's, not a turn jp added."""
    record = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}
    when = "2026-02-11T10:00:00.000000Z"
    events = [
        start("claude-code"),
        {"type": "tool_call_response", "timestamp": when, "id": "c", "content": "",
         "is_error": False, "metadata": {"source_record": record}},
        {"type": "turn_start", "timestamp": when},
        {"type": "chat_request", "timestamp": when, "content": "hi"},
    ]  # fmt: skip
    assert giveback.split(events) == [(1, 3, record)]


def test_a_branch_id_is_made_from_its_divergence() -> None:
    when = "2026-02-11T10:00:00.000Z"
    a, b = {"uuid": "a"}, {"uuid": "b"}
    made = branch_cid("claude-code", "s", None, a, b, when)
    assert made == branch_cid("claude-code", "s", None, a, b, when)
    assert made != session_cid("claude-code", "s", None, when)
    others = {
        branch_cid("claude-code", "s", None, b, a, when),
        branch_cid("claude-code", "s", None, None, b, when),
        branch_cid("codex", "s", None, a, b, when),
        branch_cid("claude-code", "t", None, a, b, when),
        branch_cid("claude-code", "s", "agent", a, b, when),
    }
    assert made not in others and len(others) == 5
    assert branch_cid("claude-code", "s", None, {"x": "\ud800"}, b, when)  # a lone surrogate


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PDF = b"%PDF-1.4\n" + b"x" * 300


def media_turn(when: str) -> list[dict[str, Any]]:
    """A jp turn whose prompt holds an image, a PDF and a text file, and whose tool
    result holds an image (as an imported session's does)."""
    from porcelain.domain.media import media_attachment

    image = media_attachment("file", "shot.png", "image/png", PNG)
    pdf = media_attachment("file", "doc.pdf", "application/pdf", PDF)
    text = {"kind": "file", "source": "notes.txt", "content": "NOTES-TEXT"}
    return [
        {"type": "turn_start", "timestamp": when},
        {"type": "chat_request", "timestamp": when, "content": "What is this?",
         "attachments": [image, pdf, text]},
        {"type": "tool_call_request", "timestamp": when, "id": "c1", "name": "shot",
         "arguments": {}},
        {"type": "tool_call_response", "timestamp": when, "id": "c1", "content": "taken",
         "is_error": False, "metadata": {"attachments": [image]}},
        {"type": "chat_response", "timestamp": when, "message": "A picture."},
    ]  # fmt: skip


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_a_prompts_images_are_given_back_as_the_tools_images(tool: str) -> None:
    import base64

    from porcelain.domain.attachments import request_text

    data = base64.b64encode(PNG).decode()
    found, events = imported(tool, CLAUDE if tool == "claude-code" else CODEX)
    turn = media_turn("2026-12-01T10:00:00.123456Z")
    events += turn
    given = [p.record for p in giveback.plan(tool, CID, events, "/x")[1]][len(found) :]
    text = json.dumps(given)
    twice = tool == "codex"  # Codex writes a prompt's images in its item and its event
    assert text.count(data) == (3 if twice else 2), "the prompt's image and the result's"
    assert "NOTES-TEXT" in text, "a text attachment, framed as the model read it"
    if tool == "claude-code":
        prompt = given[0]["message"]["content"]
        assert [b["type"] for b in prompt] == ["image", "document", "text"]
        assert prompt[0]["source"] == {"type": "base64", "media_type": "image/png", "data": data}
        result = given[2]["message"]["content"][0]["content"]
        assert [b["type"] for b in result] == ["text", "image"]
    else:
        (message,) = [r for r in given if r["payload"].get("role") == "user"]
        assert [c["type"] for c in message["payload"]["content"]] == ["input_image", "input_text"]
        (event,) = [r for r in given if r["payload"].get("type") == "user_message"]
        assert event["payload"]["images"] == [f"data:image/png;base64,{data}"]
        (output,) = [r for r in given if r["payload"].get("type") == "function_call_output"]
        assert output["payload"]["output"][1]["image_url"].endswith(data)
    mapper = claude_code.map_records if tool == "claude-code" else codex.map_records
    back = [e for g in mapper([*found, *given]).groups for e in g]
    (request,) = [e for e in back if e.get("content") == request_text(turn[1])]
    assert request["attachments"][0]["data"] == data  # imported again: an image, not text
    (result,) = [e for e in back if e["type"] == "tool_call_response" and e["id"] == "c1"]
    assert result["metadata"]["attachments"][0]["data"] == data


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_a_record_of_jp_s_stays_within_the_line_jp_imports(tool: str) -> None:
    turn = media_turn("2026-12-01T10:00:00.123456Z")
    turn[1]["attachments"].append({"kind": "file", "source": "log", "content": "L" * 40_000})
    events = [start(None), *turn]
    pieces = giveback.plan(tool, CID, events, "/x", max_line=20_000 + giveback.RECORD_MARGIN)[1]
    lines = [json.dumps(p.record, ensure_ascii=False) for p in pieces]
    assert max(len(x.encode()) for x in lines) <= 20_000 + giveback.RECORD_MARGIN
    text = "\n".join(lines)
    assert "L" * 1000 not in text and "2 attached text files left out here" in text
    assert "What is this?" in text and "image/png" in text
    assert text.count("left out here, too large") == 0, "the image fits once the log is out"
    whole = giveback.plan(tool, CID, events, "/x")[1]
    assert "L" * 40_000 in json.dumps([p.record for p in whole]), "no limit: all of it"
