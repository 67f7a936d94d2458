"""A first pull of many conversations prints one summary line, and `-v` names each."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.e2e.harness import User


def test_a_long_pull_is_one_line_and_v_names_each(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    laptop, desktop, third = (
        User(tmp_path, "laptop"),
        User(tmp_path, "desktop"),
        User(tmp_path, "third"),
    )
    for person in (laptop, desktop, third):
        person.ok("init")
        person.ok("remote", "add", "origin", str(remote))
    ids = []
    for n in range(12):
        laptop.ok("q", "--new", f"conversation {n}")
        ids.append(laptop.active())
    pushed = laptop.ok("push")
    assert pushed.strip().splitlines()[-1].startswith("origin: 12 sent"), pushed
    out = desktop.ok("pull")
    assert out.splitlines() == ["origin: 12 new (`-v` names each)"], out
    assert sorted(r["id"] for r in desktop.ls()) == sorted(ids), "all 12 were pulled"
    verbose = third.ok("pull", "-v")
    assert sum(f"{cid}: new from origin" in verbose for cid in ids) == 12


def test_a_declined_push_says_the_remotes_own_reason(tmp_path: Path) -> None:
    remote = tmp_path / "strict.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text('#!/bin/sh\necho "rejected by policy: no pushes on Tuesdays" >&2\nexit 1\n')
    hook.chmod(0o755)
    user = User(tmp_path, "writer")
    user.ok("init")
    user.ok("remote", "add", "origin", str(remote))
    user.ok("q", "--new", "hello")
    proc = user.fail("push", code=1)
    assert "pre-receive hook declined" in proc.stderr
    assert "the remote said: rejected by policy: no pushes on Tuesdays" in proc.stderr
