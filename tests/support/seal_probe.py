"""Run by tests/unit/test_sealed_environment.py in a pytest of its own whose outer
environment is a developer's at its worst (see HOSTILE there); every check here
fails if any of it reaches a test.  Not collected by a plain `pytest` run (the
name does not start with ``test_``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2

from tests.conftest import EMAIL, NAME
from tests.e2e.harness import User

LEAK = "DEVELOPER-LEAK"


def test_the_environment_holds_nothing_of_the_developer() -> None:
    leaked = {k: v for k, v in os.environ.items() if LEAK in v or LEAK in k}
    assert not leaked
    assert "ANTHROPIC_API_KEY" not in os.environ and "JP_STORE" not in os.environ
    listing = subprocess.run(["env"], capture_output=True, text=True, check=True).stdout
    assert LEAK not in listing and "ANTHROPIC_API_KEY" not in listing


def test_git_reads_no_developer_configuration(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("x\n")
    subprocess.run(["git", "-C", str(repo), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "one"], check=True)
    who = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%an <%ae>|%cn|%D"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert who == f"{NAME} <{EMAIL}>|{NAME}|HEAD -> main"
    config = pygit2.Repository(str(repo)).config
    assert config["user.name"] == NAME
    assert "core.hookspath" not in {e.name.lower() for e in config}


def test_jp_started_by_the_harness_sees_no_api_key(tmp_path: Path) -> None:
    user = User(tmp_path)
    assert not any(LEAK in v for v in user.env.values())
    user.ok("init")
    out = user.ok("q", "--new", "which model answers?")
    assert "offline model" in out, out  # with the developer's key it would call anthropic
