"""A command tool's output that is not UTF-8, or is huge, ends no turn: the
result is recorded, decoded with replacement and cut to the event limit."""

from __future__ import annotations

import json
import sys

from tests.e2e.harness import User, tool_use
from tests.support.fake_messages import FakeMessages

LATIN1 = "import sys; sys.stdout.buffer.write('Jos\\xe9 Mu\\xf1oz <jose@example.org>\\n'.encode('latin-1'))"
HUGE = "import sys\nfor _ in range(300): sys.stdout.write('x' * 1_000_000)"


def tool_config(code: str) -> str:
    command = json.dumps([sys.executable, "-c", code])
    return (
        '[assistant.model]\nid = "anthropic/claude-test"\n\n'
        f"[conversation.tools.gitlog]\ncommand = {command}\nconfirm = false\n"
    )


def ask_tool(user: User, fake: FakeMessages, code: str) -> tuple[str, dict[str, object]]:
    user.config(tool_config(code))
    fake.reply_blocks([tool_use("gitlog")], {"last_user_contains": "who wrote it"})
    fake.reply_text("Read it.")
    proc = user.run("q", "--new", "who wrote it")
    assert proc.returncode == 0, proc.stderr
    cid = user.active()
    (result,) = [e for e in user.events(cid) if e["type"] == "tool_call_response"]
    assert user.kinds(cid)[-1] == "chat_response", "the turn went on after the tool"
    return proc.stderr, result


def test_a_latin1_tool_output_is_recorded_with_replacement(
    online: User, fake: FakeMessages
) -> None:
    _, result = ask_tool(online, fake, LATIN1)
    content = str(result["content"])
    assert content.startswith("Jos\ufffd Mu\ufffdoz <jose@example.org>")
    assert "not UTF-8" in content and result.get("is_error") is not True
    sent = json.dumps(fake.requests[-1])
    assert "jose@example.org" in sent, "the model read the result"


def test_a_300_mb_tool_output_is_read_bounded_and_cut(online: User, fake: FakeMessages) -> None:
    _, result = ask_tool(online, fake, HUGE)
    content = str(result["content"])
    assert "[jp: the output was 300000000 bytes; only the first" in content
    assert len(content.encode()) <= 10 * 1024 * 1024
