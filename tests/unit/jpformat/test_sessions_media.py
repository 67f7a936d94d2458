"""What the model is sent from an imported Claude Code session: a prompt's images as
images (never base64 text), a tool result's images as images too, a background
task's notification as a request; and a tool result cut twice names its true size once."""

from __future__ import annotations

import base64
import json

from gitstore import Limits
from gitstore.events import canonical_json
from porcelain.app.query.cutnote import fit_result
from porcelain.jpformat.claude_code import map_records
from porcelain.models.messages import to_messages
from porcelain.models.openai_messages import to_chat_messages

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
DATA = base64.b64encode(PNG).decode()
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": DATA}}


def rec(kind: str, uuid: str, content: object, **extra: object) -> dict[str, object]:
    role = "user" if kind == "user" else "assistant"
    return {"type": kind, "uuid": uuid, "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": role, "content": content}, **extra}  # fmt: skip


def events(*records: dict[str, object]) -> list[dict[str, object]]:
    return [e for g in map_records(list(records)).groups for e in g]


def test_a_prompts_image_is_an_image_block_and_never_base64_text() -> None:
    found = events(
        rec("user", "u1", [{"type": "text", "text": "what is this?"}, IMAGE]),
        rec("assistant", "a1", [{"type": "text", "text": "a picture"}]),
    )
    messages = to_messages(found)
    blocks = [b for m in messages for b in m["content"] if isinstance(b, dict)]
    assert any(b["type"] == "image" and b["source"]["data"] == DATA for b in blocks)
    texts = " ".join(b.get("text", "") for b in blocks)
    assert DATA[:100] not in texts and "image/png" in texts
    chat = json.dumps(to_chat_messages(found, provider="openai"))
    assert f"data:image/png;base64,{DATA}" in chat


def test_an_image_alone_is_a_prompt() -> None:
    found = events(rec("user", "u1", [IMAGE]))
    (request,) = [e for e in found if e["type"] == "chat_request"]
    assert request["attachments"][0]["size"] == len(PNG)


def shot(
    *images: dict[str, object], prompt: object = "look at the screen"
) -> list[dict[str, object]]:
    return events(
        rec("user", "u0", prompt),
        rec("assistant", "a0", [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]),
        rec("user", "u1", [{"type": "tool_result", "tool_use_id": "t1",
                            "content": [{"type": "text", "text": "taken"}, *images]}]),
        rec("assistant", "a1", [{"type": "text", "text": "I see it"}]),
    )  # fmt: skip


def test_a_tool_results_image_is_sent_as_an_image_never_as_base64_text() -> None:
    found = shot(IMAGE)
    (result,) = [e for e in found if e["type"] == "tool_call_response"]
    assert DATA[:50] not in result["content"]
    assert f"image/png), {len(PNG):,} bytes" in result["content"]
    assert result["metadata"]["attachments"][0]["data"] == DATA
    messages = to_messages(found)
    (block,) = [b for m in messages for b in m["content"] if b.get("type") == "tool_result"]
    assert [b["type"] for b in block["content"]] == ["text", "image"]
    assert block["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": DATA,
    }
    chat = to_chat_messages(found, provider="openai")
    roles = [m["role"] for m in chat]
    assert roles[:5] == ["user", "assistant", "tool", "user", "assistant"], roles
    assert DATA not in json.dumps(chat[2])  # the tool message: text only
    parts = chat[3]["content"]
    assert parts[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}}


def test_a_tool_results_images_share_the_turns_budget_with_its_prompt() -> None:
    from porcelain.jpformat.sessionmap import IMAGE_BUDGET

    big = b"\x89PNG\r\n\x1a\n" + bytes(IMAGE_BUDGET - len(PNG) - 8)
    large = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
             "data": base64.b64encode(big).decode()}}  # fmt: skip
    found = shot(IMAGE, IMAGE, prompt=[{"type": "text", "text": "look"}, large])
    (result,) = [e for e in found if e["type"] == "tool_call_response"]
    assert len(result["metadata"]["attachments"]) == 1, "over the turn's budget"
    assert "too large to send again" in result["content"]
    again = shot(IMAGE, IMAGE)
    (result,) = [e for e in again if e["type"] == "tool_call_response"]
    assert len(result["metadata"]["attachments"]) == 2


def test_a_task_notification_is_sent() -> None:
    note = "<task-notification>\n<status>completed</status>\n</task-notification>"
    found = events(rec("user", "u1", "go"), rec("user", "u2", note))
    assert note in [e.get("content") for e in found if e["type"] == "chat_request"]


def test_a_result_cut_twice_names_its_true_size_once() -> None:
    first = "x" * 300_000 + "\n[jp: the output was 16234567 bytes; only the first 300000 were kept]"
    event = {"type": "tool_call_response", "timestamp": "2026-01-01T00:00:00Z", "id": "t",
             "content": first, "is_error": False}  # fmt: skip
    limits = Limits(max_event_bytes=100_000)
    out = fit_result(event, limits)
    assert len(canonical_json(out)) <= 100_000
    assert out["content"].count("[jp:") == 1
    assert "the output was 16,234,567 bytes; only the first 99," in out["content"]
    kept = out["content"].split("\n\n[jp:")[0].encode()
    assert f"only the first {len(kept):,} were kept" in out["content"]
    small = {**event, "content": "fits"}
    assert fit_result(small, limits) == small


# -- Codex rollouts ------------------------------------------------------------------

URL = f"data:image/png;base64,{DATA}"


def item(payload: dict[str, object], kind: str = "response_item") -> dict[str, object]:
    return {"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}


def codex_events(*records: dict[str, object]) -> list[dict[str, object]]:
    from porcelain.jpformat import codex

    return [e for g in codex.map_records(list(records)).groups for e in g]


def codex_shot(output: object) -> list[dict[str, object]]:
    return codex_events(
        item({"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "look at the screen"}]}),
        item({"type": "function_call", "name": "view_image", "arguments": "{}", "call_id": "c1"}),
        item({"type": "function_call_output", "call_id": "c1", "output": output}),
        item({"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "I see it"}]}),
    )  # fmt: skip


def test_a_codex_tool_outputs_image_is_sent_as_an_image_never_as_base64_text() -> None:
    found = codex_shot([{"type": "input_text", "text": "taken"},
                        {"type": "input_image", "image_url": URL, "detail": "high"}])  # fmt: skip
    (result,) = [e for e in found if e["type"] == "tool_call_response"]
    assert DATA[:50] not in result["content"] and result["content"].startswith("taken\n")
    assert f"image/png), {len(PNG):,} bytes" in result["content"]
    assert result["metadata"]["attachments"][0]["data"] == DATA
    (block,) = [
        b for m in to_messages(found) for b in m["content"] if b.get("type") == "tool_result"
    ]
    assert [b["type"] for b in block["content"]] == ["text", "image"]
    assert block["content"][1]["source"]["data"] == DATA
    chat = to_chat_messages(found, provider="openai")
    assert DATA not in json.dumps([m for m in chat if m["role"] == "tool"])
    assert URL in json.dumps([m for m in chat if m["role"] == "user"])


def test_a_codex_image_that_is_not_data_is_named_and_the_rest_is_kept() -> None:
    found = codex_shot([{"type": "input_image", "image_url": "https://example.invalid/a.png"},
                        {"type": "input_image", "file_id": "file_1"}])  # fmt: skip
    (result,) = [e for e in found if e["type"] == "tool_call_response"]
    assert result["content"].count("an image that could not be read") == 2
    assert "metadata" not in result or not result["metadata"].get("attachments")
    odd = codex_shot([{"type": "input_audio", "audio_url": "x"}])  # a kind jp does not map
    (result,) = [e for e in odd if e["type"] == "tool_call_response"]
    assert "input_audio" in result["content"]
    plain = codex_shot("just text")
    assert [e["content"] for e in plain if e["type"] == "tool_call_response"] == ["just text"]


def test_a_codex_prompts_images_are_sent_as_images_once() -> None:
    found = codex_events(
        item({"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": URL}, {"type": "input_text", "text": "what?"}]}),
        item({"type": "user_message", "message": "what?", "images": [URL]}, "event_msg"),
        item({"type": "user_message", "message": "", "images": [URL]}, "event_msg"),
    )  # fmt: skip
    requests = [e for e in found if e["type"] == "chat_request"]
    assert [r["content"] for r in requests] == ["what?", ""]  # the twin is one; an image alone
    assert all(r["attachments"][0]["data"] == DATA for r in requests)
    blocks = [b for m in to_messages(found) for b in m["content"] if isinstance(b, dict)]
    assert [b["type"] for b in blocks].count("image") == 2
    assert DATA[:100] not in json.dumps([b for b in blocks if b["type"] == "text"])
