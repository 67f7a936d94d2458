"""The README's "Using it" block runs as written: with a key (the real SDK
pointed at the loopback stand-in of the Messages API) and without one.  The
line that exports the key is a comment the reader fills in, so a block pasted
as it is never sets the key to a placeholder.

It runs in bash, from a folder whose `.venv` is the interpreter's own, with
a fresh HOME and none of jp's variables: `jp init` makes the default store,
which the block's `git` line reads.  A file on its standard input answers the
one question the block asks (`compact --continue`'s "Apply?"); every other
line reads /dev/null, as a terminal's `jp q` reads nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.harness import tool_use
from tests.support.fake_messages import FakeMessages
from tests.support.sandbox import ROOT, TRACEBACK, sealed_env

KEY_LINE = "# export ANTHROPIC_API_KEY="
VENV = Path(sys.prefix)


def using_it() -> str:
    """The first ```sh block after the README's "## Using it" heading."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Using it") :]
    start = section.index("```sh\n") + len("```sh\n")
    return section[start : section.index("```", start)]


def run_block(
    tmp_path: Path, block: str, extra: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    if not (VENV / "bin" / "activate").exists():
        pytest.skip("the tests do not run from a virtual environment")
    work = tmp_path / "checkout"
    work.mkdir()
    (work / ".venv").symlink_to(VENV)
    # as on a terminal, where `jp q` reads no standard input (a piped one is
    # attached): only the one question the block asks reads the answer
    (work / "answers").write_text("y\n")
    lines = [
        ln.split("#", 1)[0].rstrip() + " < answers" if "--continue" in ln else ln
        for ln in block.splitlines()
    ]
    (work / "block.sh").write_text("\n".join(lines) + "\n")
    env = sealed_env(
        tmp_path, tmp_path / "unused", tmp_path / "unused", "Reader", "r@example.invalid"
    )
    for name in (
        "JP_STORE",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "GIT_CONFIG_GLOBAL",
    ):
        env.pop(name)
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if VENV.as_posix() not in p
    )
    env.update(extra)
    Path(env["HOME"]).mkdir()
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "block.sh"],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert TRACEBACK not in proc.stderr, proc.stderr
    assert proc.returncode == 0, f"the block stopped:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_the_block_holds_what_it_promises() -> None:
    block = using_it()
    assert sum(line.startswith(KEY_LINE) for line in block.splitlines()) == 1
    assert "optional" in next(ln for ln in block.splitlines() if ln.startswith(KEY_LINE))
    for command in ("jp init", "jp q --new", "compact --interactive", "--continue", "jp undo"):
        assert command in block


def test_without_a_key_the_offline_model_answers(tmp_path: Path) -> None:
    proc = run_block(tmp_path, using_it(), {})
    assert "offline model" in proc.stdout
    assert "Apply? [y/N]" in proc.stderr and "Applied to" in proc.stdout
    assert "Undid operation" in proc.stdout and "compact --continue" in proc.stdout
    assert "is healthy" in proc.stdout
    assert (tmp_path / "home" / ".local/share/jp/store.git").is_dir()
    assert (tmp_path / "home" / "conversations.git" / "refs" / "conversations").is_dir()


def test_with_a_key_the_model_answers(tmp_path: Path) -> None:
    with FakeMessages(api_key="sk-ant-reader-key") as fake:
        fake.reply_blocks(
            [
                {"type": "text", "text": "Proposing."},
                tool_use("propose_compaction", from_turn=1, to_turn=1, reasoning="strip"),
            ],
            when={"last_user_contains": "keep the last 2"},
        )
        fake.reply_text("An answer from the stand-in.", times=None)
        key = {"ANTHROPIC_API_KEY": "sk-ant-reader-key"}  # the reader's own export
        proc = run_block(tmp_path, using_it(), {"ANTHROPIC_BASE_URL": fake.url, **key})
        bodies = list(fake.requests)
    assert "An answer from the stand-in." in proc.stdout
    assert "offline model" not in proc.stdout + proc.stderr
    assert {b["model"] for b in bodies} == {"claude-sonnet-4-5"}
    asked = [b for b in bodies if "Which crate reads TOML?" in json.dumps(b["messages"])]
    assert "answer in one line" in json.dumps(asked[0]["system"]), "-s reaches the model"
    later = bodies[bodies.index(asked[0]) + 1 :]
    assert later and all("answer in one line" not in json.dumps(b.get("system")) for b in later)
    assert "Applied to" in proc.stdout and "Undid operation" in proc.stdout
