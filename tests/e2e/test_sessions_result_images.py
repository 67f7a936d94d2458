"""An imported session's tool result image (Claude Code's, Codex's) reaches the model
as an image, inside its ``tool_result``, through the real SDK and the loopback fake
(never as base64 text)."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

from tests.e2e.harness import User
from tests.e2e.test_sessions_continuity import IMPORT, lines, mains, place
from tests.support.fake_messages import FakeMessages

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
DATA = base64.b64encode(PNG).decode()


def test_a_tool_results_screenshot_is_sent_as_an_image(
    user: User, fake: FakeMessages, tmp_path: Path
) -> None:
    last = json.loads(lines()[-1])
    base = {"sessionId": last["sessionId"], "cwd": "/home/me/demo"}
    shot = [
        {**base, "type": "user", "uuid": "s1", "parentUuid": last["uuid"],
         "timestamp": "2026-02-11T11:00:00.000Z",
         "message": {"role": "user", "content": "SHOT-PROMPT take a screenshot"}},
        {**base, "type": "assistant", "uuid": "s2", "parentUuid": "s1",
         "timestamp": "2026-02-11T11:00:01.000Z",
         "message": {"id": "msg_s", "role": "assistant", "model": "m", "content": [
             {"type": "tool_use", "id": "toolu_shot", "name": "screenshot", "input": {}}]}},
        {**base, "type": "user", "uuid": "s3", "parentUuid": "s2",
         "timestamp": "2026-02-11T11:00:02.000Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_shot",
             "content": [{"type": "text", "text": "SHOT-TAKEN"}, {"type": "image", "source": {
                 "type": "base64", "media_type": "image/png", "data": DATA}}]}]}},
        {**base, "type": "assistant", "uuid": "s4", "parentUuid": "s3",
         "timestamp": "2026-02-11T11:00:03.000Z",
         "message": {"id": "msg_t", "role": "assistant", "model": "m",
                     "content": [{"type": "text", "text": "A screen."}]}},
    ]  # fmt: skip
    root = tmp_path / "files"
    place(root, [*lines(), *map(json.dumps, shot)])
    user.ok(*IMPORT, str(root))
    (row,) = mains(user)
    user.connect(fake.env())
    fake.reply_text("Seen.")
    user.ok("q", "-i", row["id"], "And now?")
    (body,) = fake.requests
    results = [
        b for m in body["messages"] if isinstance(m["content"], list)
        for b in m["content"] if b.get("type") == "tool_result" and b["tool_use_id"] == "toolu_shot"
    ]  # fmt: skip
    (result,) = results
    kinds = [b["type"] for b in result["content"]]
    assert kinds == ["text", "image"] and result["content"][1]["source"]["data"] == DATA
    assert "SHOT-TAKEN" in result["content"][0]["text"]
    assert DATA[:200] not in json.dumps(result["content"][0])


CODEX = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "codex"


def test_a_codex_tool_outputs_screenshot_is_sent_as_an_image(
    user: User, fake: FakeMessages, tmp_path: Path
) -> None:
    root = tmp_path / "codex"
    shutil.copytree(CODEX, root)
    (rollout,) = root.rglob("rollout-*.jsonl")

    def item(second: int, payload: dict[str, object]) -> str:
        stamp = f"2026-05-11T09:00:{second:02d}.000Z"
        return json.dumps({"timestamp": stamp, "type": "response_item", "payload": payload})

    shot = [
        item(1, {"type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "SHOT-PROMPT look"}]}),
        item(2, {"type": "function_call", "name": "view_image", "call_id": "call_shot",
                 "arguments": json.dumps({"path": "s.png"})}),
        item(3, {"type": "function_call_output", "call_id": "call_shot", "output": [
            {"type": "input_text", "text": "SHOT-TAKEN"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{DATA}"}]}),
        item(4, {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "A screen."}]}),
    ]  # fmt: skip
    with rollout.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(shot) + "\n")
    user.ok("conversation", "import", "--from", "codex", str(root))
    (row,) = mains(user)
    user.connect(fake.env())
    fake.reply_text("Seen.")
    user.ok("q", "-i", row["id"], "And now?")
    (body,) = fake.requests
    (result,) = [
        b for m in body["messages"] if isinstance(m["content"], list)
        for b in m["content"] if b.get("type") == "tool_result" and b["tool_use_id"] == "call_shot"
    ]  # fmt: skip
    assert [b["type"] for b in result["content"]] == ["text", "image"]
    assert result["content"][1]["source"]["data"] == DATA
    assert "SHOT-TAKEN" in result["content"][0]["text"]
    assert json.dumps(body).count(DATA) == 1, "once, as the image: never as text besides"
