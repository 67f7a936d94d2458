"""`jp remote` through the real CLI: a password in a URL reaches git's config but no
output, and a URL that would make git run a command is never configured."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.reliability.harness import Sandbox

SECRET = "ghp-not-a-real-token-5e1f"
URL = f"https://ann:{SECRET}@git.example.invalid/team/jp.git"


def _config(box: Sandbox, key: str) -> str:
    proc = subprocess.run(
        ["git", "--git-dir", str(box.store), "config", "--get", key],
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip()


def test_a_password_in_the_url_is_used_by_git_but_never_shown(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    assert box.run("init").returncode == 0
    shown = [box.run("remote", "add", "team", URL)]
    shown.append(box.run("remote", "list"))
    shown.append(box.run("-F", "json", "remote", "list"))
    shown.append(box.run("remote", "add", "team", "/srv/elsewhere.git"))  # name taken
    for proc in shown:
        assert SECRET not in proc.stdout + proc.stderr, proc
    assert shown[0].returncode == 0 and shown[1].returncode == 0
    assert "https://ann:***@git.example.invalid/team/jp.git" in shown[1].stdout
    assert (
        json.loads(shown[2].stdout)[0]["url"] == "https://ann:***@git.example.invalid/team/jp.git"
    )
    assert shown[3].returncode != 0 and shown[3].stderr.startswith("error: ")
    assert _config(box, "remote.team.url") == URL  # what git authenticates with


def test_a_url_that_runs_a_command_or_says_nothing_is_refused(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    assert box.run("init").returncode == 0
    marker = tmp_path / "ran"
    for url in (f"ext::sh -c touch% {marker}", "fd::7", f"-oProxyCommand=touch {marker}", ""):
        proc = box.run("remote", "add", "--", "bad", url)
        assert proc.returncode != 0, url
        assert proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) <= 2, proc
        assert "Traceback" not in proc.stderr
    assert _config(box, "remote.bad.url") == ""
    assert box.run("remote", "list").stdout.count("bad") == 0
    assert box.run("push", "bad").returncode != 0
    assert not marker.exists()
