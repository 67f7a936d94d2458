"""`jp status`: the store and what chose it, the remotes, the active conversation,
the model, and anything pending, with the command that deals with it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.e2e.harness import User, write_conversation


def test_status_names_store_remote_active_and_pending(user: User, tmp_path: Path) -> None:
    out = user.ok("status")
    assert f"Store:   {user.store} (from JP_STORE)" in out
    assert "Remotes: none" in out and "Active:  none" in out and "Pending: nothing" in out
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--bare", "-q", str(remote)], check=True)
    user.ok("remote", "add", "origin", str(remote))
    user.ok("q", "--new", "hello status")
    user.ok("conversation", "edit", "--title", "Status check")
    cid = user.active()
    lock = user.store / "refs" / "conversations" / f"{cid}.lock"
    lock.write_text("")
    os.utime(lock, (1_000_000_000, 1_000_000_000))  # left by a killed writer long ago
    before = user.refs()
    out = user.ok("status")
    assert f"Remotes: origin {remote}" in out
    assert f"Active:  {cid}: Status check" in out
    assert "Model:   offline/jp" in out
    assert "Pending: 1" in out and f"{cid}.lock" in out and "jp doctor --fix" in out
    assert user.refs() == before and lock.exists(), "status changes nothing"
    data = json.loads(user.ok("--format", "json", "status"))
    assert data["active"] == cid and data["remotes"] == [{"name": "origin", "url": str(remote)}]
    assert [p["check"] for p in data["pending"]] == ["lock"]


def test_status_without_a_store_says_how_to_make_one(user: User, tmp_path: Path) -> None:
    proc = user.run("status", env={"JP_STORE": str(tmp_path / "none.git")})
    assert proc.returncode == 0, proc.stderr
    assert "not created yet" in proc.stdout and "jp init" in proc.stdout
    assert not (tmp_path / "none.git").exists()


def test_status_shows_an_open_review_and_what_to_run_next(user: User, tmp_path: Path) -> None:
    source = user.import_(write_conversation(tmp_path / "17800000502-five", 5))
    user.ok("conversation", "use", source)
    user.ok("conversation", "compact", "--interactive")
    review = user.active()
    out = user.ok("status")
    assert f"Review:  {review} is a compaction review of {source}, still open (active)" in out
    for step in ('jp q "..."', "compact --continue", "compact --abort"):
        assert step in out, out
    data = json.loads(user.ok("--format", "json", "status"))
    assert data["reviews"] == [{"id": review, "source_id": source, "active": True}]
    user.ok("conversation", "use", source)
    assert f"`jp conversation use {review}` first" in user.ok("status")
    user.ok("conversation", "use", review)
    user.ok("conversation", "compact", "--abort")
    assert "Review:" not in user.ok("status")
    assert json.loads(user.ok("--format", "json", "status"))["reviews"] == []
