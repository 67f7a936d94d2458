"""An imported session's tool result image reaches the model as an image, inside its
``tool_result``, through the real SDK and the loopback fake (never as base64 text)."""

from __future__ import annotations

import base64
import json
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
