"""The real Claude Code and Codex CLIs (each when on PATH; skipped otherwise) resume
what `jp conversation export --to` wrote of a session continued in jp (a prompt with an
attached image, a tool call and its result, an answer), pointed at a loopback stand-in of their API: the
resumed request carries jp's turns in order before the new prompt.  Codex's resume list
(its app server's thread/list, which the `codex resume` picker shows) holds the exported
session before Codex ever resumed it, in a Codex home whose database already exists.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import User, tool_use
from tests.e2e.test_sessions_continuity import MAIN, lines
from tests.e2e.test_sessions_giveback import TOOLS
from tests.support.fake_messages import FakeMessages
from tests.support.fake_responses import FakeResponses

CLAUDE = shutil.which("claude")
PIXEL = Path(__file__).parents[1] / "support" / "media" / "pixel.png"
PIXEL_DATA = base64.b64encode(PIXEL.read_bytes()).decode()
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


def _sent(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", []))


@pytest.mark.skipif(CLAUDE is None, reason="the Claude Code CLI is not installed")
def test_claude_code_resumes_a_session_continued_in_jp(user: User, tmp_path: Path) -> None:
    assert CLAUDE is not None
    work = tmp_path / "demo"
    work.mkdir()
    project = re.sub(r"[^A-Za-z0-9]", "-", str(work))
    files = tmp_path / "files"
    path = files / project / MAIN.split("/")[1]
    path.parent.mkdir(parents=True)
    text = "\n".join(lines()).replace("/home/me/demo", str(work))
    path.write_text(text + "\n", encoding="utf-8")
    user.ok("conversation", "import", "--from", "claude-code", str(files))
    (row,) = [r for r in user.ls() if r.get("imported_from")]
    with FakeMessages() as fake:
        user.connect(fake.env())
        user.config(TOOLS)
        fake.reply_blocks(
            [{"type": "text", "text": "Echoing."}, tool_use("echo", text="JP-TOOL")],
            when={"last_user_contains": "JP-SIDE"},
        )
        fake.reply_text("JP-ANSWER given back.", when={"last_user_contains": "ECHO:"})
        user.ok("q", "-i", row["id"], "-a", str(PIXEL), "JP-SIDE question")
        config = tmp_path / "claude-config"
        config.mkdir()
        user.ok("conversation", "export", "--to", "claude-code", row["id"],
                "-o", str(config / "projects"))  # fmt: skip
        fake.reply_text("RESUMED", times=None)
        env = {**user.env, **fake.env(), **QUIET, "CLAUDE_CONFIG_DIR": str(config)}
        proc = subprocess.run(
            [CLAUDE, "-p", "CC-NEXT prompt", "--resume", path.stem, "--allowedTools", "Read",
             "--output-format", "json", "--max-turns", "2"],
            env=env, cwd=work, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (resumed,) = [b for b in fake.requests if "CC-NEXT" in _sent(b)][:1]
    sent = _sent(resumed)
    order = ["JP-SIDE question", '"tool_use"', "ECHO:JP-TOOL", "JP-ANSWER given back.", "CC-NEXT"]
    assert [sent.find(x) for x in order] == sorted(sent.find(x) for x in order), sent[-3000:]
    assert -1 not in [sent.find(x) for x in order], sent[-3000:]
    (asked,) = [m for m in resumed["messages"] if "JP-SIDE question" in json.dumps(m)]
    images = [b for b in asked["content"] if isinstance(b, dict) and b.get("type") == "image"]
    assert [b["source"]["data"] for b in images] == [PIXEL_DATA], "jp's image, as an image"


CODEX = shutil.which("codex")
CODEX_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "codex"


def _codex(home: Path, work: Path, env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    """`codex exec ARGS` run in ``work`` against the stand-in (``openai_base_url``): the
    requests it sent."""
    assert CODEX is not None
    with FakeResponses() as fake:
        fake.reply_text("CODEX-ANSWER")
        proc = subprocess.run(
            [CODEX, "exec", "--skip-git-repo-check", "-c", f'openai_base_url="{fake.url}/v1"',
             *args],
            env={**env, "CODEX_HOME": str(home), "CODEX_API_KEY": "test-key"},
            cwd=work, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return fake.requests


def _listed(home: Path, env: dict[str, str]) -> list[str]:
    """The ids of the sessions Codex's resume list shows (its app server's thread/list,
    which the `codex resume` picker asks)."""
    assert CODEX is not None
    asks = [
        {"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "jp", "version": "1"}}},
        {"method": "initialized"},
        {"id": 1, "method": "thread/list", "params": {}},
    ]
    server = subprocess.Popen(
        [CODEX, "app-server"], env={**env, "CODEX_HOME": str(home)}, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    try:
        for ask in asks:
            server.stdin.write(json.dumps(ask) + "\n")
            server.stdin.flush()
        for line in server.stdout:
            answer = json.loads(line)
            if answer.get("id") == 1:
                return [str(t["id"]) for t in answer["result"]["data"]]
    finally:
        server.kill()
        server.wait()
    raise AssertionError("codex app-server gave no thread/list answer")


@pytest.mark.skipif(CODEX is None, reason="the Codex CLI is not installed")
def test_codex_resumes_and_lists_a_session_continued_in_jp(user: User, tmp_path: Path) -> None:
    work = tmp_path / "demo"
    work.mkdir()
    files = tmp_path / "files"
    shutil.copytree(CODEX_FIXTURE, files)
    for path in files.rglob("*.jsonl"):
        path.write_text(path.read_text(encoding="utf-8").replace("/home/me/demo", str(work)))
    user.ok("conversation", "import", "--from", "codex", str(files))
    (row,) = [r for r in user.ls() if r.get("imported_from")]
    session = row["imported_from"]["session"]
    home = tmp_path / "codex-home"
    home.mkdir()
    _codex(home, work, user.env, "a session of Codex's own first")  # its database exists
    with FakeMessages() as fake:
        user.connect(fake.env())
        user.config(TOOLS)
        fake.reply_blocks(
            [tool_use("echo", text="JP-TOOL")], when={"last_user_contains": "JP-SIDE"}
        )
        fake.reply_text("JP-ANSWER given back.", when={"last_user_contains": "ECHO:"})
        user.ok("q", "-i", row["id"], "-a", str(PIXEL), "JP-SIDE question")
    user.ok("conversation", "export", "--to", "codex", row["id"], "-o", str(home))
    assert session in _listed(home, user.env)  # listed before Codex resumed it

    (resumed,) = _codex(home, work, user.env, "resume", session, "CODEX-NEXT prompt")
    sent = json.dumps(resumed["input"])
    order = ["JP-SIDE question", '"function_call"', "ECHO:JP-TOOL", "JP-ANSWER given back.",
             "CODEX-NEXT"]  # fmt: skip
    found = [sent.find(x) for x in order]
    assert -1 not in found and found == sorted(found), sent[-3000:]
    (asked,) = [m for m in resumed["input"] if "JP-SIDE question" in json.dumps(m)]
    images = [c["image_url"] for c in asked["content"] if c.get("type") == "input_image"]
    assert images == [f"data:image/png;base64,{PIXEL_DATA}"], "jp's image, as an image"
