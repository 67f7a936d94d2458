"""The API key never appears in a commit, a note, a reflog, a local file, an
output line or an error message, even when the server echoes it back."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

from tests.reliability.harness import RUST, RUST_ID, Sandbox
from tests.support.fake_messages import FakeMessages


def test_the_api_key_is_never_written_or_shown(tmp_path: Path) -> None:
    key = "sk-ant-api03-REL" + secrets.token_hex(16)
    outputs: list[str] = []
    with FakeMessages() as fake:
        box = Sandbox(tmp_path / "box", env={**fake.env(), "ANTHROPIC_API_KEY": key})
        box.config_file.write_text('[assistant.model]\nid = "anthropic/claude-test"\n')

        def run(*args: str, env: dict[str, str] | None = None) -> int:
            proc = box.run(*args, env=env)
            outputs.extend([proc.stdout, proc.stderr])
            return proc.returncode

        assert run("init") == 0
        assert run("conversation", "import", "--activate", str(RUST)) == 0
        fake.reply_text("Hello.")
        assert run("q", "hello") == 0
        # the server echoes the key in its error; jp must not repeat it
        fake.reply_error(401, "authentication_error", f"invalid x-api-key: {key}")
        assert run("q", "again") == 4
        assert "[redacted]" in outputs[-1], outputs[-1]
        fake.reply_error(400, "invalid_request_error", f"bad key {key} in summary")
        assert run("conversation", "compact", "--turn", "2..3", "--summarize", "-y") != 0
        fake.reply_text("A summary of turns two and three.")
        assert run("conversation", "compact", "--turn", "2..3", "--summarize", "-y") == 0
        assert run("--format", "json", "conversation", "show", RUST_ID) == 0
        assert run("config", "show") == 0
        assert run("conversation", "export", RUST_ID, "-o", str(box.root / "work" / "out")) == 0
        unreachable = {"JP_DEBUG": "1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
        assert run("--cfg", "assistant.max_retries=0", "q", "debug", env=unreachable)
        sent = [h.get("x-api-key", "") + h.get("authorization", "") for h in fake.headers]
        assert any(key in h for h in sent), "the key was not in use"

    for text in outputs:
        assert key not in text, text
    for path in box.root.rglob("*"):  # store, reflogs, cache, state, config, export
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    objects = subprocess.run(  # loose objects are compressed: read every object
        ["git", "--git-dir", str(box.store), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    assert len(objects) > 1000
    assert key.encode() not in objects
