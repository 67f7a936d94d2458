"""The real Claude Code CLI (when `claude` is on PATH; skipped otherwise) with `jp mcp
install claude-code`'s entry: pointed at the loopback fake of the Messages API,
scripted to call search_conversations, it starts `jp mcp serve` from the entry in
its own user file and hands the model jp's answer."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import User
from tests.support.fake_messages import FakeMessages

CLAUDE = shutil.which("claude")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "claude-code"
SEARCH = "mcp__jp__search_conversations"

pytestmark = pytest.mark.skipif(CLAUDE is None, reason="the Claude Code CLI is not installed")


def _names(body: dict[str, Any]) -> list[str]:
    return [str(tool.get("name")) for tool in body.get("tools", [])]


def _last(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", [])[-1:])


def test_claude_code_calls_the_installed_server(user: User, tmp_path: Path) -> None:
    assert CLAUDE is not None
    user.ok("conversation", "import", "--from", "claude-code", str(FIXTURES))
    config = tmp_path / "claude-config"
    config.mkdir()
    user.env["CLAUDE_CONFIG_DIR"] = str(config)
    user.ok("mcp", "install", "claude-code")
    work = tmp_path / "work"
    work.mkdir()
    with FakeMessages() as fake:
        fake.reply_text("FOUND", when=lambda b: "conversations_with_hits" in _last(b), times=None)
        call = {"type": "tool_use", "name": SEARCH, "input": {"query": "zanzibar"}}
        fake.reply_blocks([call], when=lambda b: SEARCH in _names(b), times=None)
        # the server may still be starting (the mcp package's import): wait for it
        wait = {"type": "tool_use", "name": "WaitForMcpServers", "input": {}}
        fake.reply_blocks([wait], when=lambda b: "WaitForMcpServers" in _names(b), times=None)
        fake.reply_text("NO TOOL", times=None)
        env = {
            **user.env,
            **fake.env(),
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "ENABLE_TOOL_SEARCH": "false",  # every tool in the request, none deferred
        }
        proc = subprocess.run(
            [CLAUDE, "-p", "Where did I see zanzibar before?", "--allowedTools", SEARCH,
             "--output-format", "json", "--max-turns", "12"],
            env=env, cwd=work, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["result"] == "FOUND", proc.stdout[-2000:]
    (answered,) = [body for body in fake.requests if "conversations_with_hits" in _last(body)]
    text = _last(answered)
    assert "/home/me/shop" in text and "/home/me/blog" in text and "/home/me/garden" not in text
